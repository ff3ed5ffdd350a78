package proxy_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/logging"
	"github.com/pcourt/pcourt/libs/nginxtest"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/libs/telemetry"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/legacyuse"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/proxy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

// The compared paths, in one run, all to the same owner: a small
// authenticated JSON GET served by the stack every owner runs (libs/httpserver
// with its middleware, tracing and access log; libs/auth verifying a
// credential minted in a real redis-server), asked direct, through a bare
// httputil.ReverseProxy (default transport), through nginx (2 workers,
// upstream keepalive) where installed, and through the edge with the policy
// (an announced alias), the access log and tracing on in production form:
//
//	go test -run '^$' -bench 'Edge' -benchtime 3s ./internal/proxy
//
// BenchmarkEdgeThroughput reports requests/s (closed loop, 32 callers per
// core), p50/p99 and the process's CPU time per request;
// BenchmarkEdgeAt2000rps offers a fixed 2,000 requests/s (open loop:
// latency counts from each request's scheduled start) and reports p50/p99
// and what each hop adds to direct's.
const benchPath = "/api/v2/cases/cs_1"

type benchTargets struct {
	token string
	// paths are the compared paths in order, direct first.
	paths []comparedPath
	// nginxMissing says why nginx is not compared, "" when it is.
	nginxMissing string
}

type comparedPath struct{ name, url string }

// productionLog is where the benchmark's servers log: a real file, so each
// line costs what it costs on stdout, and nothing fills the disk.
func productionLog(b *testing.B, service string) *slog.Logger {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.Close() })
	return logging.New(f, service, slog.LevelInfo)
}

// productionTelemetry samples spans as the chart deploys every service
// (parentbased_traceidratio at 0.1: a partner's sampled traceparent is
// always followed, one in ten other requests is traced; the rest still carry
// trace ids to logs and owners), batches them to an exporter, and aggregates
// the HTTP metrics for a reader.
func productionTelemetry(b *testing.B) *telemetry.Providers {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.1))))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	return &telemetry.Providers{Tracer: tp, Meter: mp, Propagator: propagation.TraceContext{}, MetricsHandler: http.NotFoundHandler()}
}

// runServer serves srv on a loopback port as a service's main does (its
// http.Server with timeouts) until the benchmark ends, and returns its URL.
func runServer(b *testing.B, srv *httpserver.Server) string {
	addr, err := srv.Listen()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Run(ctx); close(done) }()
	b.Cleanup(func() { cancel(); <-done })
	return "http://" + addr.String()
}

func serverConfig() httpserver.Config {
	cfg := httpserver.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.AdminAddr = "off"
	cfg.MaxInFlight = 1 << 16
	return cfg
}

// startOwner is the cases service's shape for one small authenticated read.
// The per-credential rate is off (the benchmark sends thousands of
// requests a second with one credential; libs/auth tests the pacing).
func startOwner(b *testing.B) (ownerURL, token string) {
	rdb := redistest.NewClient(b)
	credCfg := auth.DefaultStoreConfig()
	credCfg.PerCredential = ratelimit.Off
	creds := auth.NewStore(rdb, credCfg)
	token, _ = authtest.Mint(b, creds, auth.RoleClaimantAgent)
	srv := httpserver.New(serverConfig(), httpserver.Deps{Service: "cases", Logger: productionLog(b, "cases"), Telemetry: productionTelemetry(b)})
	srv.Router().GET("/api/v2/cases/:caseId", auth.Middleware(creds), func(c *gin.Context) {
		cred, _ := auth.CredentialFrom(c.Request.Context())
		c.Header("Cache-Control", "private, no-store")
		c.JSON(http.StatusOK, gin.H{
			"data":      gin.H{"caseId": c.Param("caseId"), "status": "open", "track": "ai_standard", "partnerId": cred.PartnerID},
			"requestId": requestid.Get(c),
		})
	})
	return runServer(b, srv), token
}

func startTargets(b *testing.B) benchTargets {
	b.Helper()
	// The benchmark's process runs with the services' garbage-collection
	// target, as the deployed edge does: every compared path shares the
	// process, so direct's figures are taken under the same collector.
	b.Cleanup(service.UseGCTarget())
	ownerURL, token := startOwner(b)
	owner, _ := url.Parse(ownerURL)
	t := benchTargets{token: token, paths: []comparedPath{{"direct", ownerURL}}}

	bare := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(owner)
		pr.SetXForwarded()
	}})
	b.Cleanup(bare.Close)
	t.paths = append(t.paths, comparedPath{"bare-proxy", bare.URL})

	if nginxtest.Binary() == "" {
		t.nginxMissing = "nginx is not installed (Debian: apt-get install nginx-light); the nginx path is not compared"
	} else {
		ngx := nginxtest.Start(b, owner.Host, nginxtest.Workers(2))
		t.paths = append(t.paths, comparedPath{"nginx", ngx.URL})
	}

	logger := productionLog(b, "compat-edge")
	tel := productionTelemetry(b)
	srv := httpserver.New(serverConfig(), httpserver.Deps{Service: "compat-edge", Logger: logger, Telemetry: tel})
	index, err := inventory.NewIndex(inventory.Routes)
	if err != nil {
		b.Fatal(err)
	}
	pol := policy.Resolve(policy.Env{CanonicalRoutes: "true", FamilyGA: map[inventory.Family]string{inventory.V2Cases: "2026-01-15"}}, nil)
	rec := legacyuse.New(legacyuse.DefaultConfig(), func(context.Context, string) (string, error) { return "cred_bench", nil },
		func(context.Context, []store.Use) error { return nil }, logger)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = rec.Run(ctx) }()
	b.Cleanup(cancel)
	upstreams := map[routing.Owner]*url.URL{}
	for _, o := range routing.Owners {
		upstreams[o] = owner
	}
	forward, err := proxy.NewProxy(routing.NewTable(routing.Families), upstreams, proxy.Forwarding{}, tel.Propagator, proxy.Compat{
		Index: index, Policy: func() *policy.Policy { return pol }, Now: time.Now, Record: rec.Record,
	})
	if err != nil {
		b.Fatal(err)
	}
	proxy.Register(srv.Router(), proxy.Config{MaxBodyBytes: 16 << 20}, forward, []byte("{}"))
	t.paths = append(t.paths, comparedPath{"edge", runServer(b, srv)})
	return t
}

// run runs one sub-benchmark per path; nginx's says why it is skipped
// where nginx is missing.
func (t benchTargets) run(b *testing.B, f func(b *testing.B, name, url string)) {
	names := []string{"direct", "bare-proxy", "nginx", "edge"}
	urls := map[string]string{}
	for _, p := range t.paths {
		urls[p.name] = p.url
	}
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			if name == "nginx" && t.nginxMissing != "" {
				b.Skip(t.nginxMissing)
			}
			f(b, name, urls[name])
		})
	}
}

func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, DisableCompression: true}}
}

func (t benchTargets) get(b *testing.B, c *http.Client, target string) {
	req, _ := http.NewRequest(http.MethodGet, target+benchPath, nil)
	req.Header.Set("Authorization", "Bearer "+t.token)
	resp, err := c.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Errorf("status %d", resp.StatusCode)
	}
}

// processCPU is the CPU time the benchmark's process (client, owner and
// proxy alike) has used. Per request it is the figure the shared machine's
// other load disturbs least: what the hops cost, whatever share of the
// cores the process got.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) { l.mu.Lock(); l.d = append(l.d, d); l.mu.Unlock() }

// quantiles returns p50 and p99 in milliseconds.
func (l *latencies) quantiles() (p50, p99 float64) {
	sort.Slice(l.d, func(i, j int) bool { return l.d[i] < l.d[j] })
	if len(l.d) == 0 {
		return 0, 0
	}
	q := func(p float64) float64 { return float64(l.d[int(p*float64(len(l.d)-1))].Microseconds()) / 1000 }
	return q(0.50), q(0.99)
}

func BenchmarkEdgeThroughput(b *testing.B) {
	t := startTargets(b)
	t.run(b, func(b *testing.B, name, target string) {
		c := benchClient()
		t.get(b, c, target) // warm
		var lat latencies
		b.SetParallelism(32)
		b.ResetTimer()
		start, cpu0 := time.Now(), processCPU()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				t0 := time.Now()
				t.get(b, c, target)
				lat.add(time.Since(t0))
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		if name != "nginx" { // nginx's own CPU is spent in its processes
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/req")
		}
		p50, p99 := lat.quantiles()
		b.ReportMetric(p50, "p50-ms")
		b.ReportMetric(p99, "p99-ms")
	})
}

// minPacedRequests is the fewest requests BenchmarkEdgeAt2000rps sends per
// path, whatever -benchtime says (5 s at 2,000/s): a p99 is then the
// hundred slowest of them, not the handful the default second would give.
const minPacedRequests = 10_000

func BenchmarkEdgeAt2000rps(b *testing.B) {
	t := startTargets(b)
	const interval = time.Second / 2000
	var directP50, directP99 float64
	t.run(b, func(b *testing.B, name, target string) {
		c := benchClient()
		t.get(b, c, target)
		var lat latencies
		var wg sync.WaitGroup
		// A path that cannot keep up would otherwise gather requests (and
		// their sockets) without bound; past the servers' in-flight limit
		// a request waits for a slot, its latency still counted from its
		// scheduled start.
		slots := make(chan struct{}, httpserver.DefaultConfig().MaxInFlight)
		b.ResetTimer()
		start := time.Now()
		for i := range max(b.N, minPacedRequests) {
			due := start.Add(time.Duration(i) * interval)
			if d := time.Until(due); d > 0 {
				time.Sleep(d) // pacing the offered load, not waiting for a result
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				slots <- struct{}{}
				defer func() { <-slots }()
				t.get(b, c, target)
				lat.add(time.Since(due))
			}()
		}
		wg.Wait()
		p50, p99 := lat.quantiles()
		b.ReportMetric(p50, "p50-ms")
		b.ReportMetric(p99, "p99-ms")
		if name == "direct" {
			directP50, directP99 = p50, p99
			return
		}
		b.ReportMetric(p50-directP50, "adds-p50-ms")
		b.ReportMetric(p99-directP99, "adds-p99-ms")
	})
}
