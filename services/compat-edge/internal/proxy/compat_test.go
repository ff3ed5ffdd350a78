package proxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/telemetry"
	"github.com/pcourt/pcourt/libs/telemetry/telemetrytest"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/legacyuse"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/proxy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

// counting owners: each answers 200 with what it received and counts
// requests.
type owners struct {
	urls  map[routing.Owner]*url.URL
	count atomic.Int64
}

func countingOwners(t *testing.T) *owners {
	t.Helper()
	o := &owners{urls: map[routing.Owner]*url.URL{}}
	for _, name := range routing.Owners {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			o.count.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Add("Link", `</api/cases?page=2>; rel="next"`)
			_ = json.NewEncoder(w).Encode(map[string]string{"owner": string(name), "method": r.Method, "path": r.URL.EscapedPath()})
		}))
		t.Cleanup(ts.Close)
		o.urls[name], _ = url.Parse(ts.URL)
	}
	return o
}

// compatEdge is an edge whose clock, policy and recorder the test holds.
type compatEdge struct {
	url    string
	now    atomic.Pointer[time.Time]
	policy atomic.Pointer[policy.Policy]
	mu     sync.Mutex
	hits   []legacyuse.Hit
	tel    *telemetry.Providers
}

func (e *compatEdge) setNow(t time.Time)         { e.now.Store(&t) }
func (e *compatEdge) setPolicy(p *policy.Policy) { e.policy.Store(p) }
func (e *compatEdge) recorded() []legacyuse.Hit {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]legacyuse.Hit(nil), e.hits...)
}

func newCompatEdge(t *testing.T, ups map[routing.Owner]*url.URL, integrations func(context.Context, string) ([]string, error), record func(legacyuse.Hit)) *compatEdge {
	t.Helper()
	e := &compatEdge{}
	e.setNow(time.Now())
	e.setPolicy(policy.Resolve(policy.Env{}, nil))
	idx, err := inventory.NewIndex(inventory.Routes)
	require.NoError(t, err)
	if record == nil {
		record = func(h legacyuse.Hit) {
			e.mu.Lock()
			e.hits = append(e.hits, h)
			e.mu.Unlock()
		}
	}
	e.tel = telemetrytest.Setup(t, "compat-edge")
	deps := httpserver.Deps{Service: "compat-edge", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Telemetry: e.tel}
	forward, err := proxy.NewProxy(routing.NewTable(routing.Families), ups, proxy.Forwarding{}, propagation.TraceContext{}, proxy.Compat{
		Index:        idx,
		Policy:       e.policy.Load,
		Now:          func() time.Time { return *e.now.Load() },
		Integrations: integrations,
		Record:       record,
	})
	require.NoError(t, err)
	e.url = serveEdge(t, httpserver.DefaultConfig(), deps, forward, proxy.Config{MaxBodyBytes: 1 << 20}, []byte("{}"))
	return e
}

// sfDate parses an RFC 9651 Date ("@" and an Integer of at most 15
// digits), the form RFC 9745 gives Deprecation.
func sfDate(t *testing.T, v string) time.Time {
	t.Helper()
	require.Regexp(t, `^@-?[0-9]{1,15}$`, v, "Deprecation is a structured-field date")
	n, err := strconv.ParseInt(v[1:], 10, 64)
	require.NoError(t, err)
	return time.Unix(n, 0).UTC()
}

// link is one RFC 8288 link-value.
type link struct {
	target string
	params map[string]string
}

var linkParam = regexp.MustCompile(`^\s*([A-Za-z0-9!#$&+\-.^_|~]+)\s*(?:=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;,"]+)))?\s*$`)

// parseLinks reads Link field values: <target> then ;-separated
// parameters, link-values separated by commas outside <> and quotes.
func parseLinks(t *testing.T, values []string) []link {
	t.Helper()
	var out []link
	for _, v := range values {
		var parts []string
		inURI, inQuote, start := false, false, 0
		for i := 0; i < len(v); i++ {
			switch c := v[i]; {
			case inQuote && c == '\\':
				i++
			case c == '"' && !inURI:
				inQuote = !inQuote
			case c == '<' && !inQuote:
				inURI = true
			case c == '>' && !inQuote:
				inURI = false
			case c == ',' && !inURI && !inQuote:
				parts = append(parts, v[start:i])
				start = i + 1
			}
		}
		require.False(t, inURI || inQuote, "a closed Link value: %q", v)
		parts = append(parts, v[start:])
		for _, p := range parts {
			p = strings.TrimSpace(p)
			require.True(t, strings.HasPrefix(p, "<"), "a link-value starts with <URI>: %q", p)
			end := strings.IndexByte(p, '>')
			require.Positive(t, end, p)
			l := link{target: p[1:end], params: map[string]string{}}
			rest := strings.TrimSpace(p[end+1:])
			if rest != "" {
				require.True(t, strings.HasPrefix(rest, ";"), "parameters follow the URI: %q", p)
				for _, param := range strings.Split(rest[1:], ";") {
					m := linkParam.FindStringSubmatch(param)
					require.NotNil(t, m, "a link parameter: %q", param)
					l.params[strings.ToLower(m[1])] = m[2] + m[3]
				}
			}
			out = append(out, l)
		}
	}
	return out
}

func linksByRel(t *testing.T, h http.Header) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range parseLinks(t, h.Values("Link")) {
		for _, rel := range strings.Fields(l.params["rel"]) {
			out[rel] = l.target
		}
	}
	return out
}

func headerBytes(h http.Header) int {
	n := 0
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// concrete fills a pattern with sample values and returns them by name.
func concrete(pattern string) (string, []string) {
	var values []string
	segs := strings.Split(pattern, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") {
			segs[i] = "v" + strconv.Itoa(len(values)) + "_" + strings.Trim(s, "{}")
			values = append(values, segs[i])
		}
	}
	return strings.Join(segs, "/"), values
}

// expectedSuccessor fills a successor by the documented rule, apart from
// the implementation: {id} is the first parameter, others by name.
func expectedSuccessor(r inventory.Route, values []string) string {
	out := r.Successor
	for _, name := range regexp.MustCompile(`\{([A-Za-z]+)\}`).FindAllStringSubmatch(r.Successor, -1) {
		v := ""
		if name[1] == "id" {
			v = values[0]
		} else {
			for _, val := range values {
				if strings.HasSuffix(val, "_"+name[1]) {
					v = val
				}
			}
		}
		out = strings.Replace(out, name[0], v, 1)
	}
	return out
}

func methodsOf(r inventory.Route) []string {
	if len(r.Methods) == 0 {
		return []string{"GET", "POST"}
	}
	return r.Methods
}

func send(t *testing.T, method, u string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	var body io.Reader
	if method != http.MethodGet && method != http.MethodHead {
		body = strings.NewReader(`{"note":"x"}`)
	}
	req, err := http.NewRequest(method, u, body)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "key-00000001")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	return resp, b
}

var (
	ga      = time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)
	sunset  = ga.Add(180 * 24 * time.Hour)
	moments = map[string]time.Time{
		"before the date":   ga.Add(-24 * time.Hour),
		"inside the window": ga.Add(90 * 24 * time.Hour),
		"after the window":  sunset.Add(time.Hour),
	}
)

func envWithDates(enabled string) policy.Env {
	return policy.Env{CanonicalRoutes: enabled, FamilyGA: map[inventory.Family]string{
		inventory.V2Filings: "2026-01-15", inventory.V2Cases: "2026-01-15", inventory.WebsiteCases: "2026-01-15",
	}}
}

// For every row and method of the inventory: with the switch on and a
// date, an eligible row is announced before, inside and after its window,
// and proxied; anything else is proxied with nothing announced.
func TestEveryInventoryRowIsAnnouncedExactlyAsTheRulesSay(t *testing.T) {
	own := countingOwners(t)
	e := newCompatEdge(t, own.urls, nil, nil)
	for _, enabled := range []string{"true", "", "TRUE"} {
		e.setPolicy(policy.Resolve(envWithDates(enabled), nil))
		for moment, now := range moments {
			e.setNow(now)
			for _, r := range inventory.Routes {
				for _, method := range methodsOf(r) {
					path, values := concrete(r.Pattern)
					t.Run(fmt.Sprintf("switch %q/%s/%s %s", enabled, moment, method, r.Pattern), func(t *testing.T) {
						before, hits := own.count.Load(), len(e.recorded())
						resp, body := send(t, method, e.url+path)
						require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
						require.Equal(t, before+1, own.count.Load(), "the owner serves it")
						var got map[string]string
						require.NoError(t, json.Unmarshal(body, &got))
						require.Equal(t, method, got["method"], "never redirected, never rewritten")
						require.Equal(t, path, got["path"])
						require.Empty(t, resp.Header.Get("Location"))
						links := linksByRel(t, resp.Header)
						require.Equal(t, "/api/cases?page=2", links["next"], "the owner's own Link stays")

						if enabled != "true" || !r.Eligible {
							require.Empty(t, resp.Header.Values("Deprecation"))
							require.Empty(t, resp.Header.Values("Sunset"))
							require.NotContains(t, links, "successor-version")
							require.NotContains(t, links, "deprecation")
						} else {
							require.Len(t, resp.Header.Values("Deprecation"), 1)
							require.Equal(t, ga, sfDate(t, resp.Header.Get("Deprecation")))
							require.Len(t, resp.Header.Values("Sunset"), 1)
							s, err := http.ParseTime(resp.Header.Get("Sunset"))
							require.NoError(t, err)
							require.Equal(t, sunset, s.UTC())
							require.True(t, strings.HasSuffix(resp.Header.Get("Sunset"), " GMT"))
							require.Equal(t, expectedSuccessor(r, values), links["successor-version"])
							require.Equal(t, proxy.GuidePath, links["deprecation"])
							require.Less(t, headerBytes(resp.Header), 4<<10)
						}
						recorded := e.recorded()[hits:]
						if r.Successor == "" {
							require.Empty(t, recorded, "routes without a successor are not legacy use")
						} else {
							require.Equal(t, []legacyuse.Hit{{Route: r.Pattern, At: now, RequestID: resp.Header.Get("X-Request-Id")}}, recorded)
							require.NotEmpty(t, recorded[0].RequestID, "a sample request id")
						}
					})
				}
			}
		}
	}
}

// No date, an invalid one, a canonical route, an unsupported method: no
// clock is announced, and the request is proxied.
func TestNothingIsAnnouncedWithoutAClock(t *testing.T) {
	own := countingOwners(t)
	e := newCompatEdge(t, own.urls, nil, nil)
	e.setNow(moments["inside the window"])
	tests := []struct {
		name, method, path string
		env                policy.Env
	}{
		{"no date", "GET", "/api/v2/cases/cs_1", policy.Env{CanonicalRoutes: "true"}},
		{"an invalid date", "GET", "/api/v2/cases/cs_1", policy.Env{CanonicalRoutes: "true", FamilyGA: map[inventory.Family]string{inventory.V2Cases: "2026-01-32"}}},
		{"another family's date", "GET", "/api/v2/cases/cs_1", policy.Env{CanonicalRoutes: "true", FamilyGA: map[inventory.Family]string{inventory.WebsiteCases: "2026-01-15"}}},
		{"a canonical route", "GET", "/api/cases/cs_1", envWithDates("true")},
		{"an unsupported method", "DELETE", "/api/v2/cases/cs_1", envWithDates("true")},
		{"HEAD of a listed GET", "HEAD", "/api/v2/cases/cs_1", envWithDates("true")},
		{"an unlisted path under a family", "GET", "/api/v2/cases/cs_1/unknown-thing", envWithDates("true")},
		{"a trailing slash", "GET", "/api/v2/cases/cs_1/", envWithDates("true")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.setPolicy(policy.Resolve(tc.env, nil))
			before := own.count.Load()
			resp, _ := send(t, tc.method, e.url+tc.path)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, before+1, own.count.Load())
			require.Empty(t, resp.Header.Values("Deprecation"))
			require.Empty(t, resp.Header.Values("Sunset"))
			require.NotContains(t, linksByRel(t, resp.Header), "successor-version")
		})
	}
}

func require410(t *testing.T, resp *http.Response, body []byte, method, successor string) {
	t.Helper()
	require.Equal(t, http.StatusGone, resp.StatusCode, string(body))
	require.Equal(t, problem.ContentType, resp.Header.Get("Content-Type"))
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	var p map[string]any
	require.NoError(t, json.Unmarshal(body, &p))
	require.Equal(t, "about:blank", p["type"])
	require.Equal(t, "alias retired", p["title"])
	require.EqualValues(t, 410, p["status"])
	require.Equal(t, "alias_retired", p["code"])
	require.Equal(t, resp.Header.Get("X-Request-Id"), p["requestId"])
	require.NotEmpty(t, p["requestId"])
	require.Contains(t, p["detail"], method+" "+successor, "the detail names the canonical replacement")
	require.Contains(t, p["detail"], proxy.GuidePath, "and the guide")
	require.Equal(t, ga, sfDate(t, resp.Header.Get("Deprecation")))
	s, err := http.ParseTime(resp.Header.Get("Sunset"))
	require.NoError(t, err)
	require.False(t, s.Before(ga))
	links := linksByRel(t, resp.Header)
	require.Equal(t, successor, links["successor-version"])
	require.Equal(t, proxy.GuidePath, links["deprecation"])
	require.Less(t, headerBytes(resp.Header), 4<<10)
}

// A retired family answers 410 on every eligible row after the window,
// without calling the owner and without counting legacy use; inside the
// window, and on rows never announced, it still proxies.
func TestRetiredAliasesAnswer410WithoutTheOwner(t *testing.T) {
	own := countingOwners(t)
	e := newCompatEdge(t, own.urls, nil, nil)
	retired := map[inventory.Family]policy.Settings{}
	for _, f := range inventory.Families {
		retired[f] = policy.Settings{Stage: policy.Retired}
	}
	e.setPolicy(policy.Resolve(envWithDates("true"), retired))
	for moment, now := range moments {
		e.setNow(now)
		for _, r := range inventory.Routes {
			for _, method := range methodsOf(r) {
				path, values := concrete(r.Pattern)
				t.Run(moment+"/"+method+" "+r.Pattern, func(t *testing.T) {
					before, hits := own.count.Load(), len(e.recorded())
					resp, body := send(t, method, e.url+path, "Authorization", "Bearer pc_sbx_whoever")
					if !r.Eligible || now.Before(sunset) {
						require.Equal(t, http.StatusOK, resp.StatusCode)
						require.Equal(t, before+1, own.count.Load())
						return
					}
					require410(t, resp, body, method, expectedSuccessor(r, values))
					require.Equal(t, before, own.count.Load(), "the owner received nothing")
					require.Len(t, e.recorded(), hits, "a 410 is not legacy use")
				})
			}
		}
	}
}

// Brownouts act only after the window and only while they last; an
// integration with an approved extension is neither browned out nor
// retired before its own deadline, and its Sunset says so.
func TestBrownoutsAndExtensions(t *testing.T) {
	own := countingOwners(t)
	extended := auth.HashToken("pc_sbx_extended")
	unreadable := auth.HashToken("pc_sbx_unreadable")
	e := newCompatEdge(t, own.urls, func(_ context.Context, hash string) ([]string, error) {
		switch hash {
		case extended:
			return []string{"cred_ext", "partner-ext"}, nil
		case unreadable:
			return nil, errors.New("redis down")
		}
		return []string{"cred_other", "partner-other"}, nil
	}, nil)
	extUntil := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	early := policy.Span{Start: ga.Add(24 * time.Hour), End: ga.Add(25 * time.Hour)}
	brown := policy.Span{Start: sunset.Add(48 * time.Hour), End: sunset.Add(48*time.Hour + 30*time.Minute)}
	e.setPolicy(policy.Resolve(envWithDates("true"), map[inventory.Family]policy.Settings{inventory.V2Filings: {
		Stage: policy.Brownout, Brownouts: []policy.Span{early, brown},
		Extensions: map[string]policy.Date{"partner-ext": mustDate(t, "2026-10-01")},
	}}))
	path, successor := "/api/v2/case-drafts/dr_1/confirmations", "/api/filings/dr_1/confirmations"
	tests := []struct {
		name    string
		now     time.Time
		token   string
		refused bool
		sunset  time.Time
	}{
		{"a brownout inside the window does nothing", early.Start, "pc_sbx_someone", false, sunset},
		{"after the window, before the brownout", brown.Start.Add(-time.Second), "pc_sbx_someone", false, sunset},
		{"in the brownout", brown.Start, "pc_sbx_someone", true, sunset},
		{"in the brownout, without a bearer", brown.Start.Add(time.Minute), "", true, sunset},
		{"the brownout's end", brown.End, "pc_sbx_someone", false, sunset},
		{"in the brownout, with an extension", brown.Start, "pc_sbx_extended", false, extUntil},
		{"in the brownout, the credential unreadable", brown.Start, "pc_sbx_unreadable", false, sunset},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.setNow(tc.now)
			before, hits := own.count.Load(), len(e.recorded())
			var hdr []string
			if tc.token != "" {
				hdr = []string{"Authorization", "Bearer " + tc.token}
			}
			resp, body := send(t, http.MethodPost, e.url+path, hdr...)
			s, err := http.ParseTime(resp.Header.Get("Sunset"))
			require.NoError(t, err)
			require.Equal(t, tc.sunset, s.UTC())
			if tc.refused {
				require410(t, resp, body, http.MethodPost, successor)
				require.Contains(t, string(body), "brownout")
				require.Equal(t, before, own.count.Load(), "the owner received nothing")
				require.Len(t, e.recorded(), hits)
				return
			}
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, before+1, own.count.Load())
			require.Len(t, e.recorded(), hits+1)
			if tc.token != "" {
				require.Equal(t, auth.HashToken(tc.token), e.recorded()[hits].TokenHash, "the hash, never the token")
			}
		})
	}
}

func mustDate(t *testing.T, s string) policy.Date {
	t.Helper()
	d, err := policy.ParseDate(s)
	require.NoError(t, err)
	return d
}

// End to end with the real recorder and Redis: served requests on earlier
// routes land in the ledger under the credential's public id; a 410 does
// not.
func TestLegacyUseReachesTheLedgerAndA410DoesNot(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	creds := auth.NewStore(rdb, auth.DefaultStoreConfig())
	token, cred := authtest.Mint(t, creds, auth.RoleClaimantAgent)
	st := store.New(rdb)
	cfg := legacyuse.DefaultConfig()
	cfg.FlushInterval = time.Hour
	rec := legacyuse.New(cfg, func(ctx context.Context, hash string) (string, error) {
		c, err := creds.AuthenticateHash(ctx, hash)
		if errors.Is(err, auth.ErrInvalidCredential) {
			return "", legacyuse.ErrUnknownCredential
		}
		return c.PublicID, err
	}, st.AddUses, slog.New(slog.NewTextHandler(io.Discard, nil)))
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rec.Run(runCtx) }()

	own := countingOwners(t)
	e := newCompatEdge(t, own.urls, nil, rec.Record)
	e.setPolicy(policy.Resolve(envWithDates("true"), map[inventory.Family]policy.Settings{inventory.V2Cases: {Stage: policy.Retired}}))
	bearer := []string{"Authorization", "Bearer " + token}
	e.setNow(moments["inside the window"])
	resp, _ := send(t, http.MethodGet, e.url+"/api/v2/cases/cs_1", bearer...)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sample := resp.Header.Get("X-Request-Id")
	require.NotEmpty(t, sample)
	resp, _ = send(t, http.MethodGet, e.url+"/api/v2/rules/current")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	e.setNow(moments["after the window"])
	resp, _ = send(t, http.MethodGet, e.url+"/api/v2/cases/cs_1", bearer...)
	require.Equal(t, http.StatusGone, resp.StatusCode)
	stop()
	require.NoError(t, <-done)

	uses, err := st.Uses(ctx, cred.PublicID)
	require.NoError(t, err)
	at := moments["inside the window"].Truncate(time.Millisecond)
	require.Len(t, uses, 1)
	for _, d := range uses[0].Days {
		require.Zero(t, d.Calls, "nothing in the last 30 days")
	}
	uses[0].Days = nil
	require.Equal(t, []store.Use{{Subject: cred.PublicID, Route: "/api/v2/cases/{caseId}", First: at, Last: at, Count: 1, Sample: sample}}, uses,
		"the call's request id is the sample; it was not in the last 24 hours or 30 days")
	anon, err := st.Uses(ctx, store.Anonymous)
	require.NoError(t, err)
	require.Len(t, anon, 1)
	require.Equal(t, "/api/v2/rules/current", anon[0].Route)
}

func TestTheMigrationGuideIsServed(t *testing.T) {
	own := countingOwners(t)
	e := newCompatEdge(t, own.urls, nil, nil)
	e.setPolicy(policy.Resolve(envWithDates("true"), nil))
	resp, body := send(t, http.MethodGet, e.url+proxy.GuidePath)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	page := string(body)
	for _, r := range inventory.Routes {
		require.Contains(t, page, "<code>"+r.Pattern+"</code>", "the guide lists every row")
	}
	require.Contains(t, page, "2026-01-15")
	require.Contains(t, page, sunset.Format(time.DateOnly), "and each family's base window end")
	require.Zero(t, own.count.Load(), "the edge serves it itself")
}
