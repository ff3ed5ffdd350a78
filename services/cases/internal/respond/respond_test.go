package respond_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/respond"
)

// requirePolicyHeaders checks the headers every hosted page response
// carries, refusals and redirects included.
func requirePolicyHeaders(t testing.TB, r reply) {
	t.Helper()
	require.Equal(t, "no-referrer", r.header.Get("Referrer-Policy"))
	require.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"))
	require.Equal(t, "private, no-store", r.header.Get("Cache-Control"))
	csp := r.header.Get("Content-Security-Policy")
	for _, directive := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		require.Contains(t, csp, directive)
	}
	require.NotContains(t, csp, "unsafe-inline")
}

// The link's token buys one session: the exchange spends it, sets an
// HttpOnly, SameSite=Strict cookie scoped to the case's pages, keeps only
// the session id's hash in Redis, expiring, and sends the browser to the
// case page, which shows the case, the respondent's deadlines and the
// join form with the session's CSRF token.
func TestTheLoginExchangeOpensASessionOfTheCase(t *testing.T) {
	s := newStack(t)
	o := s.open(t)

	r := s.post(t, "/respond/"+o.id+"/session", "", confirmed(o.login), sameOrigin...)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	requirePolicyHeaders(t, r)
	require.Equal(t, "/respond/"+o.id, r.header.Get("Location"))
	ck := sessionCookie(t, r)
	require.NotNil(t, ck)
	require.True(t, ck.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, ck.SameSite)
	require.Equal(t, "/respond/"+o.id, ck.Path)
	require.Equal(t, 3600, ck.MaxAge)
	require.False(t, ck.Secure, "the test serves plain http and its config says so")

	// Redis holds the session under the session id's hash, expiring, and
	// neither the session id nor the login token anywhere.
	keys, err := s.rdb.Keys(context.Background(), "pc:cases:*:case:"+o.id+":respond-session:"+auth.HashToken(ck.Value)).Result()
	require.NoError(t, err)
	require.Len(t, keys, 1)
	ttl, err := s.rdb.PTTL(context.Background(), keys[0]).Result()
	require.NoError(t, err)
	require.Greater(t, ttl, 59*time.Minute)
	require.LessOrEqual(t, ttl, time.Hour)
	for k, v := range redistest.State(t, s.rdb, nil) {
		for _, secret := range []string{ck.Value, o.login} {
			require.NotContains(t, k, secret)
			require.NotContains(t, v, secret, "key %s", k)
		}
	}

	page := s.get(t, "/respond/"+o.id, ck.Value)
	require.Equal(t, http.StatusOK, page.status)
	requirePolicyHeaders(t, page)
	require.Equal(t, "text/html; charset=utf-8", page.header.Get("Content-Type"))
	for _, want := range []string{`data-page="case"`, "ext-" + o.id, "awaiting_respondent", "p-respondent", "org-beta", "p-claimant",
		"Join the case</strong>: by", "File the answer</strong>: within 14 days", `id="join"`, "opened"} {
		require.Contains(t, page.body, want)
	}
	require.NotContains(t, page.body, `id="answer"`, "no answer before joining")
	require.Regexp(t, csrfField, page.body)
}

// A Secure cookie when the configuration says so (production: https).
func TestTheSessionCookieIsSecureWhenConfigured(t *testing.T) {
	s := newStack(t, func(c *respond.Config) { c.SecureCookie = true })
	o := s.open(t)
	r := s.post(t, "/respond/"+o.id+"/session", "", confirmed(o.login), sameOrigin...)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.True(t, sessionCookie(t, r).Secure)
}

// Behind an ingress that mounts the platform under a path, the page's
// links and the cookie's Path carry that prefix; the origin is still the
// base URL's.
func TestAPublicBasePathPrefixesTheLinksAndTheCookie(t *testing.T) {
	var base string
	s := newStack(t, func(c *respond.Config) { base = c.PublicBaseURL; c.PublicBaseURL += "/pcourt/" })
	o := s.open(t)
	r := s.post(t, "/respond/"+o.id+"/session", "", confirmed(o.login), "Origin", base)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.Equal(t, "/pcourt/respond/"+o.id, r.header.Get("Location"))
	require.Equal(t, "/pcourt/respond/"+o.id, sessionCookie(t, r).Path)
	page := s.get(t, "/respond/"+o.id, sessionCookie(t, r).Value)
	require.Contains(t, page.body, `action="/pcourt/respond/`+o.id+`/join"`)
	require.Contains(t, page.body, `src="/pcourt/respond/static/respond.js"`)
}

// A post is heard from the configured origin, or, when the browser sends
// Origin: null (as it does under Referrer-Policy no-referrer), when
// Sec-Fetch-Site says same-origin.
func TestTheExchangeHearsOnlyThePagesOwnOrigin(t *testing.T) {
	s := newStack(t)
	for _, tc := range []struct {
		name    string
		headers []string
		ok      bool
	}{
		{"Origin null, Sec-Fetch-Site same-origin", sameOrigin, true},
		{"the configured Origin", []string{"Origin", s.url}, true},
		{"another Origin", []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "same-origin"}, false},
		{"another port of the host", []string{"Origin", s.url + "1"}, false},
		{"Origin null from another site", []string{"Origin", "null", "Sec-Fetch-Site", "cross-site"}, false},
		{"same-site is not same-origin", []string{"Sec-Fetch-Site", "same-site"}, false},
		{"neither header", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := s.open(t)
			if tc.ok {
				r := s.post(t, "/respond/"+o.id+"/session", "", confirmed(o.login), tc.headers...)
				require.Equal(t, http.StatusSeeOther, r.status, r.body)
				return
			}
			s.unchanged(t, func() {
				r := s.post(t, "/respond/"+o.id+"/session", "", confirmed(o.login), tc.headers...)
				require.Equal(t, http.StatusForbidden, r.status, r.body)
				require.Equal(t, "cross_origin", r.refusal)
				requirePolicyHeaders(t, r)
				require.Nil(t, sessionCookie(t, r))
			})
			// Refused, the token is not spent: the page's own post works.
			s.signIn(t, o)
		})
	}
}

// Every refused exchange answers a page that says why, sets no cookie and
// changes nothing; a refused token stays good for its own case. The
// preview, which the page posts on load, answers each of them exactly as
// the exchange does, and changes nothing either.
func TestRefusedExchangesAndPreviewsChangeNothing(t *testing.T) {
	s := newStack(t)
	used := s.open(t)
	s.signIn(t, used)
	fresh := s.open(t)
	other := s.open(t)

	for _, tc := range []struct {
		name    string
		caseID  string // the path's case id
		login   string // "" for none
		status  int
		refusal string
		says    string
	}{
		{"the link opened a second time", used.id, used.login, http.StatusGone, "login_used", "This link was used"},
		{"a wrong token", fresh.id, "pc_login_guessed", http.StatusForbidden, "login_invalid", "not valid"},
		{"another case's token", fresh.id, other.login, http.StatusForbidden, "login_invalid", "not valid"},
		{"a case that does not exist", "cs_nope", fresh.login, http.StatusForbidden, "login_invalid", "not valid"},
		{"no token", fresh.id, "", http.StatusBadRequest, "login_missing", "#login="},
		{"a malformed case id", "cs%20x", fresh.login, http.StatusNotFound, "not_found", "no case"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			form := url.Values{respond.ConfirmField: {respond.ConfirmValue}}
			if tc.login != "" {
				form.Set("login", tc.login)
			}
			var exchanged, previewed reply
			s.unchanged(t, func() {
				exchanged = s.post(t, "/respond/"+tc.caseID+"/session", "", form, sameOrigin...)
				previewed = s.post(t, "/respond/"+tc.caseID+"/session/preview", "", url.Values{"login": form["login"]}, sameOrigin...)
			})
			for _, r := range []reply{exchanged, previewed} {
				require.Equal(t, tc.status, r.status, r.body)
				require.Equal(t, tc.refusal, r.refusal)
				require.Contains(t, r.body, tc.says)
				requirePolicyHeaders(t, r)
				require.Nil(t, sessionCookie(t, r))
			}
			require.Equal(t, exchanged.body, previewed.body, "the preview answers as the exchange does")
		})
	}
	// The refused attempts spent nothing.
	s.signIn(t, fresh)
	s.signIn(t, other)
}

// Opening a link shows what it signs in as and spends nothing: the
// preview answers the case, its claimant and the respondent the session
// would act for, with the "Sign in as …" button that carries the token
// back; no cookie, no Redis change, and the link still works afterwards,
// as many previews as there are.
func TestThePreviewShowsWhoTheLinkSignsInAsAndSpendsNothing(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	var r reply
	s.unchanged(t, func() {
		r = s.post(t, "/respond/"+o.id+"/session/preview", "", url.Values{"login": {o.login}}, sameOrigin...)
		s.post(t, "/respond/"+o.id+"/session/preview", "", url.Values{"login": {o.login}}, sameOrigin...)
	})
	require.Equal(t, http.StatusOK, r.status, r.body)
	requirePolicyHeaders(t, r)
	require.Nil(t, sessionCookie(t, r))
	for _, want := range []string{
		`data-page="confirm"`,
		`<dd id="confirm-case">` + o.id + `</dd>`,
		`<dd id="confirm-external">ext-` + o.id + `</dd>`,
		`<dd id="confirm-claimant">org-acme (participant p-claimant)</dd>`,
		`<dd id="confirm-as">respondent org-beta (participant p-respondent)</dd>`,
		`<form id="signin" method="post" action="/respond/` + o.id + `/session">`,
		`<input type="hidden" name="login" value="` + o.login + `">`,
		`<button type="submit" name="confirm" value="signin">Sign in as respondent org-beta (participant p-respondent) on case ` + o.id + `</button>`,
	} {
		require.Contains(t, r.body, want)
	}
	require.NotContains(t, r.body, `name="csrf"`, "no session, no form that acts")

	// Cross-site, the preview is refused like the exchange.
	s.unchanged(t, func() {
		r := s.post(t, "/respond/"+o.id+"/session/preview", "", url.Values{"login": {o.login}}, "Origin", "https://evil.example")
		require.Equal(t, http.StatusForbidden, r.status)
		require.Equal(t, "cross_origin", r.refusal)
	})
	s.signIn(t, o)
}

// The exchange signs in only with the confirmation the page's button
// adds: the module's own post on load, or anything else without it, is
// refused and spends nothing.
func TestAnExchangeWithoutTheConfirmationIsRefused(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	for _, tc := range []struct {
		name string
		form url.Values
	}{
		{"no confirmation field", url.Values{"login": {o.login}}},
		{"another value", url.Values{"login": {o.login}, respond.ConfirmField: {"yes"}}},
		{"an empty value", url.Values{"login": {o.login}, respond.ConfirmField: {""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.unchanged(t, func() {
				r := s.post(t, "/respond/"+o.id+"/session", "", tc.form, sameOrigin...)
				require.Equal(t, http.StatusBadRequest, r.status, r.body)
				require.Equal(t, "login_unconfirmed", r.refusal)
				require.Contains(t, r.body, "Nothing was used")
				requirePolicyHeaders(t, r)
				require.Nil(t, sessionCookie(t, r))
			})
		})
	}
	s.signIn(t, o)
}

// Signed in, the case page says who is signed in (the case and the
// respondent) above everything else, with a sign-out; signing out ends the
// session in Redis and clears the cookie, and a refused sign-out changes
// nothing.
func TestTheCasePageShowsWhoIsSignedInAndSignsOut(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	session := s.signIn(t, o)
	page := s.get(t, "/respond/"+o.id, session)
	require.Equal(t, http.StatusOK, page.status)
	for _, want := range []string{
		`<section id="signed-in-as"`,
		`Signed in to case <strong id="who-case">` + o.id + `</strong> (<span id="who-external">ext-` + o.id + `</span>) as respondent <strong id="who-as">org-beta (participant p-respondent)</strong>`,
		`<form id="signout" method="post" action="/respond/` + o.id + `/signout">`,
	} {
		require.Contains(t, page.body, want)
	}
	require.Less(t, strings.Index(page.body, `id="signed-in-as"`), strings.Index(page.body, `<main`), "in the header, before the case")
	csrf := s.csrf(t, o, session)

	for _, tc := range []struct {
		name    string
		session string
		form    url.Values
		headers []string
		refusal string
	}{
		{"no CSRF token", session, url.Values{}, sameOrigin, "csrf_mismatch"},
		{"cross-site", session, url.Values{"csrf": {csrf}}, []string{"Origin", "https://evil.example"}, "cross_origin"},
		{"no session", "", url.Values{"csrf": {csrf}}, sameOrigin, "no_session"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.unchanged(t, func() {
				r := s.post(t, "/respond/"+o.id+"/signout", tc.session, tc.form, tc.headers...)
				require.Equal(t, http.StatusForbidden, r.status, r.body)
				require.Equal(t, tc.refusal, r.refusal)
			})
		})
	}

	r := s.post(t, "/respond/"+o.id+"/signout", session, url.Values{"csrf": {csrf}}, sameOrigin...)
	require.Equal(t, http.StatusOK, r.status, r.body)
	requirePolicyHeaders(t, r)
	require.Contains(t, r.body, `data-page="signed-out"`)
	ck := sessionCookie(t, r)
	require.NotNil(t, ck)
	require.Less(t, ck.MaxAge, 0, "the cookie is cleared")
	require.Equal(t, "/respond/"+o.id, ck.Path)
	require.Empty(t, redistest.Keys(t, s.rdb, "pc:cases:*:case:"+o.id+":respond-session:*"), "the session is gone from Redis")
	after := s.get(t, "/respond/"+o.id, session)
	require.Contains(t, after.body, `data-page="signin"`)
	require.NotContains(t, after.body, "org-beta")
}

// A browser that is signed in and opens the link again is refused too, and
// told it may continue with the session it has.
func TestTheLinkOpenedAgainOnASignedInBrowserOffersToContinue(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	session := s.signIn(t, o)
	s.unchanged(t, func() {
		r := s.post(t, "/respond/"+o.id+"/session", session, confirmed(o.login), sameOrigin...)
		require.Equal(t, http.StatusGone, r.status)
		require.Equal(t, "login_used", r.refusal)
		require.Contains(t, r.body, `id="continue" href="/respond/`+o.id+`"`)
	})
}

// Without a session the page shows nothing of the case: the sign-in page
// holds the preview form and the module, and no case data.
func TestWithoutASessionNothingOfTheCaseIsShown(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	other := s.open(t)
	otherSession := s.signIn(t, other)
	for _, tc := range []struct{ name, session string }{
		{"no cookie", ""},
		{"an unknown session", "pc_rs_forged"},
		{"another case's session", otherSession},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.get(t, "/respond/"+o.id, tc.session)
			require.Equal(t, http.StatusOK, r.status)
			requirePolicyHeaders(t, r)
			require.Contains(t, r.body, `data-page="signin"`)
			require.Contains(t, r.body, `action="/respond/`+o.id+`/session/preview"`)
			require.Contains(t, r.body, `src="/respond/static/respond.js"`)
			for _, secret := range []string{"ext-" + o.id, "org-beta", "org-acme", "p-respondent", "awaiting_respondent", `name="csrf"`} {
				require.NotContains(t, r.body, secret)
			}
		})
	}
}

// The page joins and files the answer through the flow the API uses: the
// docket the API serves records respondent_joined and answer_filed, and
// the page shows the answer and the docket.
func TestTheRespondentJoinsAndAnswersOnThePage(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	session := s.signIn(t, o)

	r := s.post(t, "/respond/"+o.id+"/join", session, url.Values{"csrf": {s.csrf(t, o, session)}}, sameOrigin...)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	requirePolicyHeaders(t, r)
	require.Equal(t, "/respond/"+o.id, r.header.Get("Location"))
	require.Equal(t, []string{"opened", "respondent_joined", "stage_opened"}, s.docket(t, o.id))

	page := s.get(t, "/respond/"+o.id, session)
	require.Contains(t, page.body, "awaiting_answer")
	require.Contains(t, page.body, `id="answer"`)
	require.NotContains(t, page.body, `id="join"`)
	require.Contains(t, page.body, "File the answer</strong>: by")

	text := "The goods were shipped on 2026-11-02.\r\nThe tracking record is attached."
	r = s.post(t, "/respond/"+o.id+"/answer", session, url.Values{"csrf": {s.csrf(t, o, session)}, "text": {text}}, sameOrigin...)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.Equal(t, []string{"opened", "respondent_joined", "stage_opened", "answer_filed", "stage_opened"}, s.docket(t, o.id))

	page = s.get(t, "/respond/"+o.id, session)
	require.Contains(t, page.body, "The goods were shipped on 2026-11-02.\nThe tracking record is attached.")
	require.Contains(t, page.body, `data-type="answer_filed"`)
	require.NotContains(t, page.body, `id="answer"`, "the answer is filed once")
}

// Every refused form post answers a page with its status and code and
// changes nothing.
func TestRefusedFormPostsChangeNothing(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	session := s.signIn(t, o)
	csrf := s.csrf(t, o, session)
	other := s.open(t)
	otherSession := s.signIn(t, other)
	otherCSRF := s.csrf(t, other, otherSession)
	joined := s.open(t)
	joinedSession := s.signIn(t, joined)
	joinedCSRF := s.csrf(t, joined, joinedSession)
	require.Equal(t, http.StatusSeeOther, s.post(t, "/respond/"+joined.id+"/join", joinedSession, url.Values{"csrf": {joinedCSRF}}, sameOrigin...).status)

	join, answer := "/respond/"+o.id+"/join", "/respond/"+o.id+"/answer"
	for _, tc := range []struct {
		name    string
		path    string
		session string
		form    url.Values
		headers []string
		status  int
		refusal string
	}{
		{"no session", join, "", url.Values{"csrf": {csrf}}, sameOrigin, http.StatusForbidden, "no_session"},
		{"an unknown session", join, "pc_rs_forged", url.Values{"csrf": {csrf}}, sameOrigin, http.StatusForbidden, "no_session"},
		{"another case's session", join, otherSession, url.Values{"csrf": {otherCSRF}}, sameOrigin, http.StatusForbidden, "no_session"},
		{"no CSRF token", join, session, url.Values{}, sameOrigin, http.StatusForbidden, "csrf_mismatch"},
		{"a wrong CSRF token", join, session, url.Values{"csrf": {csrf + "x"}}, sameOrigin, http.StatusForbidden, "csrf_mismatch"},
		{"another session's CSRF token", join, session, url.Values{"csrf": {otherCSRF}}, sameOrigin, http.StatusForbidden, "csrf_mismatch"},
		{"a cross-site post with the session and its token", join, session, url.Values{"csrf": {csrf}}, []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"}, http.StatusForbidden, "cross_origin"},
		{"a post that says nothing of its origin", join, session, url.Values{"csrf": {csrf}}, nil, http.StatusForbidden, "cross_origin"},
		{"an answer before joining", answer, session, url.Values{"csrf": {csrf}, "text": {"An answer."}}, sameOrigin, http.StatusUnprocessableEntity, "not_a_participant"},
		{"an empty answer", answer, session, url.Values{"csrf": {csrf}, "text": {" \r\n"}}, sameOrigin, http.StatusBadRequest, "invalid_act"},
		{"an answer too long", answer, session, url.Values{"csrf": {csrf}, "text": {strings.Repeat("a", 20001)}}, sameOrigin, http.StatusBadRequest, "invalid_act"},
		{"an answer too large to read", answer, session, url.Values{"csrf": {csrf}, "text": {strings.Repeat("é", respond.MaxBodyBytes/2)}}, sameOrigin, http.StatusRequestEntityTooLarge, "too_large"},
		{"an answer with a control character", answer, session, url.Values{"csrf": {csrf}, "text": {"a\x00b"}}, sameOrigin, http.StatusBadRequest, "invalid_act"},
		{"joining twice", "/respond/" + joined.id + "/join", joinedSession, url.Values{"csrf": {joinedCSRF}}, sameOrigin, http.StatusConflict, "already_joined"},
		{"acting for the claimant", join, session, url.Values{"csrf": {csrf}, "participantId": {"p-claimant"}}, sameOrigin, http.StatusForbidden, "forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.unchanged(t, func() {
				r := s.post(t, tc.path, tc.session, tc.form, tc.headers...)
				require.Equal(t, tc.status, r.status, r.body)
				require.Equal(t, tc.refusal, r.refusal, r.body)
				require.Equal(t, "text/html; charset=utf-8", r.header.Get("Content-Type"))
				requirePolicyHeaders(t, r)
			})
		})
	}
	require.Equal(t, []string{"opened"}, s.docket(t, o.id))
}

// Issue 21, item 1: no hosted session stands in for a respondent a
// partner acts for: one the draft bound to a partner, or a hosted one that
// joined through a partner's agent (the join bound it to that partner).
// The page offers no form and refuses a post, changing nothing.
func TestARespondentAPartnerActsForIsNotActedForFromThePage(t *testing.T) {
	boundByTheDraft := func(payload map[string]any) {
		respondent := payload["participants"].([]map[string]any)[1]
		respondent["partnerId"] = "partner-r"
		delete(respondent, "hosted")
	}
	for name, setup := range map[string]func(t *testing.T, s *stack) opened{
		"bound to a partner by the draft": func(t *testing.T, s *stack) opened { return s.open(t, boundByTheDraft) },
		"joined through a partner's agent": func(t *testing.T, s *stack) opened {
			o := s.open(t)
			_, err := caseflow.New(s.cases, nil).Act(context.Background(), o.id,
				procedure.Act{Kind: procedure.ActJoin, ParticipantID: "p-respondent", BindPartnerID: "partner-c"})
			require.NoError(t, err)
			return o
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := newStack(t)
			o := setup(t, s)
			session := s.signIn(t, o)
			page := s.get(t, "/respond/"+o.id, session)
			require.Equal(t, http.StatusOK, page.status)
			require.NotContains(t, page.body, `id="join"`)
			require.NotContains(t, page.body, `id="answer"`)
			csrf := s.csrf(t, o, session) // the sign-out form's
			s.unchanged(t, func() {
				for _, path := range []string{"/respond/" + o.id + "/join", "/respond/" + o.id + "/answer"} {
					r := s.post(t, path, session, url.Values{"csrf": {csrf}, "text": {"Denied."}, "participantId": {"p-respondent"}}, sameOrigin...)
					require.Equal(t, http.StatusForbidden, r.status, r.body)
					require.Equal(t, "forbidden", r.refusal)
				}
			})
		})
	}
}

// A respondent bound to an immutable agent is acted for by that agent
// only: the page shows the case but offers no form, and refuses a post.
func TestAnAgentBoundRespondentIsNotActedForFromThePage(t *testing.T) {
	s := newStack(t)
	o := s.open(t, func(payload map[string]any) {
		respondent := payload["participants"].([]map[string]any)[1]
		respondent["agentId"], respondent["partnerId"] = "agent-bob-7", "partner-r"
		delete(respondent, "hosted")
	})
	session := s.signIn(t, o)
	page := s.get(t, "/respond/"+o.id, session)
	require.Equal(t, http.StatusOK, page.status)
	require.NotContains(t, page.body, `id="join"`)
	require.NotContains(t, page.body, `id="answer"`)
	require.Contains(t, page.body, "to read it only", "who is signed in says the session acts for nobody")
}

// The module and the stylesheet are served from the page's own origin,
// with the page's headers, and nothing else is.
func TestTheStaticFilesAreTheEmbeddedOnes(t *testing.T) {
	s := newStack(t)
	js := s.get(t, "/respond/static/respond.js", "")
	require.Equal(t, http.StatusOK, js.status)
	require.Equal(t, "text/javascript; charset=utf-8", js.header.Get("Content-Type"))
	require.Contains(t, js.body, "history.replaceState")
	requirePolicyHeaders(t, js)
	css := s.get(t, "/respond/static/respond.css", "")
	require.Equal(t, http.StatusOK, css.status)
	require.Equal(t, "text/css; charset=utf-8", css.header.Get("Content-Type"))
	shared := s.get(t, "/respond/static/"+webpage.StylesheetFile, "")
	require.Equal(t, http.StatusOK, shared.status)
	require.Equal(t, "text/css; charset=utf-8", shared.header.Get("Content-Type"))
	require.Equal(t, string(webpage.Stylesheet), shared.body, "the design system, as libs/webpage embeds it")
	requirePolicyHeaders(t, shared)
	require.Equal(t, http.StatusNotFound, s.get(t, "/respond/static/secret.txt", "").status)
}

// Every setting is checked.
func TestConfigValidate(t *testing.T) {
	ok := respond.DefaultConfig()
	require.NoError(t, ok.Validate())
	for _, tc := range []struct {
		name string
		edit func(*respond.Config)
	}{
		{"no public base URL", func(c *respond.Config) { c.PublicBaseURL = "" }},
		{"a relative public base URL", func(c *respond.Config) { c.PublicBaseURL = "/respond" }},
		{"a public base URL with a query", func(c *respond.Config) { c.PublicBaseURL = "https://pcourt.example/?a=b" }},
		{"a Secure cookie over plain http", func(c *respond.Config) { c.PublicBaseURL, c.SecureCookie = "http://pcourt.example", true }},
		{"no Secure cookie over https", func(c *respond.Config) { c.PublicBaseURL, c.SecureCookie = "https://pcourt.example", false }},
		{"a session TTL of a second", func(c *respond.Config) { c.SessionTTL = time.Second }},
		{"a session TTL of a week", func(c *respond.Config) { c.SessionTTL = 7 * 24 * time.Hour }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := respond.DefaultConfig()
			tc.edit(&cfg)
			require.Error(t, cfg.Validate())
		})
	}
}
