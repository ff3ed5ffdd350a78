package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/browsertest"
)

// The acceptance walk for people, through the edge of the whole
// stack, in headless Chromium with a virtual platform authenticator: a
// person signs up with a passkey, opens the respondent invitation a
// claimant's partner delivered, joins the case with their account, and
// acts on it with their account session, on the hosted page and on the
// website routes from the site's own page; signed out and signed in again
// with the passkey alone, they find the case and act again, with no link.
func TestAPersonJoinsACaseFromAnInvitationWithTheirAccount(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every service; skipped with -short")
	}
	bin := browsertest.Chromium(t, "people's accounts through the stack")
	st := startStack(t, "-public-host", "localhost")
	_, port, _ := strings.Cut(st.edge, ":")
	site := "http://localhost:" + port // a passkey's relying party is a domain name
	p := newProbe(t, st)
	orch := p.mint(t, "tenant-dev", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-a", "")

	// The claimant's partner opens a case against a respondent it does
	// not act for: the respondent's one-time link is shown once.
	id, loginPath := p.openHosted(t, orch)
	link := site + loginPath
	require.Contains(t, link, "#login=")

	browser := browsertest.New(t, bin, 3*time.Minute)
	browsertest.AddPlatformAuthenticator(t, browser)

	// Sign up with a passkey.
	require.NoError(t, chromedp.Do(browser,
		chromedp.Navigate(site+"/account/signup"), chromedp.WaitVisible(`#signup`),
		chromedp.SendKeys(`#display-name`, "Bea Respondent"),
		chromedp.SendKeys(`#email`, "bea@example.com"),
		chromedp.Click(`#signup-button`),
		chromedp.WaitVisible(`main[data-page="account"]`),
	))
	accountID, err := chromedp.Run(browser, chromedp.Text(`#account-id`))
	require.NoError(t, err)

	// The invitation: the page previews it, the person signs in with it,
	// and joins with their account. The case opens in cases once its
	// case-opened fact is applied; until then the link is as unknown as
	// a wrong one, so the link is opened until the page can confirm it.
	require.Eventually(t, func() bool {
		if err := chromedp.Do(browser, chromedp.Navigate(site+"/account/"), browsertest.OpenLink(link)); err != nil {
			return false
		}
		for range 30 { // the page's module posts the link to the preview, which answers the confirmation page
			confirm, err := chromedp.Run(browser, chromedp.Evaluate[bool](`document.querySelector('main[data-page="confirm"]') !== null`))
			if err == nil && confirm {
				return true
			}
			time.Sleep(100 * time.Millisecond)
		}
		return false
	}, 30*time.Second, 500*time.Millisecond, "the invitation's page confirms the link once the case is open")
	browsertest.ClickThrough(t, browser, `#signin button`)
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(`#join-as-account`)))
	browsertest.ClickThrough(t, browser, `#join-as-account`)
	require.NoError(t, chromedp.Do(browser,
		chromedp.WaitVisible(`#answer-text`),
		chromedp.SendKeys(`#answer-text`, "We delivered on time; the tracking record shows it."),
	))
	browsertest.ClickThrough(t, browser, `#answer button`)
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(`#answer-filed`)))
	require.Contains(t, docket(t, p, orch, id), "answer_filed")

	// The account, not the link, acts for the respondent now: the
	// website routes take its session from the site's own page.
	posted, err := chromedp.Run(browser, chromedp.Evaluate[float64](`
		fetch('/api/disputes/`+id+`/messages', {method: 'POST', credentials: 'same-origin',
			headers: {'Content-Type': 'application/json', 'Idempotency-Key': 'bea-message-1'},
			body: JSON.stringify({text: 'The courier is DHL; the receipt is filed.'})}).then(r => r.status)`, chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.EqualValues(t, http.StatusCreated, posted, "a message with the account's session")
	require.Contains(t, docket(t, p, orch, id), "message_posted")

	// Signed out of the link's session (the link is spent: it signs in
	// no more) and of the account, the page shows nothing of the case;
	// signed in again with the passkey alone, the case page is the
	// account's, with no link.
	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(site+"/respond/"+id), chromedp.WaitVisible(`#signout button`)))
	browsertest.ClickThrough(t, browser, `#signout button`)
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(`main[data-page="signed-out"]`)))
	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(site+"/account/"), chromedp.WaitVisible(`#signout button`)))
	browsertest.ClickThrough(t, browser, `#signout button`)
	require.NoError(t, chromedp.Do(browser, chromedp.Navigate(site+"/respond/"+id), chromedp.WaitVisible(`main[data-page="signin"]`)))
	require.NoError(t, chromedp.Do(browser,
		chromedp.Navigate(site+"/account/signin"), chromedp.WaitVisible(`#passkey-button`),
		chromedp.Click(`#passkey-button`), chromedp.WaitVisible(`main[data-page="account"]`),
	))
	again, err := chromedp.Run(browser, chromedp.Text(`#account-id`))
	require.NoError(t, err)
	require.Equal(t, accountID, again)
	// The account's page lists its case; its link opens the case page as
	// the account's, with no link of the invitation.
	require.NoError(t, chromedp.Do(browser, chromedp.WaitVisible(`#cases-list a[href="/respond/`+id+`"]`)))
	browsertest.ClickThrough(t, browser, `#cases-list a[href="/respond/`+id+`"]`)
	require.NoError(t, chromedp.Do(browser,
		chromedp.WaitVisible(`#signed-in-with-account`),
		chromedp.WaitVisible(`#answer-filed`), chromedp.WaitVisible(`#message-text`),
		chromedp.SendKeys(`#message-text`, "Signed in again, no link needed."),
	))
	browsertest.ClickThrough(t, browser, `#message button`)
	require.Eventually(t, func() bool {
		return strings.Count(strings.Join(docket(t, p, orch, id), " "), "message_posted") == 2
	}, 10*time.Second, 200*time.Millisecond, "the second sign-in acts with no link")
}

// docket is the case's event types as the claimant's partner reads them.
func docket(t *testing.T, p *probe, who minted, id string) []string {
	t.Helper()
	r := p.do(t, "GET", "/api/v2/cases/"+id+"/docket", who, "", nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	var v struct {
		Data struct {
			Events []struct {
				Type string `json:"type"`
			} `json:"events"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.body, &v))
	var out []string
	for _, e := range v.Data.Events {
		out = append(out, e.Type)
	}
	return out
}
