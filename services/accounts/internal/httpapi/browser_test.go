package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/browsertest"
	"github.com/pcourt/pcourt/services/accounts/internal/httpapi"
)

// look shows the page in every look (browsertest.Looks: 1280 and 375 px
// wide, light and dark), fails the test where a person would trip (the
// page wider than the screen, a control without a name, text under 4.5:1
// of contrast), and saves each look as docs/account/<name>-<look>.png
// when PC_ACCOUNT_SCREENSHOTS=1.
func look(t *testing.T, browser context.Context, name string) {
	t.Helper()
	browsertest.EachLook(t, browser, "the account's "+name+" page", func(l browsertest.Look) {
		shot, err := chromedp.Run(browser, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NotEmpty(t, shot)
		if os.Getenv("PC_ACCOUNT_SCREENSHOTS") == "1" {
			dir := filepath.Join("..", "..", "..", "..", "docs", "account")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			browsertest.SavePNG(t, shot, filepath.Join(dir, name+"-"+l.Name()+".png"))
		}
	})
}

func credentials(t *testing.T, browser context.Context, id webauthn.AuthenticatorID) []*webauthn.Credential {
	t.Helper()
	var creds []*webauthn.Credential
	require.NoError(t, chromedp.Do(browser, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		res, err := cdp.Call(ctx, target, webauthn.GetCredentials, webauthn.GetCredentialsParams{AuthenticatorID: id})
		creds = res.Credentials
		return err
	})))
	return creds
}

func cookies(t *testing.T, browser context.Context, url string) map[string]*network.Cookie {
	t.Helper()
	out := map[string]*network.Cookie{}
	require.NoError(t, chromedp.Do(browser, chromedp.Func(func(ctx context.Context, target *chromedp.Target) error {
		res, err := cdp.Call(ctx, target, network.GetCookies, network.GetCookiesParams{URLs: []string{url}})
		for _, c := range res.Cookies {
			out[c.Name] = c
		}
		return err
	})))
	return out
}

// sent is a request the browser sent: its body and its Cookie header.
type sent struct {
	body   []byte
	cookie string
}

// watchPosts records every POST the browser sends to url, from now until
// the test ends: the body from Network.requestWillBeSent, the cookies
// (HttpOnly ones too) from its extra info, matched by request id.
func watchPosts(t *testing.T, browser context.Context, url string) func() (sent, bool) {
	t.Helper()
	var target *chromedp.Target
	require.NoError(t, chromedp.Do(browser, chromedp.Func(func(_ context.Context, tg *chromedp.Target) error {
		target = tg
		return nil
	})))
	ctx, cancel := context.WithCancel(browser)
	t.Cleanup(cancel)
	var mu sync.Mutex
	bodies, cookieHeaders := map[network.RequestID][]byte{}, map[network.RequestID]string{}
	requests := cdp.Events(ctx, target, network.RequestWillBeSent)
	extras := cdp.Events(ctx, target, network.RequestWillBeSentExtraInfo)
	go func() {
		for e, err := range requests {
			if err != nil {
				return
			}
			if e.Request.Method == http.MethodPost && e.Request.URL == url {
				var body []byte
				for _, part := range e.Request.PostDataEntries {
					body = append(body, part.Bytes...)
				}
				mu.Lock()
				bodies[e.RequestID] = body
				mu.Unlock()
			}
		}
	}()
	go func() {
		for e, err := range extras {
			if err != nil {
				return
			}
			for k, v := range e.Headers {
				if s, ok := v.(string); ok && strings.EqualFold(k, "cookie") {
					mu.Lock()
					cookieHeaders[e.RequestID] = s
					mu.Unlock()
				}
			}
		}
	}()
	return func() (sent, bool) {
		mu.Lock()
		defer mu.Unlock()
		for id, body := range bodies {
			if c, ok := cookieHeaders[id]; ok {
				return sent{body: body, cookie: c}, true
			}
		}
		return sent{}, false
	}
}

func text(t *testing.T, browser context.Context, sel string) string {
	t.Helper()
	got, err := chromedp.Run(browser, chromedp.Text(sel))
	require.NoError(t, err)
	return got
}

// A person registers with a passkey in headless Chromium, the browser's
// own virtual authenticator making it: signed in at once, the person
// signs out, and signs in again with the passkey alone (no link, no
// address typed: the credential names the account), after confirming
// its address with a code sent through the SMTP server; signed out again,
// a code sent to the confirmed address signs in too. Every page is checked
// in every look, and a refused sign-up shows its reason beside the form.
func TestAPersonRegistersWithAPasskeyInChromium(t *testing.T) {
	bin := browsertest.Chromium(t, "people's account pages")
	s := newPeopleStack(t)
	limit := 150 * time.Second
	if os.Getenv("PC_ACCOUNT_SCREENSHOTS") == "1" {
		limit = 5 * time.Minute
	}
	browser := browsertest.New(t, bin, limit)
	authenticator := browsertest.AddPlatformAuthenticator(t, browser)

	// Sign up: a name and an address, then the passkey.
	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(s.url+"/account/signup"), chromedp.WaitVisible(`#signup`)))
	look(t, browser, "signup")
	require.NoError(t, chromedp.Do(browser,
		chromedp.SendKeys(`#display-name`, "Ada Lovelace"),
		chromedp.SendKeys(`#email`, "ada@example.com"),
		chromedp.Click(`#signup-button`),
		chromedp.WaitVisible(`main[data-page="account"]`),
	))
	location, err := chromedp.Run(browser, chromedp.Location())
	require.NoError(t, err)
	require.Equal(t, s.url+"/account/", location)
	require.Equal(t, "Ada Lovelace", text(t, browser, `#account-name`))
	require.Equal(t, "ada@example.com", text(t, browser, `#account-email`))
	accountID := text(t, browser, `#account-id`)
	require.Regexp(t, `^acct_[A-Z2-7]{26}$`, accountID)
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(`#email-unconfirmed`)))
	look(t, browser, "account")

	// Confirm the address: a code from the account page, through the
	// SMTP server, typed back.
	browsertest.ClickThrough(t, browser, `#confirm-request button`)
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(`#confirm-verify`)))
	look(t, browser, "account-confirm")
	to, code := s.codeFrom(t, 1)
	require.Equal(t, "ada@example.com", to)
	require.NoError(t, chromedp.Do(browser, chromedp.SendKeys(`#confirm-code`, code)))
	browsertest.ClickThrough(t, browser, `#confirm-verify button`)
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(`#email-confirmed`)))
	confirmed, err := chromedp.Run(browser, chromedp.Evaluate[bool](`document.querySelector('#confirm') === null`))
	require.NoError(t, err)
	require.True(t, confirmed, "nothing left to confirm")

	// The passkey lives in the authenticator, discoverable, for this
	// relying party, its user handle the account id.
	creds := credentials(t, browser, authenticator)
	require.Len(t, creds, 1)
	require.True(t, creds[0].IsResidentCredential)
	require.Equal(t, "localhost", creds[0].RpID)
	require.Equal(t, accountID, string(creds[0].UserHandle))
	stored, err := s.store.Get(context.Background(), accountID)
	require.NoError(t, err)
	require.Len(t, stored.Passkeys, 1)
	require.Equal(t, creds[0].CredentialID, stored.Passkeys[0].CredentialID)

	// The session's cookie: no script reads it, no other site's request
	// carries it, the whole site sees it (the website routes and hosted
	// pages of the other services take it); the ceremony's is gone.
	jar := cookies(t, browser, s.url+"/account/")
	session := jar[httpapi.SessionCookieName]
	require.NotNil(t, session)
	require.True(t, session.HTTPOnly)
	require.Equal(t, network.CookieSameSiteStrict, session.SameSite)
	require.Equal(t, "/", session.Path)
	require.NotContains(t, jar, httpapi.CeremonyCookieName, "the ceremony was answered")
	visible, err := chromedp.Run(browser, chromedp.Evaluate[string](`document.cookie`))
	require.NoError(t, err)
	require.Empty(t, visible)

	// Sign out: the cookie the browser held signs nothing in afterwards.
	browsertest.ClickThrough(t, browser, `#signout button`)
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(`main[data-page="signed-out"]`)))
	look(t, browser, "signed-out")
	copied := s.browser(t)
	copied.setCookie(t, httpapi.SessionCookieName, session.Value)
	require.Equal(t, "/account/signin", copied.get(t, "/account/").location, "the session ended on the server")

	// Sign in again with the passkey alone.
	browsertest.ClickThrough(t, browser, `#signin-again`)
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(`#passkey-button`)))
	look(t, browser, "signin")
	finished := watchPosts(t, browser, s.url+"/account/signin")
	require.NoError(t, chromedp.Do(browser, chromedp.Click(`#passkey-button`), chromedp.WaitVisible(`main[data-page="account"]`)))
	require.Equal(t, accountID, text(t, browser, `#account-id`))
	require.Contains(t, text(t, browser, `#signed-in-with`), "with a passkey")
	again := cookies(t, browser, s.url+"/account/")[httpapi.SessionCookieName]
	require.NotNil(t, again)
	require.NotEqual(t, session.Value, again.Value, "a new session")
	stored, err = s.store.Get(context.Background(), accountID)
	require.NoError(t, err)
	require.False(t, stored.Passkeys[0].LastUsedAt.IsZero(), "the passkey signed in")
	require.Len(t, credentials(t, browser, authenticator), 1, "no second passkey was made")

	// The browser's own answer, sent again with the very cookies it went
	// with, finds its challenge spent.
	var answer sent
	deadline := time.Now().Add(10 * time.Second)
	for ok := false; !ok; answer, ok = finished() {
		require.True(t, time.Now().Before(deadline), "the browser's sign-in answer was not seen")
		time.Sleep(20 * time.Millisecond)
	}
	require.Contains(t, answer.cookie, httpapi.CeremonyCookieName+"=")
	req, err := http.NewRequest(http.MethodPost, s.url+"/account/signin", bytes.NewReader(answer.body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", s.origin)
	req.Header.Set("Cookie", answer.cookie)
	replayed, body := apitest.Do(t, http.DefaultClient, req)
	require.Equal(t, http.StatusBadRequest, replayed.StatusCode)
	require.Contains(t, string(body), `"code":"ceremony_expired"`)
	for _, line := range replayed.Header.Values("Set-Cookie") {
		require.False(t, strings.HasPrefix(line, httpapi.SessionCookieName+"="), "no session for the replay: %s", line)
	}

	// Signed out once more, a code sent to the address signs in.
	browsertest.ClickThrough(t, browser, `#signout button`)
	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(s.url+"/account/signin"), chromedp.WaitVisible(`#code-request`)))
	require.NoError(t, chromedp.Do(browser, chromedp.SendKeys(`#code-email`, "ada@example.com")))
	browsertest.ClickThrough(t, browser, `#code-request button`)
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(`#code-verify`)))
	look(t, browser, "code")
	to, code = s.codeFrom(t, 2)
	require.Equal(t, "ada@example.com", to)
	require.NoError(t, chromedp.Do(browser, chromedp.SendKeys(`#code`, "000000")))
	resp, err := chromedp.RunResponse(browser, chromedp.Click(`#code-verify button`))
	require.NoError(t, err)
	require.EqualValues(t, http.StatusBadRequest, resp.Status)
	require.Contains(t, text(t, browser, `#code-error`), "4 attempts left", "a wrong code is counted, beside the field")
	// The refused form came back empty: the code is typed afresh.
	require.NoError(t, chromedp.Do(browser, chromedp.SendKeys(`#code`, code)))
	browsertest.ClickThrough(t, browser, `#code-verify button`)
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(`#email-confirmed`)))
	require.Contains(t, text(t, browser, `#signed-in-with`), "with a code")

	// A second sign-up with the address is refused beside the form, and
	// makes no passkey.
	browsertest.ClickThrough(t, browser, `#signout button`)
	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(s.url+"/account/signup"), chromedp.WaitVisible(`#signup`),
		chromedp.SendKeys(`#display-name`, "Someone Else"), chromedp.SendKeys(`#email`, "ADA@example.com"),
		chromedp.Click(`#signup-button`), chromedp.WaitVisible(`#signup-error`)))
	require.Contains(t, text(t, browser, `#signup-error`), "E-mail address in use", "the address is confirmed, so claimed")
	require.Len(t, credentials(t, browser, authenticator), 1)
	look(t, browser, "signup-refused")

	// Nothing of this sign-in reached a script: the page's own cookies
	// are HttpOnly, and no answer of the pages is kept by a cache.
	plain, err := http.Get(s.url + "/account/signin")
	require.NoError(t, err)
	plain.Body.Close()
	require.Equal(t, "private, no-store", plain.Header.Get("Cache-Control"))
}
