package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/console/internal/console"
)

// unchanged runs act and requires the console's keys and the credentials
// to be as they were (the webhooks service's own keys, busy with its
// workers, and rate-limit counters aside). skipAudit leaves the audit
// trails out too, for the refusal that audits a reopened link.
func (s *stack) unchanged(t testing.TB, skipAudit bool, act func()) {
	t.Helper()
	redistest.Unchanged(t, s.rdb, func(key string) bool {
		return strings.HasPrefix(key, "pc:auth:rl") || (skipAudit && strings.HasPrefix(key, "pc:console:audit:"))
	}, act, "pc:edge:*", "pc:auth:*")
}

var detailLine = regexp.MustCompile(`<p class="detail">([^<]*)</p>`)

func refusalOf(body string) (code, detail string) {
	if m := regexp.MustCompile(`data-refusal="([a-z_]+)"`).FindStringSubmatch(body); m != nil {
		code = m[1]
	}
	if m := detailLine.FindStringSubmatch(body); m != nil {
		detail = m[1]
	}
	return code, detail
}

// Opening a link shows what it signs in as and spends nothing: the
// preview names the partner, tenant, environment and capabilities, and
// carries the token in the form of the "Sign in as …" button; no cookie,
// no credential, no Redis change, and the link still opens afterwards.
func TestPreviewingALinkShowsItsPartnerAndSpendsNothing(t *testing.T) {
	s := newStack(t)
	bearer, cred := s.partner(t, "acme")
	a := s.mint(t, bearer, "view", "replay")
	_, token, _ := strings.Cut(a.Data.URL, "#link=")
	b := s.browser(t)
	var resp *http.Response
	var body string
	s.unchanged(t, false, func() {
		resp, body = b.preview(a.Data.URL)
		b.preview(a.Data.URL)
	})
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Empty(t, resp.Cookies())
	require.Equal(t, "private, no-store", resp.Header.Get("Cache-Control"))
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'")
	for _, want := range []string{
		`data-page="confirm"`,
		`<dd id="confirm-partner">acme</dd>`,
		`<dd id="confirm-tenant">` + cred.Tenant + `</dd>`,
		`<dd id="confirm-environment">sandbox</dd>`,
		`<dd id="confirm-caps">view, replay</dd>`,
		`<form id="signin" method="post" action="/console/session">`,
		`<input type="hidden" name="link" value="` + token + `">`,
		`<button type="submit" name="confirm" value="signin">Sign in as partner acme (` + cred.Tenant + `, sandbox)</button>`,
	} {
		require.Contains(t, body, want)
	}
	require.NotContains(t, body, `id="current-session"`, "this browser holds no session")
	require.NotContains(t, body, `id="signed-in-as"`)
	l, err := s.store.GetLink(context.Background(), a.Data.ID)
	require.NoError(t, err)
	require.Equal(t, console.LinkIssued, l.State)

	resp, body = b.open(a.Data.URL)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
}

// The preview answers every refused link exactly as the exchange does
// (status, code and words), and neither changes anything; a reopened link
// is audited by each, as opening it was before.
func TestPreviewRefusalsAnswerAsTheExchangeDoes(t *testing.T) {
	s := newStack(t)
	bearer, cred := s.partner(t, "acme")
	used := s.mint(t, bearer)
	resp, _ := s.browser(t).open(used.Data.URL)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	revoked := s.mint(t, bearer)
	resp, _ = s.api(t, http.MethodDelete, "/api/console/links/"+revoked.Data.ID, bearer, "")
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	fresh := s.mint(t, bearer)
	_, freshToken, _ := strings.Cut(fresh.Data.URL, "#link=")

	for _, tc := range []struct {
		name    string
		token   string
		origin  string
		status  int
		refusal string
		audits  int // link_reuse_refused entries each post adds
	}{
		{"used", tokenOf(used), s.url, http.StatusGone, "link_used", 1},
		{"revoked", tokenOf(revoked), s.url, http.StatusGone, "link_revoked", 0},
		{"forged", freshToken[:len(freshToken)-5] + "AAAAA", s.url, http.StatusForbidden, "link_invalid", 0},
		{"garbage", "garbage", s.url, http.StatusForbidden, "link_invalid", 0},
		{"no token", "", s.url, http.StatusForbidden, "link_invalid", 0},
		{"cross-site", freshToken, "https://evil.example", http.StatusForbidden, "cross_origin", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(auditActions(t, s, cred))
			b := s.browser(t)
			var pResp, xResp *http.Response
			var pBody, xBody string
			s.unchanged(t, tc.audits > 0, func() {
				pResp, pBody = b.post("/console/session/preview", url.Values{"link": {tc.token}}, tc.origin)
				xResp, xBody = b.post("/console/session", confirmed(tc.token), tc.origin)
			})
			for _, r := range []struct {
				resp *http.Response
				body string
			}{{pResp, pBody}, {xResp, xBody}} {
				require.Equal(t, tc.status, r.resp.StatusCode, r.body)
				code, _ := refusalOf(r.body)
				require.Equal(t, tc.refusal, code)
				require.Empty(t, r.resp.Cookies())
			}
			_, pDetail := refusalOf(pBody)
			_, xDetail := refusalOf(xBody)
			require.Equal(t, xDetail, pDetail, "the same words")
			require.Len(t, auditActions(t, s, cred), before+2*tc.audits)
		})
	}
	// The expired link: refused alike, with the way back.
	expired := s.mint(t, bearer)
	s.clock.advance(time.Hour + time.Second)
	s.unchanged(t, false, func() {
		pResp, pBody := s.browser(t).preview(expired.Data.URL)
		xResp, xBody := s.browser(t).post("/console/session", confirmed(tokenOf(expired)), s.url)
		require.Equal(t, http.StatusGone, pResp.StatusCode)
		require.Equal(t, http.StatusGone, xResp.StatusCode)
		for _, body := range []string{pBody, xBody} {
			code, _ := refusalOf(body)
			require.Equal(t, "link_expired", code)
			require.Contains(t, body, `href="https://partner.example/settings"`)
		}
	})
}

func tokenOf(a linkAnswer) string {
	_, token, _ := strings.Cut(a.Data.URL, "#link=")
	return token
}

// The exchange signs in only with the confirmation the page's button
// adds: a post without it (the module's own on load, or anyone else's) is
// refused and spends nothing.
func TestAnExchangeWithoutTheConfirmationIsRefused(t *testing.T) {
	s := newStack(t)
	bearer, _ := s.partner(t, "acme")
	a := s.mint(t, bearer)
	for _, form := range []url.Values{
		{"link": {tokenOf(a)}},
		{"link": {tokenOf(a)}, console.ConfirmField: {"yes"}},
		{"link": {tokenOf(a)}, console.ConfirmField: {""}},
	} {
		s.unchanged(t, false, func() {
			resp, body := s.browser(t).post("/console/session", form, s.url)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
			code, detail := refusalOf(body)
			require.Equal(t, "link_unconfirmed", code)
			require.Contains(t, detail, "Nothing was used")
			require.Empty(t, resp.Cookies())
		})
	}
	resp, body := s.browser(t).open(a.Data.URL)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
}

// A browser signed in as one partner that opens a link of another is told
// so, and stays signed in as before until the person confirms; then the
// old session ends and its credential is revoked, so it does not live on
// unseen. A link of the same partner says that too.
func TestALinkOfAnotherPartnerDoesNotSwitchSilently(t *testing.T) {
	s := newStack(t)
	acme, acmeCred := s.partner(t, "acme")
	globex, globexCred := s.partner(t, "globex")
	first := s.mint(t, acme)
	b := s.browser(t)
	resp, _ := b.open(first.Data.URL)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	acmeSession := s.sessionCredential(t, acmeCred)

	other := s.mint(t, globex)
	var body string
	s.unchanged(t, false, func() { resp, body = b.preview(other.Data.URL) })
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Contains(t, body, `<dd id="confirm-partner">globex</dd>`)
	require.Regexp(t, `<p id="current-session" class="warning" data-same="false">This browser is signed in as partner <strong>acme</strong>`, body)
	require.Contains(t, body, "another partner or environment")
	require.Contains(t, body, `>Sign out of acme (sandbox) and sign in as partner globex (`+globexCred.Tenant+`, sandbox)</button>`)
	_, page := b.get("/console/deliveries")
	require.Contains(t, page, `<strong id="partner">acme</strong>`, "still acme until the person confirms")

	// The same partner's second link says it is the same partner.
	_, body = b.preview(s.mint(t, acme).Data.URL)
	require.Contains(t, body, `data-same="true"`)

	resp, body = b.post("/console/session", confirmed(tokenOf(other)), s.url)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	_, page = b.get("/console/deliveries")
	require.Contains(t, page, `<strong id="partner">globex</strong>`)
	n, err := s.rdb.Exists(context.Background(), "pc:console:{"+first.Data.ID+"}:session").Result()
	require.NoError(t, err)
	require.Zero(t, n, "acme's session ended")
	old, err := s.creds.Get(context.Background(), acmeSession.PublicID)
	require.NoError(t, err)
	require.False(t, old.Active(), "and its credential is revoked")
	require.Contains(t, auditActions(t, s, acmeCred), "session_ended")
}

// Every page of a session says who is signed in (partner, tenant and
// environment) in its header, with the sign-out.
func TestEveryPageSaysWhoIsSignedIn(t *testing.T) {
	s := newStack(t)
	bearer, cred := s.partner(t, "acme")
	b := s.browser(t)
	resp, _ := b.open(s.mint(t, bearer).Data.URL)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	for _, page := range []string{"deliveries", "endpoints", "events", "keys", "verify", "compatibility", "audit"} {
		resp, body := b.get("/console/" + page)
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		require.Contains(t, body, `<p>Signed in as partner <strong id="partner">acme</strong> · tenant <strong id="tenant">`+cred.Tenant+
			`</strong> · <strong id="environment" class="env env-sandbox">sandbox</strong>`, page)
		require.Contains(t, body, `<form method="post" action="/console/signout" class="signout">`, page)
	}
}
