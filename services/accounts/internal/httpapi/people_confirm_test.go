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
	"github.com/pcourt/pcourt/services/accounts/internal/httpapi"
)

// The attack an unconfirmed address invited: Eve signs up with Victor's
// address and her own passkey. The address is nobody's until confirmed,
// so Victor's code sign-in does not reach Eve's account (the code page
// is exactly an address-without-account's, and no e-mail goes out),
// Victor signs up with his address too, confirms it and so holds it;
// Eve, even with a confirmation code in hand, can no longer confirm it,
// and a code sign-in then reaches Victor's account only.
func TestAnAddressSomeoneElseSignedUpWithNeverReachesTheirAccount(t *testing.T) {
	s := newPeopleStack(t)
	ctx := context.Background()
	eve := s.browser(t)
	eveID := eve.signUp(t, newKey(t, s), "Eve", "victor@example.com")
	require.Contains(t, eve.get(t, "/account/").body, `id="email-unconfirmed"`)

	// Victor asks for a sign-in code: the same page as for an address no
	// account uses, nothing sent, and no code signs in to Eve's account.
	victor := s.browser(t)
	asked := victor.form(t, "/account/signin/code", url.Values{"email": {"victor@example.com"}})
	nobody := victor.form(t, "/account/signin/code", url.Values{"email": {"nobody@example.com"}})
	require.Equal(t, http.StatusOK, asked.status)
	require.Equal(t, nobody.status, asked.status)
	require.Equal(t, strings.ReplaceAll(asked.body, "victor@example.com", "X"), strings.ReplaceAll(nobody.body, "nobody@example.com", "X"),
		"an unconfirmed address is an address without an account")
	for _, email := range []string{"victor@example.com", "nobody@example.com"} {
		wrong := victor.form(t, "/account/signin/code/verify", url.Values{"email": {email}, "code": {"123456"}})
		require.Equal(t, http.StatusBadRequest, wrong.status)
		require.Contains(t, wrong.body, `data-code="code_wrong"`)
		require.Contains(t, wrong.body, "4 attempts left", email)
	}
	time.Sleep(200 * time.Millisecond) // the mail worker had its chance
	require.Empty(t, s.smtp.Messages(), "no sign-in code goes to an unconfirmed address")
	require.Empty(t, victor.cookie(t, httpapi.SessionCookieName))

	// Eve asks for a confirmation code: it goes to Victor's mailbox. Say
	// she got hold of it anyway.
	require.Equal(t, http.StatusOK, eve.askConfirmation(t).status)
	to, eveCode := s.codeFrom(t, 1)
	require.Equal(t, "victor@example.com", to)

	// Victor signs up with his address (not email_taken: it was nobody's)
	// and confirms it first.
	victorID := victor.signUp(t, newKey(t, s), "Victor", "victor@example.com")
	require.NotEqual(t, eveID, victorID)
	victor.confirm(t, 2)
	owner, err := s.store.AccountByEmail(ctx, "tenant-people", "sandbox", "victor@example.com")
	require.NoError(t, err)
	require.Equal(t, victorID, owner)

	// Eve's code is right, and refused: the address is Victor's. Nothing
	// changes, and no more codes go out for her.
	csrf := eve.get(t, "/account/").csrf(t)
	redistest.Unchanged(t, s.rdb, nil, func() {
		late := eve.form(t, "/account/email/confirm", url.Values{"csrf": {csrf}, "code": {eveCode}})
		require.Equal(t, http.StatusConflict, late.status)
		require.Contains(t, late.body, `data-code="email_taken"`)
		require.Contains(t, late.body, "Another account confirmed this address first")
		again := eve.form(t, "/account/email/code", url.Values{"csrf": {csrf}})
		require.Equal(t, http.StatusConflict, again.status)
		require.Contains(t, again.body, `data-code="email_taken"`)
	}, "pc:acct:*")
	stored, err := s.store.Get(ctx, eveID)
	require.NoError(t, err)
	require.True(t, stored.EmailVerifiedAt.IsZero(), "Eve's address stays unconfirmed")
	require.Len(t, s.smtp.Messages(), 2)

	// A sign-up with the address is email_taken now, and a code sign-in
	// reaches Victor's account, never Eve's.
	taken := s.browser(t).call(t, "/account/signup/options", map[string]string{"displayName": "Eve again", "email": "victor@example.com"})
	require.Equal(t, http.StatusConflict, taken.status)
	require.Equal(t, "email_taken", taken.problem.Code)
	elsewhere := s.browser(t)
	s.clock.advance(time.Minute)
	require.Equal(t, http.StatusOK, elsewhere.form(t, "/account/signin/code", url.Values{"email": {"victor@example.com"}}).status)
	to, code := s.codeFrom(t, 3)
	require.Equal(t, "victor@example.com", to)
	in := elsewhere.form(t, "/account/signin/code/verify", url.Values{"email": {"victor@example.com"}, "code": {code}})
	require.Equal(t, http.StatusSeeOther, in.status, in.body)
	home := elsewhere.get(t, "/account/")
	require.Contains(t, home.body, `<code id="account-id">`+victorID+`</code>`)
	require.Contains(t, home.body, `id="email-confirmed"`)
}

// The confirmation forms are the signed-in pages' forms: the pages'
// origin, the session's CSRF token, a live session; their codes are the
// sign-in codes, rationed and counted alike; a confirmed address has
// nothing left to confirm; a deployment without SMTP offers none.
func TestConfirmingAnAddressIsASignedInFormWithTheCodesRules(t *testing.T) {
	s := newPeopleStack(t)
	b := s.browser(t)
	id := b.signUp(t, newKey(t, s), "Ada", "ada@example.com")
	home := b.get(t, "/account/")
	require.Contains(t, home.body, `id="confirm-request"`)
	require.NotContains(t, home.body, `id="confirm-verify"`, "the code's field comes with the code")
	csrf := home.csrf(t)

	crossSite := s.browser(t)
	crossSite.origin = "http://evil.example"
	crossSite.setCookie(t, httpapi.SessionCookieName, b.cookie(t, httpapi.SessionCookieName))
	stranger := s.browser(t)
	redistest.Unchanged(t, s.rdb, nil, func() {
		for _, path := range []string{"/account/email/code", "/account/email/confirm"} {
			r := crossSite.form(t, path, url.Values{"csrf": {csrf}, "code": {"123456"}})
			require.Equal(t, http.StatusForbidden, r.status, path)
			require.Contains(t, r.body, `data-refusal="cross_origin"`, path)
			r = b.form(t, path, url.Values{"csrf": {"not-the-token"}, "code": {"123456"}})
			require.Equal(t, http.StatusForbidden, r.status, path)
			require.Contains(t, r.body, `data-refusal="csrf_mismatch"`, path)
			r = stranger.form(t, path, url.Values{"csrf": {csrf}, "code": {"123456"}})
			require.Equal(t, http.StatusSeeOther, r.status, path)
			require.Equal(t, "/account/signin", r.location, "signed out: to the sign-in")
		}
	}, "pc:acct:*")
	require.Empty(t, s.smtp.Messages())

	sent := b.askConfirmation(t)
	require.Equal(t, http.StatusOK, sent.status)
	require.Contains(t, sent.body, `id="confirm-verify"`)
	soon := b.askConfirmation(t)
	require.Equal(t, http.StatusTooManyRequests, soon.status)
	require.Equal(t, "60", soon.header.Get("Retry-After"))
	require.Contains(t, soon.body, `data-code="code_too_soon"`)
	require.Contains(t, soon.body, `id="confirm-verify"`, "the code sent before still confirms")
	_, code := s.codeFrom(t, 1)
	require.Empty(t, redistest.Keys(t, s.rdb, "*"+code+"*"), "the code is kept only as a hash")

	malformed := b.typeConfirmation(t, "12345")
	require.Equal(t, http.StatusBadRequest, malformed.status)
	require.Contains(t, malformed.body, `data-code="code_malformed"`)
	wrong := b.typeConfirmation(t, flip(code))
	require.Equal(t, http.StatusBadRequest, wrong.status)
	require.Contains(t, wrong.body, `data-code="code_wrong"`)
	require.Contains(t, wrong.body, "4 attempts left")
	signin := s.browser(t).form(t, "/account/signin/code/verify", url.Values{"email": {"ada@example.com"}, "code": {code}})
	require.Contains(t, signin.body, `data-code="code_expired"`, "a confirmation code signs in nobody")

	done := b.typeConfirmation(t, code)
	require.Equal(t, http.StatusSeeOther, done.status, done.body)
	require.Equal(t, "/account/", done.location)
	home = b.get(t, "/account/")
	require.Contains(t, home.body, `id="email-confirmed"`)
	require.NotContains(t, home.body, `id="confirm-request"`)
	stored, err := s.store.Get(context.Background(), id)
	require.NoError(t, err)
	require.False(t, stored.EmailVerifiedAt.IsZero())

	redistest.Unchanged(t, s.rdb, nil, func() {
		already := b.askConfirmation(t)
		require.Equal(t, http.StatusConflict, already.status)
		require.Contains(t, already.body, `data-code="email_already_confirmed"`)
		already = b.typeConfirmation(t, code)
		require.Equal(t, http.StatusConflict, already.status)
		require.Contains(t, already.body, `data-code="email_already_confirmed"`)
	}, "pc:acct:*")

	off := newPeopleStack(t, withoutMail())
	ob := off.browser(t)
	ob.signUp(t, newKey(t, off), "Ada", "ada@example.com")
	page := ob.get(t, "/account/")
	require.Contains(t, page.body, `id="confirm-off"`)
	require.NotContains(t, page.body, `id="confirm-request"`)
	asked := ob.askConfirmation(t)
	require.Equal(t, http.StatusNotFound, asked.status)
	require.Contains(t, asked.body, `data-code="sign_in_codes_off"`)
}
