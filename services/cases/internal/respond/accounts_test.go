package respond_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/services/cases/internal/respond"
)

// signedIn starts a person's account session as the accounts service's
// sign-in does, and returns its cookie's value.
func (s *stack) signedIn(t testing.TB, accountID, tenant string) string {
	t.Helper()
	token, _, err := s.credentials.StartAccountSession(context.Background(), auth.AccountSessionRequest{
		Tenant: tenant, Environment: auth.Sandbox, AccountID: accountID, Method: auth.SignInPasskey, Lifetime: time.Hour})
	require.NoError(t, err)
	return token
}

// browse sends a request with the case's hosted session and the account
// session, either "" for none, as a browser holding both cookies does.
func (s *stack) browse(t testing.TB, method, path, hosted, account string, form url.Values, headers ...string) reply {
	t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, s.url+path, body)
	require.NoError(t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if hosted != "" {
		req.AddCookie(&http.Cookie{Name: respond.CookieName, Value: hosted})
	}
	if account != "" {
		req.AddCookie(&http.Cookie{Name: auth.SessionCookieName, Value: account})
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return s.send(t, req)
}

// A person who follows the invitation while signed in to their account
// links it to the account as they join: from then on the account acts for
// the respondent, on the page and on the website routes, with its session
// alone, and the case's link is needed no more. Another account's session
// sees nothing of the case.
func TestAPersonLinksTheInvitationToTheirAccountAndActsWithoutTheLink(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	hosted := s.signIn(t, o)
	ada := s.signedIn(t, "acct_ada", "tenant-test")

	page := s.browse(t, http.MethodGet, "/respond/"+o.id, hosted, ada, nil)
	require.Equal(t, http.StatusOK, page.status)
	require.Contains(t, page.body, `id="join-as-account"`, "signed in to an account, the join offers to link it")
	csrf := csrfField.FindStringSubmatch(page.body)[1]

	r := s.browse(t, http.MethodPost, "/respond/"+o.id+"/join", hosted, ada, url.Values{"csrf": {csrf}, "as": {"account"}}, sameOrigin...)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.Equal(t, []string{"opened", "respondent_joined", "stage_opened"}, s.docket(t, o.id))
	l, err := s.cases.Load(context.Background(), o.id)
	require.NoError(t, err)
	pt, _ := l.Case.Participant("p-respondent")
	require.Equal(t, "acct_ada", pt.AccountID, "the invitation is linked to the account")
	require.False(t, pt.Hosted)
	require.Empty(t, pt.PartnerID)

	// A later sign-in: a new account session, no link, no hosted session.
	later := s.signedIn(t, "acct_ada", "tenant-test")
	page = s.browse(t, http.MethodGet, "/respond/"+o.id, "", later, nil)
	require.Equal(t, http.StatusOK, page.status, page.body)
	require.Contains(t, page.body, `id="signed-in-with-account"`)
	require.Contains(t, page.body, `id="answer"`, "the account acts for its respondent")
	require.NotContains(t, page.body, `id="signout"`, "an account is signed out of on its own page")
	require.Equal(t, auth.SessionCSRF(later), csrfField.FindStringSubmatch(page.body)[1])
	r = s.browse(t, http.MethodPost, "/respond/"+o.id+"/answer", "", later,
		url.Values{"csrf": {auth.SessionCSRF(later)}, "text": {"Our answer, from the account."}}, sameOrigin...)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.Equal(t, []string{"opened", "respondent_joined", "stage_opened", "answer_filed", "stage_opened"}, s.docket(t, o.id))

	// The hosted session acts for the linked respondent no more: the
	// account does.
	require.Equal(t, "forbidden", s.browse(t, http.MethodPost, "/respond/"+o.id+"/answer", hosted, "",
		url.Values{"csrf": {s.csrf(t, o, hosted)}, "text": {"From the link."}}, sameOrigin...).refusal)

	// The website routes take the same session: the list, the case, and
	// a message from the site's own page; from anywhere else, nothing.
	list := s.browse(t, http.MethodGet, "/api/disputes", "", later, nil)
	require.Equal(t, http.StatusOK, list.status, list.body)
	require.Equal(t, "private, no-store", list.header.Get("Cache-Control"))
	require.Contains(t, list.body, o.id)
	msg := func(headers ...string) reply {
		req, err := http.NewRequest(http.MethodPost, s.url+"/api/disputes/"+o.id+"/messages", strings.NewReader(`{"text":"Tracking 1Z999."}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "msg-"+o.id+headers[len(headers)-1])
		req.AddCookie(&http.Cookie{Name: auth.SessionCookieName, Value: later})
		for i := 0; i+1 < len(headers)-1; i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		return s.send(t, req)
	}
	s.unchanged(t, func() {
		refused := msg("Origin", "https://evil.example", "1")
		require.Equal(t, http.StatusForbidden, refused.status, refused.body)
		require.Equal(t, "cross_origin", errorCode(t, refused))
	})
	posted := msg("Origin", s.url, "2")
	require.Equal(t, http.StatusCreated, posted.status, posted.body)
	require.Contains(t, s.docket(t, o.id), "message_posted")

	// Another person's account sees nothing of the case, on the page or
	// the website routes; nor does Ada's account in another tenant.
	for _, other := range []string{s.signedIn(t, "acct_bob", "tenant-test"), s.signedIn(t, "acct_ada", "tenant-other")} {
		page = s.browse(t, http.MethodGet, "/respond/"+o.id, "", other, nil)
		require.Equal(t, http.StatusOK, page.status)
		require.NotContains(t, page.body, "Our answer, from the account.", "the page asks for the link, as to anyone")
		got := s.browse(t, http.MethodGet, "/api/disputes/"+o.id, "", other, nil)
		require.Equal(t, http.StatusNotFound, got.status, got.body)
		s.unchanged(t, func() {
			r := s.browse(t, http.MethodPost, "/respond/"+o.id+"/answer", "", other,
				url.Values{"csrf": {auth.SessionCSRF(other)}, "text": {"Not mine."}}, sameOrigin...)
			require.Equal(t, http.StatusForbidden, r.status, r.body)
		})
	}
}

// errorCode is a website route's refusal code: the website envelope's
// error, or a problem's code.
func errorCode(t testing.TB, r reply) string {
	t.Helper()
	if r.problem.Code != "" {
		return r.problem.Code
	}
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.body), &env), r.body)
	return env.Error.Code
}

// Linking needs both: the invitation's session and an account's. Without
// the account's the join with an account is refused and changes nothing;
// without the invitation an account joins nobody.
func TestAnInvitationIsLinkedOnlyWithItsSessionAndAnAccounts(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	hosted := s.signIn(t, o)
	ada := s.signedIn(t, "acct_ada", "tenant-test")
	s.unchanged(t, func() {
		r := s.browse(t, http.MethodPost, "/respond/"+o.id+"/join", hosted, "", url.Values{"csrf": {s.csrf(t, o, hosted)}, "as": {"account"}}, sameOrigin...)
		require.Equal(t, http.StatusForbidden, r.status, r.body)
		require.Equal(t, "no_account_session", r.refusal)
		r = s.browse(t, http.MethodPost, "/respond/"+o.id+"/join", "", ada, url.Values{"csrf": {auth.SessionCSRF(ada)}, "as": {"account"}}, sameOrigin...)
		require.Equal(t, http.StatusForbidden, r.status, r.body)
		require.Equal(t, "forbidden", r.refusal, "an account alone acts for no invited respondent")
		r = s.browse(t, http.MethodPost, "/respond/"+o.id+"/join", hosted, ada, url.Values{"csrf": {s.csrf(t, o, hosted)}, "as": {"account"}},
			"Origin", "https://evil.example")
		require.Equal(t, "cross_origin", r.refusal)
	})
	page := s.browse(t, http.MethodGet, "/respond/"+o.id, hosted, "", nil)
	require.NotContains(t, page.body, `id="join-as-account"`, "without an account session the join offers no link")
}

// A member acting for an organisation (a session of the organisation's
// account naming the member) joins with it: the invitation is linked to
// the organisation, whose sessions, any member's, act for the respondent
// from then on.
func TestAMemberActingForAnOrganisationLinksTheInvitationToIt(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	hosted := s.signIn(t, o)
	acting, _, err := s.credentials.StartAccountSession(context.Background(), auth.AccountSessionRequest{
		Tenant: "tenant-test", Environment: auth.Sandbox, AccountID: "acct_org", ActorID: "acct_ada", Method: auth.SignInPasskey, Lifetime: time.Hour})
	require.NoError(t, err)
	page := s.browse(t, http.MethodGet, "/respond/"+o.id, hosted, acting, nil)
	csrf := csrfField.FindStringSubmatch(page.body)[1]
	r := s.browse(t, http.MethodPost, "/respond/"+o.id+"/join", hosted, acting, url.Values{"csrf": {csrf}, "as": {"account"}}, sameOrigin...)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	l, err := s.cases.Load(context.Background(), o.id)
	require.NoError(t, err)
	pt, _ := l.Case.Participant("p-respondent")
	require.Equal(t, "acct_org", pt.AccountID, "the organisation takes part, not the member")

	grace, _, err := s.credentials.StartAccountSession(context.Background(), auth.AccountSessionRequest{
		Tenant: "tenant-test", Environment: auth.Sandbox, AccountID: "acct_org", ActorID: "acct_grace", Method: auth.SignInCode, Lifetime: time.Hour})
	require.NoError(t, err)
	page = s.browse(t, http.MethodGet, "/respond/"+o.id, "", grace, nil)
	require.Contains(t, page.body, `id="answer"`, "another member acting for it acts for the respondent")
	page = s.browse(t, http.MethodGet, "/respond/"+o.id, "", s.signedIn(t, "acct_ada", "tenant-test"), nil)
	require.NotContains(t, page.body, `id="answer"`, "the member acting for themself does not")
}
