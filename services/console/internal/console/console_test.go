package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/problem/problemtest"
	"github.com/pcourt/pcourt/services/console/internal/console"
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
	for _, k := range s.rdb.Keys(context.Background(), "pc:console:*").Val() {
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
	rcv := newReceiver(t, http.StatusNoContent)
	s.endpoint(t, bearer, rcv.url)
	s.openCase(t, cred, "case_a")
	waitFor(t, "the delivery", func() bool { return len(rcv.received()) == 1 })
	dlv := s.deliveries(t, bearer, "")[0]["id"].(string)
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
	require.Contains(t, page, dlv)
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'")
	require.Equal(t, "private, no-store", resp.Header.Get("Cache-Control"))

	// The console acted with its own short-lived credential of the
	// partner, never the minting one.
	seen := s.sessionCredential(t, cred)
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
	require.NotContains(t, body, dlv)

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
	require.NotContains(t, body, dlv)

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
	rcv := newReceiver(t, http.StatusInternalServerError)
	first := s.endpoint(t, bearer, rcv.url)
	s.openCase(t, cred, "case_a")
	waitFor(t, "the failed delivery", func() bool { return len(s.deliveries(t, bearer, "status=failed")) == 1 })
	dlv := s.deliveries(t, bearer, "")[0]["id"].(string)
	countEndpoints := func() int {
		_, out := s.hookAPI(t, http.MethodGet, "/api/webhooks/endpoints", bearer, nil)
		return len(out["data"].([]any))
	}
	b := s.browser(t)
	resp, _ := b.open(s.mint(t, bearer, "view", "manage_endpoints").Data.URL)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, page := b.get("/console/endpoints")
	csrf, key := formValue(t, page, "csrf"), formValue(t, page, "key")

	form := url.Values{"url": {"https://acme.example/new"}, "eventTypes": {"opened", "answer_filed"}, "key": {key}}
	resp, body := b.post("/console/endpoints", form, s.url)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Contains(t, body, `data-refusal="csrf_mismatch"`)
	forged := "x" + csrf[1:]
	if csrf[0] == 'x' { // one token in 64 starts with x
		forged = "y" + csrf[1:]
	}
	form.Set("csrf", forged)
	resp, _ = b.post("/console/endpoints", form, s.url)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	form.Set("csrf", csrf)
	resp, _ = b.post("/console/endpoints", form, "https://evil.example")
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Equal(t, 1, countEndpoints(), "nothing was created")

	// All types needs the confirmation.
	resp, body = b.post("/console/endpoints", url.Values{"url": {"https://acme.example/all"}, "key": {key}, "csrf": {csrf}}, s.url)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "all_types_unconfirmed")
	resp, body = b.post("/console/endpoints", url.Values{"url": {"https://acme.example/x"}, "eventTypes": {"nope"}, "key": {key}, "csrf": {csrf}}, s.url)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)

	resp, _ = b.post("/console/endpoints", form, s.url)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, 2, countEndpoints())
	// The API's own refusals show as they came.
	form.Set("url", "https://169.254.169.254/latest")
	form.Set("key", formValue(t, page, "key")+"2")
	resp, body = b.post("/console/endpoints", form, s.url)
	require.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode, body)
	require.Contains(t, body, "endpoint_url_forbidden")
	require.Equal(t, 2, countEndpoints())

	resp, _ = b.post("/console/endpoints/"+first+"/disable", url.Values{"csrf": {csrf}}, s.url)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, ep := s.hookAPI(t, http.MethodGet, "/api/webhooks/endpoints/"+first, bearer, nil)
	require.Equal(t, "disabled_by_partner", ep["data"].(map[string]any)["status"])

	// Replay is not a capability of this link.
	resp, body = b.post("/console/deliveries/"+dlv+"/replay", url.Values{"csrf": {csrf}, "key": {key}}, s.url)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Contains(t, body, `data-refusal="capability_missing"`)
	require.Len(t, s.deliveries(t, bearer, ""), 1, "nothing was replayed")

	require.Contains(t, auditActions(t, s, cred), "endpoint_created")
	require.Contains(t, auditActions(t, s, cred), "endpoint_disabled")
	_, page = b.get("/console/audit")
	require.Contains(t, page, "endpoint_disabled")
}

func TestDeliveriesReplayAndRecovery(t *testing.T) {
	s := newStack(t)
	bearer, cred := s.partner(t, "acme")
	// Every third event of the case fails, with a 5000-byte answer.
	rcv := newReceiver(t, http.StatusNoContent)
	rcv.fail = func(body []byte) bool {
		var ev struct{ Sequence int }
		_ = json.Unmarshal(body, &ev)
		return ev.Sequence%3 == 1
	}
	rcv.failBody = strings.Repeat("x", 5000)
	ep := s.endpoint(t, bearer, rcv.url)
	types := make([]string, 30)
	for i := range types {
		types[i] = "message_posted"
	}
	start := time.Now().UTC().Add(-2 * time.Second)
	s.openCase(t, cred, "case_a", types...)
	waitFor(t, "30 finished deliveries", func() bool {
		return len(s.deliveries(t, bearer, "status=failed"))+len(s.deliveries(t, bearer, "status=delivered")) == 30
	})
	b := s.browser(t)
	b.open(s.mint(t, bearer).Data.URL)

	_, page := b.get("/console/deliveries")
	require.Equal(t, 25, strings.Count(page, `<tr data-status=`))
	require.Contains(t, page, `id="next-page"`)
	// The chart of the last 24 hours draws the API's figures, hour by
	// hour: the 30, 10 failed and 20 delivered.
	var want, drawn []string
	for try := 0; try < 3 && (want == nil || !slices.Equal(want, drawn)); try++ {
		if try > 0 {
			_, page = b.get("/console/deliveries") // a clock hour turned between the two
		}
		want, drawn = s.apiOutcomes(t, bearer), drawnOutcomes(page)
	}
	require.Len(t, want, 24)
	require.Equal(t, want, drawn, "the chart draws the API's figures")
	var nDelivered, nFailed int
	for _, m := range outcomeBars.FindAllStringSubmatch(page, -1) {
		d, _ := strconv.Atoi(m[2])
		f, _ := strconv.Atoi(m[3])
		nDelivered, nFailed = nDelivered+d, nFailed+f
	}
	require.Equal(t, [2]int{20, 10}, [2]int{nDelivered, nFailed}, "the listing's own outcomes")
	require.Equal(t, 10, sumCounts(page, "fail"), "each failed segment is drawn with its count")
	require.Equal(t, 20, sumCounts(page, "ok"))
	// Each segment's height is its count on the busiest hour's scale.
	busiest := 0
	for _, m := range outcomeBars.FindAllStringSubmatch(page, -1) {
		n := 0
		for _, f := range m[2:] {
			c, _ := strconv.Atoi(f)
			n += c
		}
		busiest = max(busiest, n)
	}
	segments := regexp.MustCompile(`<rect class="[a-z]+" data-count="(\d+)" x="[^"]+" y="[^"]+" width="[^"]+" height="([^"]+)">`).FindAllStringSubmatch(page, -1)
	require.NotEmpty(t, segments)
	for _, m := range segments {
		n, _ := strconv.Atoi(m[1])
		h, err := strconv.ParseFloat(m[2], 64)
		require.NoError(t, err)
		require.InDelta(t, 59*float64(n)/float64(busiest), h, 0.01, "a segment of %d of the busiest hour's %d", n, busiest)
	}
	require.Contains(t, page, "30 in all, 20 delivered, 10 failed, 0 cancelled, 0 pending or retrying", "the text alternative says it")
	hourLink := regexp.MustCompile(`<td><a href="(/console/deliveries\?since=[^"]+)">`).FindAllStringSubmatch(page, -1)
	require.NotEmpty(t, hourLink, "an hour with deliveries links to them")
	_, hourPage := b.get(html.UnescapeString(hourLink[len(hourLink)-1][1]))
	require.Contains(t, hourPage, `<tr data-status=`, "the hour's deliveries")
	_, page = b.get("/console/deliveries?status=failed")
	require.Equal(t, 10, strings.Count(page, `data-status="failed"`))
	require.NotContains(t, page, `data-status="delivered"`)
	require.Equal(t, 10, strings.Count(page, `<td class="http">500</td>`))

	// The next page keeps the filters; the two pages hold the 30 once each.
	_, page = b.get("/console/deliveries?eventType=message_posted&caseId=case_a")
	require.Equal(t, 25, strings.Count(page, `<tr data-status=`))
	next := regexp.MustCompile(`id="next-page" href="([^"]+)"`).FindStringSubmatch(page)
	require.NotNil(t, next)
	nextURL := html.UnescapeString(next[1])
	require.Contains(t, nextURL, "eventType=message_posted")
	require.Contains(t, nextURL, "caseId=case_a")
	_, page = b.get(nextURL)
	require.Equal(t, 5, strings.Count(page, `<tr data-status=`))
	for _, q := range []string{"eventType=answer_filed", "caseId=case_b", "responseStatus=404", "until=" + start.Format("2006-01-02T15:04:05")} {
		_, page = b.get("/console/deliveries?" + q)
		require.Contains(t, page, `id="no-deliveries"`, q)
	}
	resp, page := b.get("/console/deliveries?since=yesterday")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, page, `data-refusal="invalid_query"`)
	resp, page = b.get("/console/deliveries?responseStatus=99")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "the API's refusal")
	require.Contains(t, page, `data-refusal="invalid_query"`)

	failed := s.deliveries(t, bearer, "status=failed")[0]["id"].(string)
	resp, page = b.get("/console/deliveries/" + failed)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var sent string
	for _, r := range rcv.received() {
		if strings.Contains(string(r.Body), failed) {
			sent = string(r.Body)
		}
	}
	require.NotEmpty(t, sent)
	require.Contains(t, page, `<span class="b">`+html.EscapeString(sent)+`</span>`, "the exact signed body")
	kid := rcv.keyID(t)
	require.Contains(t, page, `<dd class="key-id">`+kid+`</dd>`)
	require.Contains(t, page, "http_5xx")
	require.Contains(t, page, "HTTP 500")
	// The receiver listens on loopback, which only the development
	// allowlist opens: the webhooks service keeps nothing of its answer
	// (TestADeliveryShowsTheFirst4KiBOfTheAnswer has the page's part).
	require.Contains(t, page, `<pre class="body"></pre>`, "the internal receiver's answer is withheld")
	require.NotContains(t, page, "xxxx")

	csrf := formValue(t, page, "csrf")

	// The count comes before the confirmation.
	time.Sleep(time.Second) // the window ends at a whole second, after the last delivery
	window := url.Values{"since": {start.Format("2006-01-02T15:04:05")}, "until": {time.Now().UTC().Format("2006-01-02T15:04:05")}}
	_, page = b.get("/console/endpoints/" + ep + "/recover?" + window.Encode())
	require.Contains(t, page, `<strong>10</strong> deliveries would be replayed`)
	window.Set("csrf", csrf)
	window.Set("key", formValue(t, page, "key"))
	resp, _ = b.post("/console/endpoints/"+ep+"/recover", window, s.url)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Contains(t, auditActions(t, s, cred), "recovery_started")
	// The recovery's page follows it with the API's figures: queued,
	// delivered, failed; the same event fails again, so each replay
	// fails too.
	progress := resp.Header.Get("Location")
	require.Regexp(t, `^/console/endpoints/`+ep+`/recoveries/rcv_[0-9a-f]{24}$`, progress)
	recoveryID := progress[strings.LastIndex(progress, "/")+1:]
	_, page = b.get(progress)
	require.Contains(t, page, `<main data-page="recovery">`)
	require.Contains(t, page, `<p id="recovery-summary" role="status" aria-live="polite" aria-atomic="true">`)
	require.Regexp(t, `<progress id="recovery-scan" max="\d+" value="\d+">`, page)
	require.Regexp(t, `<progress id="recovery-sent" max="\d+" value="\d+">`, page)
	require.Contains(t, page, `src="/console/static/recovery.js"`)
	waitFor(t, "the recovery over, its ten replays failed", func() bool {
		_, page = b.get(progress)
		return strings.Contains(page, `data-finished="true"`)
	})
	status, job := s.hookAPI(t, http.MethodGet, "/api/webhooks/endpoints/"+ep+"/recoveries/"+recoveryID, bearer, nil)
	require.Equal(t, http.StatusOK, status)
	j, replays := job["data"].(map[string]any), job["data"].(map[string]any)["replays"].(map[string]any)
	require.Contains(t, page, fmt.Sprintf(`data-status="%v" data-finished="true" data-total="%v" data-scanned="%v" data-scheduled="%v"`,
		j["status"], j["total"], j["scanned"], j["scheduled"]), "the API's figures")
	require.Contains(t, page, fmt.Sprintf(`data-delivered="%v" data-failed="%v" data-cancelled="%v" data-pending="%v"`,
		replays["delivered"], replays["failed"], replays["cancelled"], replays["scheduled"]))
	require.EqualValues(t, 10, j["scheduled"])
	require.EqualValues(t, 10, replays["failed"])
	require.Contains(t, page, "10 of 10 queued, 0 delivered, 10 failed. Done.")
	require.Contains(t, page, fmt.Sprintf(`<progress id="recovery-scan" max="%v" value="%v">`, j["total"], j["scanned"]), "the whole window read")
	require.Contains(t, page, `<progress id="recovery-sent" max="10" value="10">`, "every replay sent to an outcome")
	require.Contains(t, page, `<a id="recovery-deliveries" href="/console/deliveries?endpointId=`+ep+`">`)
	n := 0
	for _, d := range s.deliveries(t, bearer, "endpointId="+ep) {
		if d["trigger"] == "recovery" && d["replayOf"] != nil {
			require.Equal(t, "failed", d["status"])
			n++
		}
	}
	require.Equal(t, 10, n, "the listing's replays are the figures")
	resp, page = b.get("/console/endpoints/" + ep + "/recoveries/rcv_000000000000000000000000")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Contains(t, page, `data-refusal="recovery_not_found"`, "the API's refusal")

	// One replay, linked to its original.
	_, page = b.get("/console/deliveries/" + failed)
	resp, _ = b.post("/console/deliveries/"+failed+"/replay", url.Values{"csrf": {csrf}, "key": {formValue(t, page, "key")}}, s.url)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Regexp(t, `^/console/deliveries/dlv_[0-9a-f]{24}$`, resp.Header.Get("Location"))
	_, page = b.get(resp.Header.Get("Location"))
	require.Contains(t, page, "replay of <a href=\"/console/deliveries/"+failed+"\">")
	require.Contains(t, auditActions(t, s, cred), "delivery_replayed")

	// Another partner's ids in the URL read as absent.
	resp, _ = b.get("/console/deliveries/dlv_other")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// A delivery's page shows the first 4 KiB of a receiver's answer (the
// webhooks service keeps 4 KiB and more of a public receiver's).
func TestADeliveryShowsTheFirst4KiBOfTheAnswer(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		shown   string
		clipped bool
	}{
		{"none", "", "", false},
		{"short", "busy", "busy", false},
		{"exactly 4 KiB", strings.Repeat("x", 4096), strings.Repeat("x", 4096), false},
		{"longer", strings.Repeat("x", 5000), strings.Repeat("x", 4096), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			shown, clipped := console.ShownAnswer(tt.body)
			require.Equal(t, tt.shown, shown)
			require.Equal(t, tt.clipped, clipped)
		})
	}
}

func TestPartnersSeeOnlyTheirOwn(t *testing.T) {
	s := newStack(t)
	acme, acmeCred := s.partner(t, "acme")
	globex, globexCred := s.partner(t, "globex")
	rcv := newReceiver(t, http.StatusInternalServerError)
	ep := s.endpoint(t, acme, rcv.url)
	s.openCase(t, acmeCred, "case_a")
	waitFor(t, "acme's delivery", func() bool { return len(s.deliveries(t, acme, "")) == 1 })
	dlv := s.deliveries(t, acme, "")[0]["id"].(string)
	b := s.browser(t)
	b.open(s.mint(t, globex).Data.URL)
	for _, p := range []string{"/console/deliveries", "/console/endpoints", "/console/audit", "/console/compatibility"} {
		_, page := b.get(p)
		require.NotContains(t, page, dlv, p)
		require.NotContains(t, page, ep, p)
		require.NotContains(t, page, rcv.url, p)
	}
	for _, p := range []string{"/console/deliveries/" + dlv, "/console/endpoints/" + ep + "/edit", "/console/endpoints/" + ep + "/recover"} {
		resp, page := b.get(p)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, p)
		require.NotContains(t, page, rcv.url, p)
	}
	_, page := b.get("/console/endpoints")
	csrf, key := formValue(t, page, "csrf"), formValue(t, page, "key")
	for i, p := range []string{"/console/endpoints/" + ep + "/disable", "/console/endpoints/" + ep + "/test", "/console/endpoints/" + ep, "/console/deliveries/" + dlv + "/replay"} {
		resp, _ := b.post(p, url.Values{"csrf": {csrf}, "key": {key + strconv.Itoa(i)}, "url": {"https://globex.example/"}, "allTypes": {"yes"}, "type": {"opened"}}, s.url)
		require.Equal(t, http.StatusNotFound, resp.StatusCode, p)
	}
	_, got := s.hookAPI(t, http.MethodGet, "/api/webhooks/endpoints/"+ep, acme, nil)
	require.Equal(t, "enabled", got["data"].(map[string]any)["status"], "globex changed nothing")
	require.Equal(t, rcv.url, got["data"].(map[string]any)["url"])
	require.Len(t, s.deliveries(t, acme, ""), 1)

	// Revoking: another partner cannot; the owner can, and the session ends
	// with its credential.
	a := s.mint(t, acme)
	ab := s.browser(t)
	ab.open(a.Data.URL)
	resp, _ := s.api(t, http.MethodDelete, "/api/console/links/"+a.Data.ID, globex, "")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = ab.get("/console/deliveries")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sessionCred := s.sessionCredential(t, acmeCred)
	resp, _ = s.api(t, http.MethodDelete, "/api/console/links/"+a.Data.ID, acme, "")
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	resp, _ = ab.get("/console/deliveries")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	revoked, err := s.creds.Get(context.Background(), sessionCred.PublicID)
	require.NoError(t, err)
	require.False(t, revoked.Active(), "the session's credential is revoked")
	require.Contains(t, auditActions(t, s, acmeCred), "link_revoked")
	require.NotContains(t, auditActions(t, s, globexCred), "link_revoked")
}

func TestCompatibilityFromTheLedger(t *testing.T) {
	s := newStack(t)
	bearer, _ := s.partner(t, "acme")
	globex, _ := s.partner(t, "globex")
	b := s.browser(t)
	b.open(s.mint(t, bearer).Data.URL)
	_, page := b.get("/console/compatibility")
	require.Contains(t, page, `id="compat-none"`)

	// Retirement announcements on; seven calls of an alias through the
	// edge, the last with request id req_sample_7, and one by another
	// partner.
	s.setCompat(t, policyEnv("2026-03-01"))
	for i := 1; i <= 7; i++ {
		s.callAlias(t, bearer, "/api/v2/cases/cs_"+strconv.Itoa(i), "req_sample_"+strconv.Itoa(i))
	}
	s.callAlias(t, globex, "/api/v2/cases/cs_9", "req_globex")
	waitFor(t, "the ledger to count the seven calls", func() bool {
		_, page = b.get("/console/compatibility")
		return strings.Contains(page, `<td class="count">7</td>`)
	})
	require.Contains(t, page, `data-route="/api/v2/cases/{caseId}"`)
	require.Contains(t, page, "/api/cases/{id}")
	require.Contains(t, page, `<td class="last-24h">7</td><td class="last-30d">7</td><td class="count">7</td>`, "acme's calls only")
	require.Contains(t, page, `<td class="sample"><code>req_sample_7</code></td>`)
	require.NotContains(t, page, "req_globex")
	require.Contains(t, page, `<td class="extension">none</td>`)
	require.Contains(t, page, `none scheduled`)
	require.Regexp(t, `(fix by|past its Sunset of) 20\d\d-\d\d-\d\d`, page)

	// Another partner's extension changes nothing here.
	now := time.Now().UTC()
	globexUntil := now.AddDate(1, 1, 0).Format(time.DateOnly)
	s.admin(t, http.MethodPut, "/families/v2-cases/extensions/globex", map[string]string{"sunset": globexUntil})
	_, page = b.get("/console/compatibility")
	require.Contains(t, page, `<td class="extension">none</td>`)
	require.NotContains(t, page, globexUntil)

	// An approved extension for this partner moves its Sunset and status;
	// the brownout calendar is listed.
	extension := now.AddDate(1, 0, 0).Format(time.DateOnly)
	s.admin(t, http.MethodPut, "/families/v2-cases/extensions/acme", map[string]string{"sunset": extension})
	brownout := s.scheduleBrownout(t, "v2-cases")
	_, page = b.get("/console/compatibility")
	require.Contains(t, page, `<td class="extension">approved to `+extension+`</td>`)
	require.Contains(t, page, `<td class="sunset">`+extension+`</td>`)
	require.Contains(t, page, `<td class="status">fix by `+extension+`</td>`)
	require.Contains(t, page, "<li>"+brownout[0].Format("2006-01-02 15:04:05Z")+" – "+brownout[1].Format("2006-01-02 15:04:05Z")+"</li>")
	require.NotContains(t, page, globexUntil)
}

func TestKeysAndVerifyPages(t *testing.T) {
	s := newStack(t)
	bearer, cred := s.partner(t, "acme")
	rcv := newReceiver(t, http.StatusNoContent)
	s.endpoint(t, bearer, rcv.url)
	s.openCase(t, cred, "case_a")
	waitFor(t, "the delivery recorded", func() bool { return len(s.deliveries(t, bearer, "status=delivered")) == 1 })
	kid := rcv.keyID(t)
	b := s.browser(t)
	b.open(s.mint(t, bearer).Data.URL)
	_, page := b.get("/console/keys")
	require.Regexp(t, `data-kid="`+kid+`" data-state="active">.*signs-now.*signed your newest attempt`, page)
	require.Regexp(t, `data-kid="`+kid+`" data-state="active"><td><code>[^<]+</code></td><td class="state">active</td><td>\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ</td>`, page)
	require.NotContains(t, page, `"d":`, "no private key")
	trail, err := s.store.AuditTrail(context.Background(), console.Scope{Tenant: cred.Tenant, Environment: "sandbox", PartnerID: "acme"}, 10)
	require.NoError(t, err)
	require.Equal(t, "keys_viewed", trail[0].Action, "viewing the keys is audited")
	require.Contains(t, trail[0].Detail, kid)
	_, page = b.get("/console/verify")
	require.Contains(t, page, `<script type="application/json" id="jwks">{"keys":[`)
	require.Contains(t, page, `<script type="application/json" id="jwks-conformance">{"keys":[{`)
	require.Contains(t, page, `"kid":"conformance-key-a.seed-is-public.not-a-real-key"`, "the conformance key A, for the Events page's examples")
	var anyJSON map[string]any
	start := strings.Index(page, `id="jwks">`) + len(`id="jwks">`)
	require.NoError(t, json.Unmarshal([]byte(page[start:start+strings.Index(page[start:], "</script>")]), &anyJSON))
}

// The endpoints page shows each endpoint's health from the API; an
// endpoint is edited through PATCH, sent a test event, and a disabled one
// is re-enabled and its failed window replayed in one confirmation.
func TestEndpointHealthEditTestEventAndOneStepRecovery(t *testing.T) {
	s := newStack(t)
	bearer, cred := s.partner(t, "acme")
	rcv := newReceiver(t, http.StatusServiceUnavailable)
	ep := s.endpoint(t, bearer, rcv.url, "opened")
	s.openCase(t, cred, "case_a")
	waitFor(t, "the failed delivery", func() bool { return len(s.deliveries(t, bearer, "status=failed")) == 1 })
	original := s.deliveries(t, bearer, "status=failed")[0]["id"].(string)
	// The sender records the endpoint's health just after the delivery.
	waitFor(t, "the health of both attempts", func() bool {
		_, h := s.hookAPI(t, http.MethodGet, "/api/webhooks/endpoints/"+ep+"/health", bearer, nil)
		d := h["data"].(map[string]any)
		return d["attempts"] == float64(2) && d["consecutiveFailures"] == float64(2)
	})

	b := s.browser(t)
	b.open(s.mint(t, bearer).Data.URL)
	_, page := b.get("/console/endpoints")
	require.Contains(t, page, "0.0 % of 2 attempts succeeded")
	require.Contains(t, page, "2 consecutive failures since")
	require.Regexp(t, `Disabled on \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ if failures go on`, page)
	require.Contains(t, page, `class="recover-window"`)
	csrf, key := formValue(t, page, "csrf"), formValue(t, page, "key")

	// Edit: the picker shows the current types; choosing none needs the
	// confirmation; the change goes through PATCH.
	_, page = b.get("/console/endpoints/" + ep + "/edit")
	require.Contains(t, page, `value="opened" checked`)
	require.NotContains(t, page, `value="answer_filed" checked`)
	resp, body := b.post("/console/endpoints/"+ep, url.Values{"csrf": {csrf}, "url": {rcv.url}, "description": {"orders"}}, s.url)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "all_types_unconfirmed")
	resp, body = b.post("/console/endpoints/"+ep, url.Values{"csrf": {csrf}, "url": {"ftp://x.example/"}, "eventTypes": {"opened"}}, s.url)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, `data-refusal="invalid_endpoint"`)
	resp, _ = b.post("/console/endpoints/"+ep, url.Values{"csrf": {csrf}, "url": {rcv.url}, "description": {"orders"}, "eventTypes": {"opened", "answer_filed"}}, s.url)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, got := s.hookAPI(t, http.MethodGet, "/api/webhooks/endpoints/"+ep, bearer, nil)
	require.Equal(t, []any{"opened", "answer_filed"}, got["data"].(map[string]any)["eventTypes"])
	require.Equal(t, "orders", got["data"].(map[string]any)["description"])
	resp, _ = b.post("/console/endpoints/"+ep, url.Values{"csrf": {csrf}, "url": {rcv.url}, "allTypes": {"yes"}}, s.url)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, page = b.get("/console/endpoints")
	require.Contains(t, page, `<strong class="warning">all types</strong>`)

	// The receiver is fixed; a test event reaches it.
	rcv.status.Store(http.StatusNoContent)
	resp, body = b.post("/console/endpoints/"+ep+"/test", url.Values{"csrf": {csrf}, "key": {key}, "type": {"deadline_missed"}}, s.url)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	waitFor(t, "the test event", func() bool {
		got := rcv.received()
		return len(got) == 3 && strings.Contains(string(got[2].Body), `"type":"deadline_missed"`) && strings.Contains(string(got[2].Body), `"caseId":"case_test"`)
	})
	_, page = b.get(resp.Header.Get("Location"))
	require.Contains(t, page, "<dd>test</dd>", "the delivery page names the trigger")
	resp, body = b.post("/console/endpoints/"+ep+"/test", url.Values{"csrf": {csrf}, "key": {key + "x"}, "type": {"case.exploded"}}, s.url)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, `data-refusal="invalid_test_event"`)

	// Disabled, the endpoint offers to re-enable and replay its failed
	// window; the count comes first, then one confirmation does both.
	resp, _ = b.post("/console/endpoints/"+ep+"/disable", url.Values{"csrf": {csrf}}, s.url)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	_, page = b.get("/console/endpoints")
	link := regexp.MustCompile(`class="recover-window" href="([^"]+)">Re-enable and recover failures since`).FindStringSubmatch(page)
	require.NotNil(t, link, page)
	time.Sleep(time.Second) // "until now" is a whole second after the failures
	_, page = b.get(html.UnescapeString(link[1]))
	require.Contains(t, page, `<strong>1</strong> deliveries would be replayed`)
	require.Contains(t, page, "Re-enable and replay 1 deliveries")
	form := url.Values{"csrf": {csrf}, "key": {formValue(t, page, "key")}, "since": {formValue(t, page, "since")}, "until": {formValue(t, page, "until")}, "enable": {"yes"}}
	resp, _ = b.post("/console/endpoints/"+ep+"/recover", form, s.url)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	waitFor(t, "the replay delivered", func() bool {
		for _, d := range s.deliveries(t, bearer, "status=delivered") {
			if d["replayOf"] == original && d["trigger"] == "recovery" {
				return true
			}
		}
		return false
	})
	_, got = s.hookAPI(t, http.MethodGet, "/api/webhooks/endpoints/"+ep, bearer, nil)
	require.Equal(t, "enabled", got["data"].(map[string]any)["status"])
	actions := auditActions(t, s, cred)
	for _, a := range []string{"endpoint_updated", "test_event_sent", "endpoint_disabled", "endpoint_enabled", "recovery_started"} {
		require.Contains(t, actions, a)
	}

	// A link without manage_endpoints may replay but not re-enable.
	s.hookAPI(t, http.MethodPost, "/api/webhooks/endpoints/"+ep+"/disable", bearer, struct{}{})
	rb := s.browser(t)
	rb.open(s.mint(t, bearer, "view", "replay").Data.URL)
	_, page = rb.get("/console/endpoints/" + ep + "/recover?" + url.Values{"since": {form.Get("since")}}.Encode())
	require.Contains(t, page, "this link may not enable it")
	resp, body = rb.post("/console/endpoints/"+ep+"/recover", url.Values{"csrf": {formValue(t, page, "csrf")}, "key": {"console-forged-0001"},
		"since": {form.Get("since")}, "until": {form.Get("until")}, "enable": {"yes"}}, s.url)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Contains(t, body, `data-refusal="capability_missing"`)
}

// apiOutcomes is the webhooks API's deliveries by outcome over the last 24
// hours, an hour a line: its start and its delivered, failed, cancelled
// and scheduled deliveries.
func (s *stack) apiOutcomes(t testing.TB, bearer string) []string {
	t.Helper()
	status, out := s.hookAPI(t, http.MethodGet, "/api/webhooks/deliveries/outcomes?window=24h", bearer, nil)
	require.Equal(t, http.StatusOK, status, out)
	var hours []string
	for _, raw := range out["data"].(map[string]any)["hours"].([]any) {
		h := raw.(map[string]any)
		hours = append(hours, fmt.Sprintf("%s %v %v %v %v", h["start"], h["delivered"], h["failed"], h["cancelled"], h["scheduled"]))
	}
	return hours
}

var outcomeBars = regexp.MustCompile(`<g data-hour="([^"]+)" data-delivered="(\d+)" data-failed="(\d+)" data-cancelled="(\d+)" data-scheduled="(\d+)">`)

// drawnOutcomes are the deliveries page's chart bars, as apiOutcomes
// spells the API's hours.
func drawnOutcomes(page string) []string {
	var hours []string
	for _, m := range outcomeBars.FindAllStringSubmatch(page, -1) {
		hours = append(hours, strings.Join(m[1:], " "))
	}
	return hours
}

// sumCounts adds up the counts the chart's segments of class draw.
func sumCounts(page, class string) int {
	n := 0
	for _, m := range regexp.MustCompile(`<rect class="`+class+`" data-count="(\d+)"`).FindAllStringSubmatch(page, -1) {
		c, _ := strconv.Atoi(m[1])
		n += c
	}
	return n
}
