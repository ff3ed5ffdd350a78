package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/console/internal/console"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/legacyuse"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	httpapi "github.com/pcourt/pcourt/services/compat-edge/internal/proxy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
	"github.com/pcourt/pcourt/services/compat-edge/internal/usage"
	"github.com/pcourt/pcourt/services/webhooks/webhookstest"
)

func init() { gin.SetMode(gin.TestMode) }

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// vectors is docs/webhook-signature-vectors.json.
type vectors struct {
	ToleranceSeconds int             `json:"toleranceSeconds"`
	EndpointID       string          `json:"endpointId"`
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

// stack is the edge's console over a real redis-server, in front of the
// real webhooks service (services/webhooks/webhookstest: its HTTP API,
// sender, recovery worker and fan-out) on the same Redis and credentials.
type stack struct {
	url    string
	rdb    *redis.Client
	creds  *auth.Store
	hooks  *webhookstest.Service
	store  *console.Store
	ledger *store.Store
	clock  *clock
	mu     sync.Mutex
	env    policy.Env // the compatibility environment; setEnv changes it
	// durable is the administrators' settings (extensions, brownouts);
	// setDurable changes them.
	durable map[inventory.Family]policy.Settings
}

func (s *stack) setEnv(e policy.Env) { s.mu.Lock(); s.env = e; s.mu.Unlock() }

func (s *stack) setDurable(d map[inventory.Family]policy.Settings) {
	s.mu.Lock()
	s.durable = d
	s.mu.Unlock()
}

func (s *stack) policy() *policy.Policy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return policy.Resolve(s.env, s.durable)
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
	// Two attempts 300 ms apart: a failing receiver's deliveries fail for
	// good within a second, where a deployment retries for days.
	s.hooks = webhookstest.Start(t, rdb, creds, webhookstest.Options{Attempts: 2, RetryBase: 300 * time.Millisecond})
	ownerURL, _ := url.Parse(s.hooks.URL)
	// The owners not under test answer every request with 418.
	others := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	t.Cleanup(others.Close)
	othersURL, _ := url.Parse(others.URL)
	upstreams := map[routing.Owner]*url.URL{}
	for _, o := range routing.Owners {
		upstreams[o] = othersURL
	}
	upstreams[routing.Webhooks] = ownerURL
	table := routing.NewTable(routing.Families)

	// The edge's legacy-use recorder and proxy, as cmd/compat-edge wires
	// them: an alias a partner calls is recorded against its credential.
	recorder := legacyuse.New(legacyuse.Config{Buffer: 1024, FlushInterval: 50 * time.Millisecond, MaxPending: 1000},
		func(ctx context.Context, hash string) (string, error) {
			cred, err := creds.AuthenticateHash(ctx, hash)
			if errors.Is(err, auth.ErrInvalidCredential) {
				return "", legacyuse.ErrUnknownCredential
			}
			return cred.PublicID, err
		}, s.ledger.AddUses, discard())
	ctx, cancel := context.WithCancel(context.Background())
	recorded := make(chan struct{})
	go func() { _ = recorder.Run(ctx); close(recorded) }()
	t.Cleanup(func() { cancel(); <-recorded })
	index, err := inventory.NewIndex(inventory.Routes)
	require.NoError(t, err)
	proxy, err := httpapi.NewProxy(table, upstreams, httpapi.Forwarding{}, propagation.TraceContext{}, httpapi.Compat{
		Index: index, Policy: s.policy, Now: time.Now, Record: recorder.Record,
		Integrations: func(ctx context.Context, hash string) ([]string, error) {
			cred, err := creds.AuthenticateHash(ctx, hash)
			if errors.Is(err, auth.ErrInvalidCredential) {
				return nil, nil
			}
			if err != nil {
				return nil, err
			}
			return []string{cred.PublicID, cred.PartnerID}, nil
		},
	})
	require.NoError(t, err)

	ts := httptest.NewUnstartedServer(nil)
	s.url = "http://" + ts.Listener.Addr().String()
	// The console calls the public API through the edge, as a partner's
	// backend does; the edge answers the compatibility usage itself.
	cons, err := console.New(console.Config{PublicBaseURL: s.url, APIURL: s.url}, console.Deps{
		Store: s.store, Credentials: creds, Logger: discard(), Now: s.clock.now,
	})
	require.NoError(t, err)
	r := gin.New()
	r.Use(requestid.Middleware())
	r.Use(cons.API)
	r.Use((&usage.Reader{Credentials: creds, Uses: s.ledger.Uses, Policy: s.policy}).Serve)
	cons.Register(r)
	httpapi.Register(r, httpapi.Config{MaxBodyBytes: 1 << 20}, proxy, []byte(`{}`))
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

// open opens a link as a person does: the module posts the token to the
// preview, and, when the preview shows the confirmation page, the person
// clicks "Sign in as …", which posts it to the exchange with the
// confirmation. A refused preview is the answer.
func (b *browser) open(link string) (*http.Response, string) {
	b.t.Helper()
	resp, body := b.preview(link)
	if resp.StatusCode != http.StatusOK {
		return resp, body
	}
	require.Contains(b.t, body, `data-page="confirm"`)
	return b.post("/console/session", confirmed(formValue(b.t, body, "link")), b.s.url)
}

// preview posts a link's token to the preview, as the module does on load.
func (b *browser) preview(link string) (*http.Response, string) {
	b.t.Helper()
	_, frag, _ := strings.Cut(link, "#link=")
	return b.post("/console/session/preview", url.Values{"link": {frag}}, b.s.url)
}

// confirmed is the form the confirmation page's button posts.
func confirmed(token string) url.Values {
	return url.Values{"link": {token}, console.ConfirmField: {console.ConfirmValue}}
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

// hookAPI calls the webhooks service's public API directly, as the
// partner's backend does with its own credential.
func (s *stack) hookAPI(t testing.TB, method, path, bearer string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.hooks.URL+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+bearer)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if method == http.MethodPost {
		keyN.Add(1)
		req.Header.Set("Idempotency-Key", fmt.Sprintf("console-test-%08d", keyN.Load()))
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	}
	return resp.StatusCode, out
}

var keyN atomic.Int64

// endpoint registers an endpoint through the webhooks API and returns its id.
func (s *stack) endpoint(t testing.TB, bearer, u string, types ...string) string {
	t.Helper()
	body := map[string]any{"url": u}
	if len(types) > 0 {
		body["eventTypes"] = types
	}
	status, out := s.hookAPI(t, http.MethodPost, "/api/webhooks/endpoints", bearer, body)
	require.Equal(t, http.StatusCreated, status, out)
	return out["data"].(map[string]any)["id"].(string)
}

// openCase publishes the events of a case for the credential's partner, as
// the cases service does when a case opens: the webhooks fan-out schedules
// one delivery per subscribed endpoint, and its sender sends them.
func (s *stack) openCase(t testing.TB, cred auth.Credential, caseID string, types ...string) {
	t.Helper()
	if len(types) == 0 {
		types = []string{"opened"}
	}
	for i, typ := range types {
		ev := webhookstest.Event{EventID: fmt.Sprintf("evt_%s_%d", caseID, i+1), Sequence: int64(i + 1), Type: typ, CaseID: caseID,
			ExternalCaseID: "ext-" + caseID, OccurredAt: time.Now()}
		require.NoError(t, s.hooks.Publish(context.Background(), ev,
			webhookstest.Recipient{Tenant: cred.Tenant, Environment: string(cred.Environment), PartnerID: cred.PartnerID}))
	}
}

// deliveries lists the partner's deliveries matching query through the API.
func (s *stack) deliveries(t testing.TB, bearer, query string) []map[string]any {
	t.Helper()
	status, out := s.hookAPI(t, http.MethodGet, "/api/webhooks/deliveries?limit=100&"+query, bearer, nil)
	require.Equal(t, http.StatusOK, status, out)
	var list []map[string]any
	for _, d := range out["data"].([]any) {
		list = append(list, d.(map[string]any))
	}
	return list
}

// waitFor polls until cond holds, for up to 20 seconds.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20 s for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// receiver is a partner's webhook receiver: it answers status (or, when
// fail is set, 500 to the events it names) and keeps what it was sent.
type receiver struct {
	url      string
	status   atomic.Int32
	fail     func(body []byte) bool
	failBody string
	mu       sync.Mutex
	got      []receivedRequest
}

type receivedRequest struct {
	Header http.Header
	Body   []byte
}

func newReceiver(t testing.TB, status int) *receiver {
	t.Helper()
	r := &receiver{}
	r.status.Store(int32(status))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, receivedRequest{req.Header.Clone(), b})
		fail, failBody := r.fail, r.failBody
		r.mu.Unlock()
		if fail != nil && fail(b) {
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, failBody)
			return
		}
		w.WriteHeader(int(r.status.Load()))
	}))
	t.Cleanup(ts.Close)
	r.url = ts.URL + "/hook"
	return r
}

func (r *receiver) received() []receivedRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]receivedRequest(nil), r.got...)
}

// keyID is the kid that signed the receiver's first request, as its
// x-pc-key-id header said.
func (r *receiver) keyID(t testing.TB) string {
	t.Helper()
	got := r.received()
	require.NotEmpty(t, got)
	kid := got[0].Header.Get("X-Pc-Key-Id")
	require.Regexp(t, `^pcwh_sandbox_`, kid)
	return kid
}

// sessionCredential is the short-lived credential the console minted for
// the partner's newest session: not the partner's own, and expiring with
// the link.
func (s *stack) sessionCredential(t testing.TB, partner auth.Credential) auth.Credential {
	t.Helper()
	all, err := s.creds.List(context.Background(), partner.Tenant)
	require.NoError(t, err)
	var newest auth.Credential
	for _, c := range all {
		if c.PartnerID == partner.PartnerID && c.PublicID != partner.PublicID && c.CreatedAt.After(newest.CreatedAt) {
			newest = c
		}
	}
	require.NotEmpty(t, newest.PublicID, "no session credential of %s", partner.PartnerID)
	return newest
}

// recordUse puts n calls of route by cred in the edge's ledger, from first
// to last, all counted in last's hour, the latest with request id sample.
func (s *stack) recordUse(t testing.TB, cred auth.Credential, route string, first, last time.Time, n int64, sample string) {
	t.Helper()
	require.NoError(t, s.ledger.AddUses(context.Background(), []store.Use{{Subject: cred.PublicID, Route: route, First: first, Last: last, Count: n,
		Sample: sample, Hours: map[int64]int64{last.Unix() / 3600: n}}}))
}

// policyEnv is the compatibility environment the edge reads from
// SERVICE_API_CANONICAL_ROUTES=true and SERVICE_API_COMPATIBILITY_START=start.
func policyEnv(start string) policy.Env {
	vars := map[string]string{policy.EnvCanonicalRoutes: "true", policy.EnvCompatibilityStart: start}
	return policy.EnvFrom(func(name string) string { return vars[name] })
}

func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }
