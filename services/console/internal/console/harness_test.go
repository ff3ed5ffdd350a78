package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/console/internal/console"
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

// stack is the console in front of the real edge and webhooks binaries,
// as they are deployed: the edge routes /console and /api/console to the
// console (in process, so a test can move its clock), /api/webhooks to the
// webhooks process and every other owner's paths to a stand-in answering
// 418; the console calls the public API back through the edge. All of them
// share one redis-server and one Kafka cluster (kfake), where the test
// publishes case events as the cases service does.
type stack struct {
	url     string // the edge: browsers and partners' backends call here
	hookURL string // the webhooks process, called directly
	rdb     *redis.Client
	creds   *auth.Store
	store   *console.Store
	clock   *clock
	events  *kafka.Producer
	edge    *process
	// adminURL is the edge's admin listener (the compatibility admin API).
	adminURL string
}

// adminToken is the edge's EDGE_ADMIN_TOKEN.
const adminToken = "console-test-admin-token"

type clock struct {
	mu sync.Mutex
	d  time.Duration
}

func (c *clock) now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return time.Now().Add(c.d) }
func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.d += d; c.mu.Unlock() }

// stackOption changes the stack's start.
type stackOption func(*stackSettings)

type stackSettings struct{ compat []string }

// withCompat starts the edge with the compatibility policy's SERVICE_API_*
// variables (policyEnv).
func withCompat(env []string) stackOption { return func(s *stackSettings) { s.compat = env } }

func newStack(t testing.TB, opts ...stackOption) *stack {
	t.Helper()
	var set stackSettings
	for _, o := range opts {
		o(&set)
	}
	bins := binaries(t)
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	brokers := kafkatest.StartBroker(t)
	kafkatest.CreateTopic(t, brokers, api.CaseEventsTopic, 4)
	producer, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers, ClientID: "console-test"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = producer.Close() })
	acfg := auth.DefaultStoreConfig()
	acfg.PerCredential = ratelimit.Off
	creds := auth.NewStore(rdb, acfg)
	s := &stack{rdb: rdb, creds: creds, store: console.NewStore(rdb), clock: &clock{}, events: producer}

	common := []string{"REDIS_ADDRS=" + srv.Addr, "REDIS_MODE=standalone", "KAFKA_BROKERS=" + strings.Join(brokers, ","), "LOG_LEVEL=warn"}
	// The webhooks service as deployed, but for development's loopback
	// receivers (sandbox, http, 127.0.0.0/8) and a short schedule: two
	// attempts 300 ms apart, so a failing receiver's deliveries fail for
	// good within a second, where a deployment retries for days; the
	// sender polls every 50 ms; the breaker opens only after 1000
	// consecutive failures, so a test's retries are not held back.
	hooksPort := freePort(t)
	hooks := &process{name: "webhooks", bin: filepath.Join(bins, "webhooks"), port: hooksPort, env: append(append([]string(nil), common...),
		fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", hooksPort), "ADMIN_ADDR=off",
		"WEBHOOK_DEV_EPHEMERAL_KEYS=true", "WEBHOOK_ALLOW_HTTP_SANDBOX=true", "WEBHOOK_EGRESS_ALLOW_CIDRS=127.0.0.0/8",
		"WEBHOOK_MAX_ATTEMPTS=2", "WEBHOOK_RETRY_BASE=300ms", "WEBHOOK_SEND_POLL=50ms", "WEBHOOK_BREAKER_THRESHOLD=1000")}
	hooks.start(t)
	s.hookURL = fmt.Sprintf("http://127.0.0.1:%d", hooksPort)

	// The owners not under test answer every request with 418.
	others := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	t.Cleanup(others.Close)

	edgePort, adminPort := freePort(t), freePort(t)
	s.url = fmt.Sprintf("http://127.0.0.1:%d", edgePort)
	s.adminURL = fmt.Sprintf("http://127.0.0.1:%d", adminPort)
	// The console as cmd/console wires it: its origin is the edge's, and it
	// calls the public API through the edge, as a partner's backend does.
	cons, err := console.New(console.Config{PublicBaseURL: s.url, APIURL: s.url}, console.Deps{
		Store: s.store, Credentials: creds, Logger: discard(), Now: s.clock.now,
	})
	require.NoError(t, err)
	// The service's own server, as cmd/console builds it: its problem
	// middleware renders the links API's refusals.
	web := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "console", Logger: discard()})
	cons.Register(web.Router())
	consoleServer := httptest.NewServer(web.Router())
	t.Cleanup(consoleServer.Close)

	edgeEnv := append(append([]string(nil), common...),
		fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", edgePort), fmt.Sprintf("ADMIN_ADDR=127.0.0.1:%d", adminPort),
		"EDGE_ADMIN_TOKEN="+adminToken,
		// The ledger is written every 50 ms; durable settings are read
		// again at once by the replica that saves them (the only one here).
		"EDGE_LEGACY_USE_FLUSH_INTERVAL=50ms",
		"UPSTREAM_WEBHOOKS_URL="+s.hookURL, "UPSTREAM_CONSOLE_URL="+consoleServer.URL,
		"UPSTREAM_READINESS_URL="+others.URL, "UPSTREAM_FILINGS_URL="+others.URL, "UPSTREAM_CASES_URL="+others.URL,
		"UPSTREAM_ACCOUNTS_URL="+others.URL)
	s.edge = &process{name: "compat-edge", bin: filepath.Join(bins, "compat-edge"), port: edgePort, env: append(edgeEnv, set.compat...)}
	s.edge.start(t)
	return s
}

// setCompat restarts the edge with the compatibility policy's variables
// (SERVICE_API_*), which it reads at start only, on the same port: the
// console and the browsers' cookies carry on.
func (s *stack) setCompat(t testing.TB, env []string) {
	t.Helper()
	s.edge.stop()
	var kept []string
	for _, kv := range s.edge.env {
		if !strings.HasPrefix(kv, "SERVICE_API_") {
			kept = append(kept, kv)
		}
	}
	s.edge.env = append(kept, env...)
	s.edge.start(t)
}

// admin calls the edge's compatibility admin API as an administrator and
// returns its answer.
func (s *stack) admin(t testing.TB, method, path string, body any) map[string]any {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.adminURL+"/admin/compatibility"+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("X-PC-Actor", "console-test")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Less(t, resp.StatusCode, 300, "%s %s: %s", method, path, raw)
	var out map[string]any
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	}
	return out
}

// scheduleBrownout schedules a two-hour brownout of family through the
// admin API, two months from now or the day after the family's window
// ends, whichever is later (the policy acts on none inside the window),
// and returns its start and end.
func (s *stack) scheduleBrownout(t testing.TB, family string) [2]time.Time {
	t.Helper()
	out := s.admin(t, http.MethodGet, "/policy?family="+family, nil)
	fams := out["data"].(map[string]any)["families"].([]any)
	require.Len(t, fams, 1)
	start := time.Now().UTC().AddDate(0, 2, 0).Truncate(time.Hour)
	if end, ok := fams[0].(map[string]any)["windowEnd"].(string); ok {
		windowEnd, err := time.Parse(time.DateOnly, end)
		require.NoError(t, err)
		if after := windowEnd.AddDate(0, 0, 1); after.After(start) {
			start = after
		}
	}
	span := [2]time.Time{start, start.Add(2 * time.Hour)}
	s.admin(t, http.MethodPost, "/families/"+family+"/brownouts", map[string]time.Time{"start": span[0], "end": span[1]})
	return span
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
	req, err := http.NewRequest(method, s.hookURL+path, rd)
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

// openCase publishes the events of a case for the credential's partner on
// the cases service's topic, as the cases service does when a case opens:
// the webhooks fan-out schedules one delivery per subscribed endpoint, and
// its sender sends them. Each record is checked against the envelope's
// published schema first.
func (s *stack) openCase(t testing.TB, cred auth.Credential, caseID string, types ...string) {
	t.Helper()
	if len(types) == 0 {
		types = []string{"opened"}
	}
	msgs := make([]kafka.Message, 0, len(types))
	for i, typ := range types {
		eventID := fmt.Sprintf("evt_%s_%d", caseID, i+1)
		value, err := json.Marshal(map[string]any{
			"schemaVersion": api.CaseEventEnvelopeSchema,
			"recipients":    []map[string]string{{"tenant": cred.Tenant, "environment": string(cred.Environment), "partnerId": cred.PartnerID}},
			"event": map[string]any{"schemaVersion": api.CaseEventSchema, "eventId": eventID, "sequence": i + 1, "type": typ,
				"occurredAt": time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), "caseId": caseID, "externalCaseId": "ext-" + caseID,
				"actionRequired": false},
		})
		require.NoError(t, err)
		apitest.Event(t, "cases-event-envelope-v2.schema.json", value)
		msgs = append(msgs, kafka.Message{Topic: api.CaseEventsTopic, Key: caseID, EventID: eventID, Schema: api.CaseEventEnvelopeSchema, Value: value})
	}
	require.NoError(t, s.events.Publish(context.Background(), msgs...))
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
	// held, while set, is closed when the receiver may answer again
	// (holdAnswers): its requests wait for it.
	held atomic.Pointer[chan struct{}]
	mu   sync.Mutex
	got  []receivedRequest
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
		if held := r.held.Load(); held != nil {
			select {
			case <-*held:
			case <-req.Context().Done():
				return
			}
		}
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

// holdAnswers makes the receiver's requests wait until release (at the
// test's end at the latest): a delivery stays in flight for as long as a
// test needs to see it so.
func (r *receiver) holdAnswers(t testing.TB) (release func()) {
	held := make(chan struct{})
	r.held.Store(&held)
	var once sync.Once
	release = func() {
		once.Do(func() {
			r.held.Store(nil)
			close(held)
		})
	}
	t.Cleanup(release)
	return release
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

// callAlias calls route, an earlier route of the public API, through the
// edge with bearer, as a partner's backend does, with request id
// requestID: the edge records the use in its legacy-use ledger (the owner
// behind, a stand-in, answers 418).
func (s *stack) callAlias(t testing.TB, bearer, path, requestID string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.url+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("X-Request-Id", requestID)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusTeapot, resp.StatusCode, "the alias is forwarded to its owner")
}

// policyEnv is the compatibility environment SERVICE_API_CANONICAL_ROUTES=true
// and SERVICE_API_COMPATIBILITY_START=start, for the edge.
func policyEnv(start string) []string {
	return []string{"SERVICE_API_CANONICAL_ROUTES=true", "SERVICE_API_COMPATIBILITY_START=" + start}
}

// binaries builds the webhooks and compat-edge binaries once per test run,
// from this checkout through its workspace, into a directory TestMain
// removes.
func binaries(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		root, err := filepath.Abs("../../../..")
		if err != nil {
			built.err = err
			return
		}
		dir, err := os.MkdirTemp("", "console-test-bin-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		cmd := exec.Command("go", "build", "-o", dir+string(os.PathSeparator), "./services/webhooks/cmd/webhooks", "./services/compat-edge/cmd/compat-edge")
		cmd.Dir = root
		// As tools/devstack and the images build them (static, paths
		// trimmed), so the compile is shared with theirs.
		cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"), "CGO_ENABLED=0",
			"GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -trimpath"))
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("building webhooks and compat-edge: %w\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.dir
}

var built struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// process is a service binary run as a child process.
type process struct {
	name, bin string
	port      int
	env       []string
	cmd       *exec.Cmd
	done      chan struct{}
	log       string
}

// start runs the binary until the test ends and waits for its /readyz.
func (p *process) start(t testing.TB) {
	t.Helper()
	p.log = filepath.Join(t.TempDir(), p.name+".log")
	f, err := os.Create(p.log)
	require.NoError(t, err)
	p.cmd = exec.Command(p.bin)
	// Only what the test gives: no SERVICE_API_* or REDIS_* of the caller.
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, p.env...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	require.NoError(t, p.cmd.Start())
	done := make(chan struct{})
	p.done = done
	go func() { _ = p.cmd.Wait(); f.Close(); close(done) }()
	t.Cleanup(p.stop)
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", p.port)
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-done:
			t.Fatalf("%s exited before it was ready:\n%s", p.name, p.tail())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after 60 s (%v):\n%s", p.name, err, p.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop asks the process to drain (SIGTERM) and kills it after 10 s.
func (p *process) stop() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *process) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// freePort is a loopback port free now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }
