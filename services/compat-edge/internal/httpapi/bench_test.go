package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/telemetry"
	"github.com/pcourt/pcourt/services/compat-edge/internal/httpapi"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/legacyuse"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

// The compared paths, in one run: a small authenticated JSON GET direct to
// its owner, through a bare httputil.ReverseProxy (default transport), and
// through the edge with the policy (an announced alias), the access log
// and tracing (the SDK, every span sampled and batched) on.
//
//	go test -run '^$' -bench 'Edge' -benchtime 3s ./internal/httpapi
//
// BenchmarkEdgeThroughput reports requests/s (closed loop, 32 callers per
// core) and p50/p99; BenchmarkEdgeAt2000rps offers a fixed 2,000
// requests/s (open loop: latency counts from each request's scheduled
// start) and reports p50/p99. The difference to "direct" is what each hop
// adds.
const benchPath = "/api/v2/cases/cs_1"

type benchTargets struct{ direct, bare, edge string }

func startTargets(b *testing.B) benchTargets {
	b.Helper()
	body := []byte(`{"data":{"caseId":"cs_1","status":"open","track":"ai_standard"},"requestId":"req_1"}`)
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer pc_sbx_bench" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "private, no-store")
		_, _ = w.Write(body)
	}))
	b.Cleanup(owner.Close)
	ownerURL, _ := url.Parse(owner.URL)

	bare := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(ownerURL)
		pr.SetXForwarded()
	}})
	b.Cleanup(bare.Close)

	logger := slog.New(slog.NewJSONHandler(io.Discard, nil)) // the access log is written, in production form
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider()
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	tel := &telemetry.Providers{Tracer: tp, Meter: mp, Propagator: propagation.TraceContext{}, MetricsHandler: http.NotFoundHandler()}
	cfg := httpserver.DefaultConfig()
	cfg.MaxInFlight = 1 << 16
	srv := httpserver.New(cfg, httpserver.Deps{Service: "compat-edge", Logger: logger, Telemetry: tel})
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
		upstreams[o] = ownerURL
	}
	proxy, err := httpapi.NewProxy(routing.NewTable(routing.Families), upstreams, httpapi.Forwarding{}, tel.Propagator, httpapi.Compat{
		Index: index, Policy: func() *policy.Policy { return pol }, Now: time.Now, Record: rec.Record,
	})
	if err != nil {
		b.Fatal(err)
	}
	httpapi.Register(srv.Router(), httpapi.Config{MaxBodyBytes: 16 << 20}, proxy, []byte("{}"))
	edge := httptest.NewServer(srv.Router())
	b.Cleanup(edge.Close)
	return benchTargets{direct: owner.URL, bare: bare.URL, edge: edge.URL}
}

func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, DisableCompression: true}}
}

func get(b *testing.B, c *http.Client, target string) {
	req, _ := http.NewRequest(http.MethodGet, target+benchPath, nil)
	req.Header.Set("Authorization", "Bearer pc_sbx_bench")
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

type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) { l.mu.Lock(); l.d = append(l.d, d); l.mu.Unlock() }

func (l *latencies) report(b *testing.B) {
	sort.Slice(l.d, func(i, j int) bool { return l.d[i] < l.d[j] })
	if len(l.d) == 0 {
		return
	}
	q := func(p float64) float64 { return float64(l.d[int(p*float64(len(l.d)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}

func BenchmarkEdgeThroughput(b *testing.B) {
	t := startTargets(b)
	for _, tc := range []struct{ name, url string }{{"direct", t.direct}, {"bare-proxy", t.bare}, {"edge", t.edge}} {
		b.Run(tc.name, func(b *testing.B) {
			c := benchClient()
			get(b, c, tc.url) // warm
			var lat latencies
			b.SetParallelism(32)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					t0 := time.Now()
					get(b, c, tc.url)
					lat.add(time.Since(t0))
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
			lat.report(b)
		})
	}
}

func BenchmarkEdgeAt2000rps(b *testing.B) {
	t := startTargets(b)
	const interval = time.Second / 2000
	for _, tc := range []struct{ name, url string }{{"direct", t.direct}, {"bare-proxy", t.bare}, {"edge", t.edge}} {
		b.Run(tc.name, func(b *testing.B) {
			c := benchClient()
			get(b, c, tc.url)
			var lat latencies
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			i := 0
			for b.Loop() {
				due := start.Add(time.Duration(i) * interval)
				i++
				if d := time.Until(due); d > 0 {
					time.Sleep(d) // pacing the offered load, not waiting for a result
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					get(b, c, tc.url)
					lat.add(time.Since(due))
				}()
			}
			wg.Wait()
			lat.report(b)
		})
	}
}
