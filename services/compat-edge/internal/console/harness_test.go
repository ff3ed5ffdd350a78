package console_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/compat-edge/internal/console"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

func init() { gin.SetMode(gin.TestMode) }

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// vectors is docs/webhook-signature-vectors.json.
type vectors struct {
	ToleranceSeconds int             `json:"toleranceSeconds"`
	JWKS             json.RawMessage `json:"jwks"`
	Vectors          []struct {
		Name       string      `json:"name"`
		Now        string      `json:"now"`
		Body       string      `json:"body"`
		BodyBase64 string      `json:"bodyBase64"`
		Headers    [][2]string `json:"headers"`
		Expect     string      `json:"expect"`
		Reason     *string     `json:"reason"`
	} `json:"vectors"`
}

func loadVectors(t testing.TB) vectors {
	t.Helper()
	raw, err := os.ReadFile("../../../../docs/webhook-signature-vectors.json")
	require.NoError(t, err)
	var v vectors
	require.NoError(t, json.Unmarshal(raw, &v))
	return v
}

// stack is the edge's console over a real redis-server, with an httptest
// webhooks owner that checks bearer credentials as the real one does
// (libs/auth, platform orchestrator bound to a partner) and keeps each
// partner's endpoints and deliveries apart.
type stack struct {
	url     string
	rdb     *redis.Client
	creds   *auth.Store
	owner   *fakeWebhooks
	store   *console.Store
	ledger  *store.Store
	env     policy.Env
	clock   *clock
	proxied []string
	mu      sync.Mutex
}

type clock struct {
	mu sync.Mutex
	d  time.Duration
}

func (c *clock) now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return time.Now().Add(c.d) }
func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.d += d; c.mu.Unlock() }

func newStack(t testing.TB) *stack {
	t.Helper()
	rdb := redistest.NewClient(t)
	acfg := auth.DefaultStoreConfig()
	acfg.PerCredential = ratelimit.Off
	creds := auth.NewStore(rdb, acfg)
	s := &stack{rdb: rdb, creds: creds, store: console.NewStore(rdb), ledger: store.New(rdb), clock: &clock{}}
	s.owner = newFakeWebhooks(t, creds, loadVectors(t).JWKS)
	ownerURL, _ := url.Parse(s.owner.url)

	ts := httptest.NewUnstartedServer(nil)
	s.url = "http://" + ts.Listener.Addr().String()
	cons, err := console.New(console.Config{PublicBaseURL: s.url}, console.Deps{
		Store: s.store, Credentials: creds, Logger: discard(), Now: s.clock.now,
		Resolve: func(path string) (*url.URL, bool) {
			return ownerURL, strings.HasPrefix(path, "/api/webhooks/")
		},
		Compat: console.Compat{Uses: s.ledger.Uses, Policy: func() *policy.Policy { return policy.Resolve(s.env, nil) }},
	})
	require.NoError(t, err)
	r := gin.New()
	r.Use(requestid.Middleware())
	r.Use(cons.API)
	cons.Register(r)
	r.Any("/api/*path", func(c *gin.Context) { // the edge's proxy
		s.mu.Lock()
		s.proxied = append(s.proxied, c.Request.URL.Path)
		s.mu.Unlock()
		c.String(http.StatusTeapot, "proxied")
	})
	ts.Config.Handler = r
	ts.Start()
	t.Cleanup(ts.Close)
	return s
}

// partner mints a partner backend's credential.
func (s *stack) partner(t testing.TB, partnerID string) (string, auth.Credential) {
	t.Helper()
	return authtest.Mint(t, s.creds, auth.RolePlatformOrchestrator, authtest.WithPartner(partnerID))
}

type linkAnswer struct {
	Data struct {
		ID           string    `json:"id"`
		URL          string    `json:"url"`
		Capabilities []string  `json:"capabilities"`
		ReturnURL    string    `json:"returnUrl"`
		ExpiresAt    time.Time `json:"expiresAt"`
	} `json:"data"`
	RequestID string `json:"requestId"`
}

func (s *stack) api(t testing.TB, method, path, bearer, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	require.NoError(t, err)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

// mint mints a link through the API and returns its answer.
func (s *stack) mint(t testing.TB, bearer string, caps ...string) linkAnswer {
	t.Helper()
	if len(caps) == 0 {
		caps = []string{"view", "manage_endpoints", "replay"}
	}
	body, _ := json.Marshal(map[string]any{"capabilities": caps, "ttlSeconds": 3600, "returnUrl": "https://partner.example/settings"})
	resp, b := s.api(t, http.MethodPost, "/api/console/links", bearer, string(body))
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(b))
	var a linkAnswer
	require.NoError(t, json.Unmarshal(b, &a))
	return a
}

// browser is an HTTP client that keeps cookies, follows no redirect and
// sends what a browser sends on the console's own form posts.
type browser struct {
	t      testing.TB
	s      *stack
	client *http.Client
}

func (s *stack) browser(t testing.TB) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, s: s, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) get(path string) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.client.Get(b.s.url + path)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func (b *browser) post(path string, form url.Values, origin string) (*http.Response, string) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.s.url+path, strings.NewReader(form.Encode()))
	require.NoError(b.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := b.client.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// open exchanges a link's token as the sign-in page's module does.
func (b *browser) open(link string) (*http.Response, string) {
	_, frag, _ := strings.Cut(link, "#link=")
	return b.post("/console/session", url.Values{"link": {frag}}, b.s.url)
}

// formValue reads a hidden input's value from a page.
func formValue(t testing.TB, page, name string) string {
	t.Helper()
	marker := `name="` + name + `" value="`
	i := strings.Index(page, marker)
	require.GreaterOrEqual(t, i, 0, "no %s in the page", name)
	rest := page[i+len(marker):]
	return rest[:strings.Index(rest, `"`)]
}

// fakeWebhooks is the webhooks owner's public API over memory: the routes
// and shapes of services/webhooks/internal/httpapi that the console calls.
type fakeWebhooks struct {
	url string
	mu  sync.Mutex
	eps map[string][]map[string]any // by partner
	dls map[string][]map[string]any // by partner, newest first
	// bearers is every credential the console presented.
	bearers []auth.Credential
	seq     int
}

func newFakeWebhooks(t testing.TB, creds *auth.Store, jwks json.RawMessage) *fakeWebhooks {
	f := &fakeWebhooks{eps: map[string][]map[string]any{}, dls: map[string][]map[string]any{}}
	r := gin.New()
	r.GET("/api/webhooks/keys", func(c *gin.Context) { c.Data(http.StatusOK, "application/json", jwks) })
	g := r.Group("/api/webhooks", auth.Middleware(creds), auth.RequireRole(auth.RolePlatformOrchestrator), func(c *gin.Context) {
		cred, _ := auth.CredentialFrom(c.Request.Context())
		f.mu.Lock()
		f.bearers = append(f.bearers, cred)
		f.mu.Unlock()
	})
	problem := func(c *gin.Context, status int, code, detail string) {
		c.JSON(status, gin.H{"type": "https://pcourt.dev/problems/" + code, "title": code, "status": status, "code": code, "detail": detail, "requestId": "r"})
	}
	key := func(c *gin.Context) string {
		cred, _ := auth.CredentialFrom(c.Request.Context())
		return cred.Tenant + "/" + string(cred.Environment) + "/" + cred.PartnerID
	}
	find := func(list []map[string]any, id string) map[string]any {
		for _, m := range list {
			if m["id"] == id {
				return m
			}
		}
		return nil
	}
	g.GET("/endpoints", func(c *gin.Context) {
		f.mu.Lock()
		defer f.mu.Unlock()
		c.JSON(http.StatusOK, gin.H{"data": append([]map[string]any{}, f.eps[key(c)]...), "requestId": "r"})
	})
	g.POST("/endpoints", func(c *gin.Context) {
		var req struct {
			URL         string   `json:"url"`
			EventTypes  []string `json:"eventTypes"`
			Description string   `json:"description"`
		}
		if err := c.ShouldBindJSON(&req); err != nil || !strings.HasPrefix(req.URL, "https://") {
			problem(c, http.StatusBadRequest, "invalid_endpoint_url", "The endpoint URL must be https.")
			return
		}
		if c.GetHeader("Idempotency-Key") == "" {
			problem(c, http.StatusBadRequest, "idempotency_key_missing", "no key")
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.seq++
		if req.EventTypes == nil {
			req.EventTypes = []string{}
		}
		ep := map[string]any{"id": "we_" + strconv.Itoa(f.seq), "url": req.URL, "eventTypes": req.EventTypes, "description": req.Description,
			"status": "enabled", "environment": "sandbox", "createdAt": time.Now().UTC(), "updatedAt": time.Now().UTC(), "operationalEvents": []any{}}
		f.eps[key(c)] = append(f.eps[key(c)], ep)
		c.JSON(http.StatusCreated, gin.H{"data": ep, "requestId": "r"})
	})
	g.GET("/endpoints/:id", func(c *gin.Context) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if ep := find(f.eps[key(c)], c.Param("id")); ep != nil {
			c.JSON(http.StatusOK, gin.H{"data": ep, "requestId": "r"})
			return
		}
		problem(c, http.StatusNotFound, "endpoint_not_found", "No such endpoint.")
	})
	for verb, status := range map[string]string{"enable": "enabled", "disable": "disabled"} {
		g.POST("/endpoints/:id/"+verb, func(c *gin.Context) {
			f.mu.Lock()
			defer f.mu.Unlock()
			ep := find(f.eps[key(c)], c.Param("id"))
			if ep == nil {
				problem(c, http.StatusNotFound, "endpoint_not_found", "No such endpoint.")
				return
			}
			ep["status"] = status
			c.JSON(http.StatusOK, gin.H{"data": ep, "requestId": "r"})
		})
	}
	g.POST("/endpoints/:id/recover", func(c *gin.Context) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if find(f.eps[key(c)], c.Param("id")) == nil {
			problem(c, http.StatusNotFound, "endpoint_not_found", "No such endpoint.")
			return
		}
		c.JSON(http.StatusAccepted, gin.H{"data": gin.H{"id": "rcv_1", "total": 1}, "requestId": "r"})
	})
	g.GET("/deliveries", func(c *gin.Context) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var out []map[string]any
		for _, d := range f.dls[key(c)] {
			if (c.Query("status") == "" || d["status"] == c.Query("status")) && (c.Query("endpointId") == "" || d["endpointId"] == c.Query("endpointId")) &&
				(c.Query("eventId") == "" || d["eventId"] == c.Query("eventId")) {
				out = append(out, summary(d))
			}
		}
		start, _ := strconv.Atoi(c.Query("cursor"))
		limit, _ := strconv.Atoi(c.DefaultQuery("limit", "25"))
		out = out[min(start, len(out)):]
		body := gin.H{"requestId": "r"}
		if len(out) > limit {
			out = out[:limit]
			body["nextCursor"] = strconv.Itoa(start + limit)
		}
		body["data"] = append([]map[string]any{}, out...)
		c.JSON(http.StatusOK, body)
	})
	g.GET("/deliveries/:id", func(c *gin.Context) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if d := find(f.dls[key(c)], c.Param("id")); d != nil {
			c.JSON(http.StatusOK, gin.H{"data": d, "requestId": "r"})
			return
		}
		problem(c, http.StatusNotFound, "delivery_not_found", "No such delivery.")
	})
	g.POST("/deliveries/:id/replay", func(c *gin.Context) {
		f.mu.Lock()
		defer f.mu.Unlock()
		orig := find(f.dls[key(c)], c.Param("id"))
		if orig == nil {
			problem(c, http.StatusNotFound, "delivery_not_found", "No such delivery.")
			return
		}
		f.seq++
		d := map[string]any{"id": "dlv_replay" + strconv.Itoa(f.seq), "eventId": orig["eventId"], "eventType": orig["eventType"], "endpointId": orig["endpointId"],
			"status": "scheduled", "trigger": "manual", "replayOf": orig["id"], "attemptCount": 0, "createdAt": time.Now().UTC(), "attempts": []any{}}
		f.dls[key(c)] = append([]map[string]any{d}, f.dls[key(c)]...)
		c.JSON(http.StatusAccepted, gin.H{"data": d, "requestId": "r"})
	})
	ts := httptest.NewServer(r)
	t.Cleanup(ts.Close)
	f.url = ts.URL
	return f
}

func summary(d map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range d {
		if k != "attempts" {
			out[k] = v
		}
	}
	return out
}

// addDelivery records a delivery to partnerID's endpoint with one attempt
// that carried the headers of the named vector.
func (f *fakeWebhooks) addDelivery(t testing.TB, scopeKey, id, endpointID, status string, v vectors, vector string) {
	t.Helper()
	i := slices.IndexFunc(v.Vectors, func(x struct {
		Name       string      `json:"name"`
		Now        string      `json:"now"`
		Body       string      `json:"body"`
		BodyBase64 string      `json:"bodyBase64"`
		Headers    [][2]string `json:"headers"`
		Expect     string      `json:"expect"`
		Reason     *string     `json:"reason"`
	}) bool {
		return x.Name == vector
	})
	require.GreaterOrEqual(t, i, 0)
	vec := v.Vectors[i]
	hdrs := map[string]string{}
	for _, h := range vec.Headers {
		hdrs[h[0]] = h[1]
	}
	body, _ := base64.StdEncoding.DecodeString(vec.BodyBase64)
	var ev struct {
		EventID string `json:"eventId"`
		Type    string `json:"type"`
	}
	require.NoError(t, json.Unmarshal(body, &ev))
	at, _ := time.Parse(time.RFC3339, hdrs["x-pc-event-timestamp"])
	att := map[string]any{"number": 1, "trigger": "scheduled", "startedAt": at, "durationMs": 42, "url": "https://receiver.example/hook",
		"keyId": hdrs["x-pc-key-id"], "requestHeaders": hdrs, "outcome": "failed", "errorClass": "http_status",
		"responseStatus": 500, "responseHeaders": map[string]string{"Content-Type": "text/plain"}, "responseBody": strings.Repeat("x", 5000)}
	if status == "delivered" {
		att["outcome"], att["errorClass"], att["responseStatus"], att["responseBody"] = "delivered", "", 204, ""
	}
	d := map[string]any{"id": id, "eventId": ev.EventID, "eventType": ev.Type, "endpointId": endpointID, "status": status, "trigger": "event",
		"attemptCount": 1, "createdAt": at, "lastAttemptAt": at, "attempts": []any{att}}
	f.mu.Lock()
	f.dls[scopeKey] = append([]map[string]any{d}, f.dls[scopeKey]...)
	f.mu.Unlock()
}

// addEndpoint registers an endpoint for a scope directly.
func (f *fakeWebhooks) addEndpoint(scopeKey, id, u string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.eps[scopeKey] = append(f.eps[scopeKey], map[string]any{"id": id, "url": u, "eventTypes": []string{"opened"}, "description": "",
		"status": "enabled", "environment": "sandbox", "createdAt": time.Now().UTC(), "updatedAt": time.Now().UTC(), "operationalEvents": []any{}})
}

func scopeKey(c auth.Credential) string {
	return c.Tenant + "/" + string(c.Environment) + "/" + c.PartnerID
}

// recordUse puts a legacy use in the edge's ledger for a credential.
func (s *stack) recordUse(t testing.TB, cred auth.Credential, route string, first, last time.Time, n int64) {
	t.Helper()
	require.NoError(t, s.ledger.AddUses(context.Background(), []store.Use{{Subject: cred.PublicID, Route: route, First: first, Last: last, Count: n}}))
	_ = inventory.Routes
}

func policyEnv(ga string) policy.Env {
	return policy.Env{CanonicalRoutes: "true", CompatibilityStart: ga, FamilyGA: map[inventory.Family]string{}}
}
