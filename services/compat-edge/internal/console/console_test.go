package console_test

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
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/problem/problemtest"
	"github.com/pcourt/pcourt/services/compat-edge/internal/console"
)

// The console's problem codes are the rows of owner console in docs/problems.md.
func TestCodesAreDocumented(t *testing.T) {
	problemtest.RequireDocumented(t, "console", console.Codes())
}

func TestMintingALink(t *testing.T) {
	s := newStack(t)
	bearer, cred := s.partner(t, "acme")
	a := s.mint(t, bearer, "replay", "view")
	require.Regexp(t, `^`+s.url+`/console/#link=pccl_cl_[a-z2-7]{24}\.[A-Za-z0-9_-]{43}$`, a.Data.URL)
	require.Equal(t, []string{"view", "replay"}, a.Data.Capabilities, "in the documented order")
	require.WithinDuration(t, time.Now().Add(time.Hour), a.Data.ExpiresAt, 5*time.Second)

	// Only the token's hash is at rest.
	_, token, _ := strings.Cut(a.Data.URL, "#link=")
	for _, k := range s.rdb.Keys(context.Background(), "pc:edge:console:*").Val() {
		vals := s.rdb.HGetAll(context.Background(), k).Val()
		for _, v := range vals {
			require.NotContains(t, v, token)
		}
	}
	resp, _ := s.api(t, http.MethodPost, "/api/console/links", bearer, `{"capabilities":["view"],"ttlSeconds":300,"returnUrl":"https://a.example/"}`)
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))

	for name, body := range map[string]string{
		"no view":           `{"capabilities":["replay"],"ttlSeconds":600,"returnUrl":"https://a.example/"}`,
		"unknown":           `{"capabilities":["view","admin"],"ttlSeconds":600,"returnUrl":"https://a.example/"}`,
		"twice":             `{"capabilities":["view","view"],"ttlSeconds":600,"returnUrl":"https://a.example/"}`,
		"ttl short":         `{"capabilities":["view"],"ttlSeconds":299,"returnUrl":"https://a.example/"}`,
		"ttl long":          `{"capabilities":["view"],"ttlSeconds":604801,"returnUrl":"https://a.example/"}`,
		"ttl missing":       `{"capabilities":["view"],"returnUrl":"https://a.example/"}`,
		"http return":       `{"capabilities":["view"],"ttlSeconds":600,"returnUrl":"http://a.example/"}`,
		"javascript return": `{"capabilities":["view"],"ttlSeconds":600,"returnUrl":"javascript:alert(1)"}`,
	} {
		resp, b := s.api(t, http.MethodPost, "/api/console/links", bearer, body)
		require.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode, name)
		require.Contains(t, string(b), `"code":"invalid_console_link"`, name)
	}
	resp, b := s.api(t, http.MethodPost, "/api/console/links", bearer, `{"capabilities":["view"],"ttlSeconds":600,"returnUrl":"https://a.example/","extra":1}`)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(b))
	resp, _ = s.api(t, http.MethodPost, "/api/console/links", "", `{}`)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	claimant, _ := authtest.Mint(t, s.creds, auth.RoleClaimantAgent)
	resp, _ = s.api(t, http.MethodPost, "/api/console/links", claimant, `{"capabilities":["view"],"ttlSeconds":600,"returnUrl":"https://a.example/"}`)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, _ = s.api(t, http.MethodGet, "/api/console/links", bearer, "")
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	// Every other /api path still reaches the proxy.
	resp, _ = s.api(t, http.MethodGet, "/api/cases/x", "", "")
	require.Equal(t, http.StatusTeapot, resp.StatusCode)

	trail, err := s.store.AuditTrail(context.Background(), console.Scope{Tenant: cred.Tenant, Environment: "sandbox", PartnerID: "acme"}, 10)
	require.NoError(t, err)
	require.Equal(t, "link_minted", trail[len(trail)-1].Action)
	require.Equal(t, cred.PublicID, trail[len(trail)-1].Actor)
}

func TestOpeningALink(t *testing.T) {
	s := newStack(t)
	bearer, cred := s.partner(t, "acme")
	s.owner.addEndpoint(scopeKey(cred), "we_a", "https://acme.example/hook")
	v := loadVectors(t)
	s.owner.addDelivery(t, scopeKey(cred), "dlv_a1", "we_a", "failed", v, "accept_basic")
	a := s.mint(t, bearer)

	b := s.browser(t)
	resp, body := b.open(a.Data.URL)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	require.Equal(t, "/console/deliveries", resp.Header.Get("Location"))
	ck := resp.Cookies()[0]
	require.Equal(t, console.CookieName, ck.Name)
	require.True(t, ck.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, ck.SameSite)
	require.Equal(t, "/console", ck.Path)

	resp, page := b.get("/console/deliveries")
	require.Equal(t, http.StatusOK, resp.StatusCode, page)
	require.Contains(t, page, "dlv_a1")
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'")
	require.Equal(t, "private, no-store", resp.Header.Get("Cache-Control"))

	// The console acted with its own short-lived credential of the
	// partner, never the minting one.
	s.owner.mu.Lock()
	seen := s.owner.bearers[len(s.owner.bearers)-1]
	s.owner.mu.Unlock()
	require.NotEqual(t, cred.PublicID, seen.PublicID)
	require.Equal(t, "acme", seen.PartnerID)
	require.Equal(t, cred.Tenant, seen.Tenant)
	require.WithinDuration(t, a.Data.ExpiresAt, seen.ExpiresAt, time.Second)

	// Opened again, in this browser or another: refused as used.
	resp, body = b.open(a.Data.URL)
	require.Equal(t, http.StatusGone, resp.StatusCode)
	require.Contains(t, body, `data-refusal="link_used"`)
	resp, body = s.browser(t).open(a.Data.URL)
	require.Equal(t, http.StatusGone, resp.StatusCode)
	require.NotContains(t, body, "dlv_a1")

	// Forged: right link id, wrong secret; and no link at all.
	forged := a.Data.URL[:len(a.Data.URL)-5] + "AAAAA"
	resp, body = s.browser(t).open(forged)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Contains(t, body, `data-refusal="link_invalid"`)
	resp, _ = s.browser(t).open("#link=garbage")
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	// A post from another origin is refused before the token is read.
	fresh := s.mint(t, bearer)
	_, frag, _ := strings.Cut(fresh.Data.URL, "#link=")
	resp, body = s.browser(t).post("/console/session", url.Values{"link": {frag}}, "https://evil.example")
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Contains(t, body, `data-refusal="cross_origin"`)
	resp, _ = s.browser(t).open(fresh.Data.URL)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "the refused post spent nothing")

	// Without a session no page shows anything.
	resp, body = s.browser(t).get("/console/deliveries")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.NotContains(t, body, "dlv_a1")

	actions := auditActions(t, s, cred)
	require.Contains(t, actions, "link_exchanged")
	require.Contains(t, actions, "link_reuse_refused")
}

func auditActions(t *testing.T, s *stack, cred auth.Credential) []string {
	t.Helper()
	trail, err := s.store.AuditTrail(context.Background(), console.Scope{Tenant: cred.Tenant, Environment: string(cred.Environment), PartnerID: cred.PartnerID}, 100)
	require.NoError(t, err)
	var out []string
	for _, e := range trail {
		out = append(out, e.Action)
	}
	return out
}

func TestAnExpiredLinkLeadsBack(t *testing.T) {
	s := newStack(t)
	bearer, _ := s.partner(t, "acme")
	a := s.mint(t, bearer)
	s.clock.advance(time.Hour + time.Second)
	resp, body := s.browser(t).open(a.Data.URL)
	require.Equal(t, http.StatusGone, resp.StatusCode)
	require.Contains(t, body, `data-refusal="link_expired"`)
	require.Contains(t, body, `href="https://partner.example/settings"`)
}

func TestChangesNeedTheSessionsTokenAndCapability(t *testing.T) {
	s := newStack(t)
	bearer, cred := s.partner(t, "acme")
	v := loadVectors(t)
	s.owner.addEndpoint(scopeKey(cred), "we_a", "https://acme.example/hook")
	s.owner.addDelivery(t, scopeKey(cred), "dlv_a1", "we_a", "failed", v, "accept_basic")
	b := s.browser(t)
	resp, _ := b.open(s.mint(t, bearer, "view", "manage_endpoints").Data.URL)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, page := b.get("/console/endpoints")
	csrf, key := formValue(t, page, "csrf"), formValue(t, page, "key")

	form := url.Values{"url": {"https://acme.example/new"}, "eventTypes": {"opened", "answer_filed"}, "key": {key}}
	resp, body := b.post("/console/endpoints", form, s.url)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Contains(t, body, `data-refusal="csrf_mismatch"`)
	form.Set("csrf", "x"+csrf[1:])
	resp, _ = b.post("/console/endpoints", form, s.url)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	form.Set("csrf", csrf)
	resp, _ = b.post("/console/endpoints", form, "https://evil.example")
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Len(t, s.owner.eps[scopeKey(cred)], 1, "nothing was created")

	// All types needs the confirmation.
	resp, body = b.post("/console/endpoints", url.Values{"url": {"https://acme.example/all"}, "key": {key}, "csrf": {csrf}}, s.url)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "all_types_unconfirmed")
	resp, body = b.post("/console/endpoints", url.Values{"url": {"https://acme.example/x"}, "eventTypes": {"nope"}, "key": {key}, "csrf": {csrf}}, s.url)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)

	resp, _ = b.post("/console/endpoints", form, s.url)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Len(t, s.owner.eps[scopeKey(cred)], 2)
	// The API's own refusals show as they came.
	form.Set("url", "http://acme.example/plain")
	resp, body = b.post("/console/endpoints", form, s.url)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "invalid_endpoint_url")

	resp, _ = b.post("/console/endpoints/we_a/disable", url.Values{"csrf": {csrf}}, s.url)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "disabled", s.owner.eps[scopeKey(cred)][0]["status"])

	// Replay is not a capability of this link.
	resp, body = b.post("/console/deliveries/dlv_a1/replay", url.Values{"csrf": {csrf}, "key": {key}}, s.url)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Contains(t, body, `data-refusal="capability_missing"`)

	require.Contains(t, auditActions(t, s, cred), "endpoint_created")
	require.Contains(t, auditActions(t, s, cred), "endpoint_disabled")
	_, page = b.get("/console/audit")
	require.Contains(t, page, "endpoint_disabled")
}

func TestDeliveriesReplayAndRecovery(t *testing.T) {
	s := newStack(t)
	bearer, cred := s.partner(t, "acme")
	v := loadVectors(t)
	s.owner.addEndpoint(scopeKey(cred), "we_a", "https://acme.example/hook")
	for i := range 30 {
		s.owner.addDelivery(t, scopeKey(cred), "dlv_"+string(rune('a'+i%26))+string(rune('a'+i/26)), "we_a", map[bool]string{true: "failed", false: "delivered"}[i%3 == 0], v, "accept_basic")
	}
	b := s.browser(t)
	b.open(s.mint(t, bearer).Data.URL)

	_, page := b.get("/console/deliveries")
	require.Equal(t, 25, strings.Count(page, `<tr data-status=`))
	require.Contains(t, page, `id="next-page"`)
	_, page = b.get("/console/deliveries?status=failed")
	require.Equal(t, 10, strings.Count(page, `data-status="failed"`))
	require.NotContains(t, page, `data-status="delivered"`)

	resp, page := b.get("/console/deliveries/dlv_aa")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, page, "pcwh_sandbox_2026-11-23_73b7bc42a572")
	require.Contains(t, page, "http_status")
	require.Contains(t, page, "first 4 KiB shown")
	require.Contains(t, page, strings.Repeat("x", 4096)+"</pre>")

	csrf, key := formValue(t, page, "csrf"), formValue(t, page, "key")
	resp, _ = b.post("/console/deliveries/dlv_aa/replay", url.Values{"csrf": {csrf}, "key": {key}}, s.url)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Location"), "/console/deliveries/dlv_replay")

	// The count comes before the confirmation.
	window := url.Values{"since": {"2026-11-23T00:00:00"}, "until": {"2026-11-24T00:00:00"}}
	_, page = b.get("/console/endpoints/we_a/recover?" + window.Encode())
	require.Contains(t, page, `<strong>10</strong> deliveries would be replayed`)
	window.Set("csrf", csrf)
	window.Set("key", formValue(t, page, "key"))
	resp, _ = b.post("/console/endpoints/we_a/recover", window, s.url)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Contains(t, auditActions(t, s, cred), "recovery_started")

	// Another partner's ids in the URL read as absent.
	resp, _ = b.get("/console/deliveries/dlv_other")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestPartnersSeeOnlyTheirOwn(t *testing.T) {
	s := newStack(t)
	acme, acmeCred := s.partner(t, "acme")
	globex, globexCred := s.partner(t, "globex")
	v := loadVectors(t)
	s.owner.addEndpoint(scopeKey(acmeCred), "we_a", "https://acme.example/hook")
	s.owner.addDelivery(t, scopeKey(acmeCred), "dlv_acme", "we_a", "failed", v, "accept_basic")
	b := s.browser(t)
	b.open(s.mint(t, globex).Data.URL)
	for _, p := range []string{"/console/deliveries", "/console/endpoints", "/console/audit", "/console/compatibility"} {
		_, page := b.get(p)
		require.NotContains(t, page, "dlv_acme", p)
		require.NotContains(t, page, "acme.example", p)
	}
	resp, _ := b.get("/console/deliveries/dlv_acme")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	// Revoking: another partner cannot; the owner can, and the session ends
	// with its credential.
	a := s.mint(t, acme)
	ab := s.browser(t)
	ab.open(a.Data.URL)
	resp, _ = s.api(t, http.MethodDelete, "/api/console/links/"+a.Data.ID, globex, "")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = ab.get("/console/deliveries")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	s.owner.mu.Lock()
	sessionCred := s.owner.bearers[len(s.owner.bearers)-1]
	s.owner.mu.Unlock()
	resp, _ = s.api(t, http.MethodDelete, "/api/console/links/"+a.Data.ID, acme, "")
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	resp, _ = ab.get("/console/deliveries")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	got, err := s.creds.Get(context.Background(), sessionCred.PublicID)
	require.NoError(t, err)
	require.False(t, got.Active(), "the session's credential is revoked")
	require.Contains(t, auditActions(t, s, acmeCred), "link_revoked")
	require.NotContains(t, auditActions(t, s, globexCred), "link_revoked")
}

func TestCompatibilityFromTheLedger(t *testing.T) {
	s := newStack(t)
	bearer, cred := s.partner(t, "acme")
	b := s.browser(t)
	b.open(s.mint(t, bearer).Data.URL)
	_, page := b.get("/console/compatibility")
	require.Contains(t, page, `id="compat-none"`)

	first := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	s.recordUse(t, cred, "/api/v2/cases/{caseId}", first, first.Add(48*time.Hour), 7)
	s.env = policyEnv("2026-03-01")
	_, page = b.get("/console/compatibility")
	require.Contains(t, page, `data-route="/api/v2/cases/{caseId}"`)
	require.Contains(t, page, "/api/cases/{id}")
	require.Contains(t, page, "<td>7</td>")
	require.Regexp(t, `(fix by|past its Sunset of) 20\d\d-\d\d-\d\d`, page)
}

func TestKeysAndVerifyPages(t *testing.T) {
	s := newStack(t)
	bearer, cred := s.partner(t, "acme")
	s.owner.addEndpoint(scopeKey(cred), "we_a", "https://acme.example/hook")
	s.owner.addDelivery(t, scopeKey(cred), "dlv_a1", "we_a", "delivered", loadVectors(t), "accept_rotated_key")
	b := s.browser(t)
	b.open(s.mint(t, bearer).Data.URL)
	_, page := b.get("/console/keys")
	require.Contains(t, page, `data-kid="pcwh_sandbox_2026-11-23_73b7bc42a572"`)
	require.Regexp(t, `data-kid="pcwh_sandbox_2027-02-01_fe79fe0ab7b7">.*signs-now`, page)
	_, page = b.get("/console/verify")
	require.Contains(t, page, `<script type="application/json" id="jwks">{"keys":[`)
	var anyJSON map[string]any
	start := strings.Index(page, `id="jwks">`) + len(`id="jwks">`)
	require.NoError(t, json.Unmarshal([]byte(page[start:start+strings.Index(page[start:], "</script>")]), &anyJSON))
}
