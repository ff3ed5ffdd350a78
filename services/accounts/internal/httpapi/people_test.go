package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/httpapi"
)

// newKey is a passkey for the stack's relying party.
func newKey(t testing.TB, s *peopleStack) *softKey { return newSoftKey(t, "localhost", s.origin) }

// A person signs up with a passkey and is signed in at once; signed out,
// the same passkey signs in again with no link and no address typed (the
// browser's credential names the account), and the account page shows
// the person, the address and the passkey with its last use.
func TestAPersonSignsUpAndSignsInAgainWithThePasskeyAlone(t *testing.T) {
	s := newPeopleStack(t)
	b := s.browser(t)
	key := newKey(t, s)

	id := b.signUp(t, key, "Ada Lovelace", "Ada@Example.com")
	require.Regexp(t, `^acct_[A-Z2-7]{26}$`, id)
	stored, err := s.store.Get(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, account.KindIndividual, stored.Kind)
	require.Equal(t, "tenant-people", stored.Tenant, "the deployment's tenant")
	require.Equal(t, "sandbox", stored.Environment)
	require.Equal(t, "ada@example.com", stored.Email)
	require.Len(t, stored.Passkeys, 1)
	require.Equal(t, key.id, stored.Passkeys[0].CredentialID)
	require.Equal(t, []byte(id), key.userHandle, "the user handle is the account id")

	home := b.get(t, "/account/")
	require.Equal(t, http.StatusOK, home.status)
	require.Equal(t, "private, no-store", home.header.Get("Cache-Control"))
	require.Contains(t, home.header.Get("Content-Security-Policy"), "connect-src 'self'")
	require.Contains(t, home.body, `<dd id="account-name">Ada Lovelace</dd>`)
	require.Contains(t, home.body, `<span id="account-email">ada@example.com</span>`)
	require.Contains(t, home.body, `id="email-unconfirmed"`, "a sign-up does not prove the address")
	require.Contains(t, home.body, `<code id="account-id">`+id+`</code>`)

	out := b.form(t, "/account/signout", url.Values{"csrf": {home.csrf(t)}})
	require.Equal(t, http.StatusOK, out.status)
	require.Contains(t, out.body, `data-page="signed-out"`)
	require.Equal(t, "/account/signin", b.get(t, "/account/").location, "signed out")

	in := b.signIn(t, key)
	require.Equal(t, http.StatusOK, in.status, in.problem)
	require.JSONEq(t, `{"accountId":"`+id+`","displayName":"Ada Lovelace","next":"/account/"}`, string(in.data))
	home = b.get(t, "/account/")
	require.Equal(t, http.StatusOK, home.status)
	require.Contains(t, home.body, "with a passkey")
	stored, err = s.store.Get(context.Background(), id)
	require.NoError(t, err)
	require.EqualValues(t, key.count, stored.Passkeys[0].SignCount, "the counter moved on")
	require.False(t, stored.Passkeys[0].LastUsedAt.IsZero())
}

// The cookies are HttpOnly, SameSite=Strict and scoped to /account; the
// ceremony's lasts five minutes and is cleared by its answer, and a
// sign-in starts a session of its own: the browser's session before it
// signs in nothing afterwards.
func TestSessionsAreTheHostedPagesSessionsAndRotateAtSignIn(t *testing.T) {
	s := newPeopleStack(t)
	b := s.browser(t)
	key := newKey(t, s)

	begun := b.call(t, "/account/signup/options", map[string]string{"displayName": "Ada", "email": "ada@example.com"})
	require.Equal(t, http.StatusOK, begun.status)
	ceremony := cookieLine(t, begun.header, httpapi.CeremonyCookieName)
	for _, attr := range []string{"Path=/account", "Max-Age=300", "HttpOnly", "SameSite=Strict"} {
		require.Contains(t, ceremony, attr)
	}
	require.NotContains(t, ceremony, "Secure", "plain http on localhost")
	done := b.call(t, "/account/signup", key.create(t, begun.options(t)))
	require.Equal(t, http.StatusCreated, done.status)
	session := cookieLine(t, done.header, httpapi.SessionCookieName)
	// The whole site's: the website routes and hosted pages of the other
	// services take the session too.
	for _, attr := range []string{"Path=/;", "Max-Age=28800", "HttpOnly", "SameSite=Strict"} {
		require.Contains(t, session, attr)
	}
	require.Contains(t, cookieLine(t, done.header, httpapi.CeremonyCookieName), "Max-Age=0", "the answered ceremony's cookie is cleared")

	first := b.cookie(t, httpapi.SessionCookieName)
	require.NotEmpty(t, first)
	in := b.signIn(t, key)
	require.Equal(t, http.StatusOK, in.status, in.problem)
	second := b.cookie(t, httpapi.SessionCookieName)
	require.NotEqual(t, first, second, "a new session at every sign-in")

	stale := s.browser(t)
	stale.setCookie(t, httpapi.SessionCookieName, first)
	require.Equal(t, "/account/signin", stale.get(t, "/account/").location, "the session before the sign-in has ended")
	require.Equal(t, http.StatusOK, b.get(t, "/account/").status)
	_, live, err := s.credentials.AccountSession(context.Background(), first)
	require.NoError(t, err)
	require.False(t, live, "the first session ended in the credential keyspace, for every service")
	_, live, err = s.credentials.AccountSession(context.Background(), second)
	require.NoError(t, err)
	require.True(t, live)
}

// A session's cookie signs nothing in once its person signed out: sign-out
// ends the session in Redis, not only in the browser. Sign-out needs the
// session's CSRF token; with another, nothing ends.
func TestASessionCookieIsDeadAfterSignOut(t *testing.T) {
	s := newPeopleStack(t)
	b := s.browser(t)
	b.signUp(t, newKey(t, s), "Ada", "ada@example.com")
	value := b.cookie(t, httpapi.SessionCookieName)
	home := b.get(t, "/account/")

	refused := b.form(t, "/account/signout", url.Values{"csrf": {"not-the-token"}})
	require.Equal(t, http.StatusForbidden, refused.status)
	require.Contains(t, refused.body, `data-refusal="csrf_mismatch"`)
	require.Equal(t, http.StatusOK, b.get(t, "/account/").status, "still signed in")

	out := b.form(t, "/account/signout", url.Values{"csrf": {home.csrf(t)}})
	require.Equal(t, http.StatusOK, out.status)
	require.Contains(t, cookieLine(t, out.header, httpapi.SessionCookieName), "Max-Age=0")
	_, live, err := s.credentials.AccountSession(context.Background(), value)
	require.NoError(t, err)
	require.False(t, live, "the session ended in the store, for every service")

	thief := s.browser(t)
	thief.setCookie(t, httpapi.SessionCookieName, value)
	require.Equal(t, "/account/signin", thief.get(t, "/account/").location, "the old cookie signs nothing in")
	again := thief.form(t, "/account/signout", url.Values{"csrf": {home.csrf(t)}})
	require.Equal(t, http.StatusOK, again.status, "signing out a dead session just says so")
}

// Each ceremony's challenge is answered once: the same answer sent again
// (with the same ceremony cookie) finds no ceremony, and an answer to an
// earlier challenge sent with a new ceremony does not verify. Nothing is
// created or signed in by either.
func TestAReplayedChallengeIsRefused(t *testing.T) {
	s := newPeopleStack(t)
	b := s.browser(t)
	key := newKey(t, s)

	begun := b.call(t, "/account/signup/options", map[string]string{"displayName": "Ada", "email": "ada@example.com"})
	ceremony := b.cookie(t, httpapi.CeremonyCookieName)
	created := key.create(t, begun.options(t))
	require.Equal(t, http.StatusCreated, b.call(t, "/account/signup", created).status)

	replay := s.browser(t)
	replay.setCookie(t, httpapi.CeremonyCookieName, ceremony)
	again := replay.call(t, "/account/signup", created)
	require.Equal(t, http.StatusBadRequest, again.status)
	require.Equal(t, "ceremony_expired", again.problem.Code)
	require.Empty(t, replay.cookie(t, httpapi.SessionCookieName))

	begun = b.call(t, "/account/signin/options", nil)
	ceremony = b.cookie(t, httpapi.CeremonyCookieName)
	signed := key.get(t, begun.options(t))
	require.Equal(t, http.StatusOK, b.call(t, "/account/signin", signed).status)
	redistest.Unchanged(t, s.rdb, nil, func() {
		replay.setCookie(t, httpapi.CeremonyCookieName, ceremony)
		again = replay.call(t, "/account/signin", signed)
		require.Equal(t, http.StatusBadRequest, again.status)
		require.Equal(t, "ceremony_expired", again.problem.Code)
	}, "pc:acct:{a:*", "pc:auth:*")

	fresh := s.browser(t)
	require.Equal(t, http.StatusOK, fresh.call(t, "/account/signin/options", nil).status)
	old := fresh.call(t, "/account/signin", signed)
	require.Equal(t, http.StatusBadRequest, old.status)
	require.Equal(t, "passkey_not_verified", old.problem.Code, "an earlier challenge's answer")
	require.Contains(t, old.problem.Detail, "hallenge")
	require.Empty(t, fresh.cookie(t, httpapi.SessionCookieName))

	late := s.browser(t)
	require.Equal(t, http.StatusOK, late.call(t, "/account/signin/options", nil).status)
	require.NoError(t, s.rdb.Del(context.Background(), redistest.Keys(t, s.rdb, "pc:acct:ceremony:*")...).Err()) // five minutes on
	gone := late.call(t, "/account/signin", signed)
	require.Equal(t, "ceremony_expired", gone.problem.Code)
}

// A ceremony's request from another origin is refused before anything is
// read or kept: another site's page cannot start or finish one in the
// person's browser.
func TestACrossOriginCeremonyIsRefusedAndChangesNothing(t *testing.T) {
	s := newPeopleStack(t)
	key := newKey(t, s)
	good := s.browser(t)
	begun := good.call(t, "/account/signup/options", map[string]string{"displayName": "Ada", "email": "ada@example.com"})
	created := key.create(t, begun.options(t))

	for name, origin := range map[string]string{"another site": "http://evil.example", "the site over https": "https://localhost", "no origin at all": ""} {
		t.Run(name, func(t *testing.T) {
			b := s.browser(t)
			b.origin = origin
			b.setCookie(t, httpapi.CeremonyCookieName, good.cookie(t, httpapi.CeremonyCookieName))
			redistest.Unchanged(t, s.rdb, nil, func() {
				for path, body := range map[string]any{
					"/account/signup/options": map[string]string{"displayName": "Eve", "email": "eve@example.com"},
					"/account/signup":         created, "/account/signin/options": nil, "/account/signin": created,
				} {
					a := b.call(t, path, body)
					require.Equal(t, http.StatusForbidden, a.status, path)
					require.Equal(t, "cross_origin", a.problem.Code, path)
				}
			})
			require.Empty(t, b.cookie(t, httpapi.SessionCookieName))
		})
	}
	// The ceremony still waits for its own page's answer.
	require.Equal(t, http.StatusCreated, good.call(t, "/account/signup", created).status)
}

// Every bad sign-up is a clear problem, and nothing is kept for it.
func TestASignUpIsRefusedClearlyAndKeepsNothing(t *testing.T) {
	s := newPeopleStack(t)
	ada := s.browser(t)
	ada.signUp(t, newKey(t, s), "Ada", "ada@example.com")
	ada.confirm(t, 1)
	b := s.browser(t)
	redistest.Unchanged(t, s.rdb, nil, func() {
		for name, tc := range map[string]struct {
			body   any
			status int
			code   string
		}{
			"no name":             {map[string]string{"displayName": "", "email": "bob@example.com"}, 400, "invalid_account"},
			"a name with spaces":  {map[string]string{"displayName": " Bob ", "email": "bob@example.com"}, 400, "invalid_account"},
			"not an address":      {map[string]string{"displayName": "Bob", "email": "bob at example"}, 400, "invalid_email"},
			"a confirmed address": {map[string]string{"displayName": "Bob", "email": " ADA@example.com"}, 409, "email_taken"},
			"an unknown field":    {map[string]string{"displayName": "Bob", "email": "bob@example.com", "kind": "organization"}, 400, "unknown_field"},
			"not an object":       {[]string{"Bob"}, 400, "invalid_field_type"},
		} {
			a := b.call(t, "/account/signup/options", tc.body)
			require.Equal(t, tc.status, a.status, name)
			require.Equal(t, tc.code, a.problem.Code, name)
			require.NotEmpty(t, a.problem.Detail, name)
		}
	}, "pc:acct:*")

	req, err := http.NewRequest(http.MethodPost, s.url+"/account/signup/options", strings.NewReader(`displayName=Bob`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Origin", s.origin)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode, "only JSON, which no other site's form sends")

	empty := b.call(t, "/account/signup", nil)
	require.Equal(t, http.StatusUnsupportedMediaType, empty.status)
}

// A browser's answer that does not verify signs nothing in: a passkey
// made on another origin, one that did not verify its user, an assertion
// of a credential the named account does not hold, and one whose counter
// went back.
func TestAnAnswerThatDoesNotVerifyIsRefused(t *testing.T) {
	s := newPeopleStack(t)
	owner := s.browser(t)
	key := newKey(t, s)
	id := owner.signUp(t, key, "Ada", "ada@example.com")

	t.Run("made on another origin", func(t *testing.T) {
		b := s.browser(t)
		k := newKey(t, s)
		k.clientOrigin = "http://evil.example"
		begun := b.call(t, "/account/signup/options", map[string]string{"displayName": "Bob", "email": "bob@example.com"})
		a := b.call(t, "/account/signup", k.create(t, begun.options(t)))
		require.Equal(t, "passkey_not_verified", a.problem.Code)
		require.Contains(t, a.problem.Detail, "rigin")
		got, err := s.store.AccountByEmail(context.Background(), "tenant-people", "sandbox", "bob@example.com")
		require.NoError(t, err)
		require.Empty(t, got, "no account")
	})
	t.Run("without user verification", func(t *testing.T) {
		b := s.browser(t)
		k := newKey(t, s)
		k.noUV = true
		begun := b.call(t, "/account/signup/options", map[string]string{"displayName": "Bob", "email": "bob@example.com"})
		a := b.call(t, "/account/signup", k.create(t, begun.options(t)))
		require.Equal(t, "passkey_not_verified", a.problem.Code)
	})
	t.Run("a key the account does not hold", func(t *testing.T) {
		b := s.browser(t)
		other := newKey(t, s)
		other.userHandle = []byte(id)
		a := b.signIn(t, other)
		require.Equal(t, http.StatusForbidden, a.status)
		require.Equal(t, "passkey_unknown", a.problem.Code)
		nobody := newKey(t, s)
		nobody.userHandle = []byte("acct_NOBODYNOBODYNOBODYNOBODY2")
		require.Equal(t, "passkey_unknown", b.signIn(t, nobody).problem.Code)
		require.Empty(t, b.cookie(t, httpapi.SessionCookieName))
	})
	t.Run("a counter that went back", func(t *testing.T) {
		b := s.browser(t)
		require.Equal(t, http.StatusOK, b.signIn(t, key).status)
		key.countBack = true
		a := b.signIn(t, key)
		require.Equal(t, http.StatusForbidden, a.status)
		require.Equal(t, "passkey_counter_regressed", a.problem.Code)
		key.countBack = false
	})
}

// The fallback: a code sent through the SMTP server signs in once; the
// page says the same whether an account uses the address or not; wrong
// codes are counted up to five, and a code expires after ten minutes.
func TestAnEmailCodeSignsInAndNeverSaysWhetherAnAddressHasAnAccount(t *testing.T) {
	s := newPeopleStack(t)
	ada := s.browser(t)
	id := ada.signUp(t, newKey(t, s), "Ada", "ada@example.com")
	ada.confirm(t, 1)
	b := s.browser(t)

	signin := b.get(t, "/account/signin")
	require.Contains(t, signin.body, `id="code-request"`)
	known := b.form(t, "/account/signin/code", url.Values{"email": {" ADA@example.com"}})
	unknown := b.form(t, "/account/signin/code", url.Values{"email": {"nobody@example.com"}})
	require.Equal(t, http.StatusOK, known.status)
	require.Equal(t, known.status, unknown.status)
	require.Equal(t, strings.ReplaceAll(known.body, "ADA@example.com", "X"), strings.ReplaceAll(unknown.body, "nobody@example.com", "X"),
		"the same page for an address with an account and one without")

	to, code := s.codeFrom(t, 2)
	require.Equal(t, "ada@example.com", to)
	require.Len(t, s.smtp.Messages(), 2, "no e-mail to an address no account uses")
	require.Empty(t, redistest.Keys(t, s.rdb, "*"+code+"*"), "the code is kept only as a hash")

	// Wrong codes for both addresses answer alike and are counted.
	for _, email := range []string{"ada@example.com", "nobody@example.com"} {
		wrong := b.form(t, "/account/signin/code/verify", url.Values{"email": {email}, "code": {"000000"}})
		require.Equal(t, http.StatusBadRequest, wrong.status)
		require.Contains(t, wrong.body, `data-code="code_wrong"`)
		require.Contains(t, wrong.body, "4 attempts left", email)
	}
	malformed := b.form(t, "/account/signin/code/verify", url.Values{"email": {"ada@example.com"}, "code": {"12345"}})
	require.Contains(t, malformed.body, `data-code="code_malformed"`)

	right := b.form(t, "/account/signin/code/verify", url.Values{"email": {"ada@example.com"}, "code": {code[:3] + " " + code[3:]}})
	require.Equal(t, http.StatusSeeOther, right.status, right.body)
	require.Equal(t, "/account/", right.location)
	home := b.get(t, "/account/")
	require.Contains(t, home.body, `<code id="account-id">`+id+`</code>`)
	require.Contains(t, home.body, "with a code sent to your address")

	used := s.browser(t).form(t, "/account/signin/code/verify", url.Values{"email": {"ada@example.com"}, "code": {code}})
	require.Equal(t, http.StatusBadRequest, used.status)
	require.Contains(t, used.body, `data-code="code_expired"`, "a code works once")

	// Five wrong attempts end a code: the right one after them signs in nothing.
	s.clock.advance(time.Minute)
	require.Equal(t, http.StatusOK, b.form(t, "/account/signin/code", url.Values{"email": {"ada@example.com"}}).status)
	_, second := s.codeFrom(t, 3)
	other := s.browser(t)
	for left := 4; left >= 0; left-- {
		wrong := other.form(t, "/account/signin/code/verify", url.Values{"email": {"ada@example.com"}, "code": {flip(second)}})
		require.Contains(t, wrong.body, `data-code="code_wrong"`)
	}
	exhausted := other.form(t, "/account/signin/code/verify", url.Values{"email": {"ada@example.com"}, "code": {second}})
	require.Equal(t, http.StatusForbidden, exhausted.status)
	require.Contains(t, exhausted.body, `data-code="code_attempts_exhausted"`)
	require.Empty(t, other.cookie(t, httpapi.SessionCookieName))

	// A code more than ten minutes old signs in nothing.
	s.clock.advance(time.Minute)
	require.Equal(t, http.StatusOK, b.form(t, "/account/signin/code", url.Values{"email": {"ada@example.com"}}).status)
	_, third := s.codeFrom(t, 4)
	s.clock.advance(10 * time.Minute)
	expired := other.form(t, "/account/signin/code/verify", url.Values{"email": {"ada@example.com"}, "code": {third}})
	require.Equal(t, http.StatusBadRequest, expired.status)
	require.Contains(t, expired.body, `data-code="code_expired"`)
	require.Empty(t, other.cookie(t, httpapi.SessionCookieName))
}

// flip returns another six digits than code.
func flip(code string) string {
	b := []byte(code)
	b[0] = '0' + (b[0]-'0'+1)%10
	return string(b)
}

// Codes go out at most once a minute and five times an hour, to an
// address with an account or without alike; a bad address is the form's
// error; a deployment without SMTP offers none.
func TestCodesAreRationedAndRefusedAlike(t *testing.T) {
	s := newPeopleStack(t)
	ada := s.browser(t)
	ada.signUp(t, newKey(t, s), "Ada", "ada@example.com")
	ada.confirm(t, 1)
	b := s.browser(t)
	for _, email := range []string{"ada@example.com", "nobody@example.com"} {
		require.Equal(t, http.StatusOK, b.form(t, "/account/signin/code", url.Values{"email": {email}}).status)
		soon := b.form(t, "/account/signin/code", url.Values{"email": {email}})
		require.Equal(t, http.StatusTooManyRequests, soon.status, email)
		require.Contains(t, soon.body, `data-code="code_too_soon"`)
	}
	for range 4 {
		s.clock.advance(time.Minute)
		require.Equal(t, http.StatusOK, b.form(t, "/account/signin/code", url.Values{"email": {"ada@example.com"}}).status)
	}
	s.clock.advance(time.Minute)
	many := b.form(t, "/account/signin/code", url.Values{"email": {"ada@example.com"}})
	require.Equal(t, http.StatusTooManyRequests, many.status)
	require.Contains(t, many.body, `data-code="too_many_codes"`)
	s.codeFrom(t, 6)
	require.Len(t, s.smtp.Messages(), 6, "the confirmation, then five codes, all to the account's address")

	bad := b.form(t, "/account/signin/code", url.Values{"email": {"not an address"}})
	require.Equal(t, http.StatusBadRequest, bad.status)
	require.Contains(t, bad.body, `id="code-request-error"`)
	require.Contains(t, bad.body, `data-code="invalid_email"`)

	crossSite := s.browser(t)
	crossSite.origin = "http://evil.example"
	redistest.Unchanged(t, s.rdb, nil, func() {
		for _, path := range []string{"/account/signin/code", "/account/signin/code/verify", "/account/signout"} {
			r := crossSite.form(t, path, url.Values{"email": {"ada@example.com"}, "code": {"123456"}})
			require.Equal(t, http.StatusForbidden, r.status, path)
			require.Contains(t, r.body, `data-refusal="cross_origin"`, path)
		}
	})

	off := newPeopleStack(t, withoutMail())
	page := off.browser(t).get(t, "/account/signin")
	require.NotContains(t, page.body, `id="code-request"`, "no SMTP server, no code form")
	asked := off.browser(t).form(t, "/account/signin/code", url.Values{"email": {"ada@example.com"}})
	require.Equal(t, http.StatusNotFound, asked.status)
	require.Contains(t, asked.body, `data-code="sign_in_codes_off"`)
}

// cookieLine returns the Set-Cookie line of the cookie name.
func cookieLine(t testing.TB, h http.Header, name string) string {
	t.Helper()
	for _, line := range h.Values("Set-Cookie") {
		if strings.HasPrefix(line, name+"=") {
			return line
		}
	}
	t.Fatalf("no Set-Cookie for %s in %v", name, h.Values("Set-Cookie"))
	return ""
}

// setCookie puts a cookie value in the browser, as someone who copied it
// would.
func (b *browser) setCookie(t testing.TB, name, value string) {
	t.Helper()
	u, err := url.Parse(b.s.url + "/account/")
	require.NoError(t, err)
	b.client.Jar.SetCookies(u, []*http.Cookie{{Name: name, Value: value, Path: "/account"}})
}
