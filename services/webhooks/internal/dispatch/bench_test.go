package dispatch_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/dispatch"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/events"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

const benchEndpoints = 20

// BenchmarkSignedDeliveries is the sender alone: b.N deliveries, spread
// over 20 endpoints, are due when the timer starts, and the sender's Run
// loop (default poll, batch and concurrency) signs and POSTs them to a
// local receiver that acknowledges each after reading its body, as a
// partner's receiver that verifies and queues out of band does. It reports
// signed deliveries per second, from the start until the last one is
// recorded delivered. Every signature is verified by the package's tests;
// here the first request is, so a sender that stopped signing fails the
// benchmark. The per-endpoint rate limit is raised out of the way: this
// measures the sender, not the policy.
func BenchmarkSignedDeliveries(b *testing.B) {
	b.Cleanup(service.UseGCTarget()) // as the services run
	cfg := dispatch.DefaultConfig()
	cfg.Rate = delivery.Rate{PerSecond: 1e6, Burst: 1e6}
	f := newFixture(b, cfg)
	r := newBenchReceiver(b, f)
	for i := range benchEndpoints {
		require.NoError(b, f.eps.Create(f.ctx, endpoints.New(fmt.Sprintf("we_%02d", i), acme, endpoints.Registration{URL: r.url + "/hook"}, time.Now())))
	}
	// The backlog is written by 8 writers, as fan-outs on several replicas
	// write it; it is not timed.
	work := make(chan int)
	var writers sync.WaitGroup
	for range 8 {
		writers.Go(func() {
			for i := range work {
				scheduleBenchEvent(b, f, i, time.Now())
			}
		})
	}
	for i := range b.N {
		work <- i
	}
	close(work)
	writers.Wait()

	ctx, cancel := context.WithCancel(f.ctx)
	running := make(chan error, 1)
	cpu := startCPUMeter(b, f)
	b.ResetTimer()
	start := time.Now()
	go func() { running <- f.sender.Run(ctx) }()
	deadline := time.Now().Add(2 * time.Minute)
	for r.received.Load() < int64(b.N) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling with a deadline
	}
	cancel()
	require.NoError(b, <-running) // Run returns once every send is recorded
	elapsed := time.Since(start)
	b.StopTimer()
	require.Equal(b, int64(b.N), r.received.Load(), "every delivery arrives once")
	require.NoError(b, r.firstVerified())
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
	cpu.report(b, b.N)
}

// cpuMeter measures the CPU time spent during a benchmark by this process
// (the sender and the receiver) and by the Redis server, to say per
// delivery where the machine's two cores go.
type cpuMeter struct {
	f              *fixture
	process, redis time.Duration
}

func startCPUMeter(b *testing.B, f *fixture) *cpuMeter {
	m := &cpuMeter{f: f}
	m.process, m.redis = processCPU(b), redisCPU(b, f)
	return m
}

// report adds the CPU time per delivery of this process and of Redis.
func (m *cpuMeter) report(b *testing.B, deliveries int) {
	process, redis := processCPU(b)-m.process, redisCPU(b, m.f)-m.redis
	b.ReportMetric(float64(process.Microseconds())/float64(deliveries), "process-cpu-us/delivery")
	b.ReportMetric(float64(redis.Microseconds())/float64(deliveries), "redis-cpu-us/delivery")
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// redisCPU is the server's user and system CPU time, from INFO cpu.
func redisCPU(b *testing.B, f *fixture) time.Duration {
	info, err := f.rdb.Info(f.ctx, "cpu").Result()
	require.NoError(b, err)
	var total time.Duration
	for _, line := range strings.Split(info, "\r\n") {
		name, value, ok := strings.Cut(line, ":")
		if ok && (name == "used_cpu_user" || name == "used_cpu_sys") {
			seconds, err := strconv.ParseFloat(value, 64)
			require.NoError(b, err)
			total += time.Duration(seconds * float64(time.Second))
		}
	}
	return total
}

// BenchmarkPublishedToDelivered offers 1,000 events a second, each
// scheduled as the fan-out schedules it (and nudging the sender, as the
// fan-out does), to a sender running with its default configuration, and
// reports the time from scheduling to receipt (p50, p95, p99) and the load
// actually offered. Event i is scheduled at start + i ms by a pool of
// writers, so one slow write does not lower the load offered. b.N is the
// number of events.
func BenchmarkPublishedToDelivered(b *testing.B) {
	b.Cleanup(service.UseGCTarget()) // as the services run
	const perSecond = 1000
	cfg := dispatch.DefaultConfig()
	cfg.Rate = delivery.Rate{PerSecond: 1e6, Burst: 1e6}
	f := newFixture(b, cfg)
	r := newBenchReceiver(b, f)
	for i := range benchEndpoints {
		require.NoError(b, f.eps.Create(f.ctx, endpoints.New(fmt.Sprintf("we_%02d", i), acme, endpoints.Registration{URL: r.url + "/hook"}, time.Now())))
	}
	ctx, cancel := context.WithCancel(f.ctx)
	running := make(chan error, 1)
	go func() { running <- f.sender.Run(ctx) }()

	work := make(chan int, 4096)
	var writers sync.WaitGroup
	for range 16 {
		writers.Go(func() {
			for i := range work {
				r.offer(fmt.Sprintf("evt_%d", i))
				scheduleBenchEvent(b, f, i, time.Now())
				f.sender.Nudge()
			}
		})
	}
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if wait := time.Until(start.Add(time.Duration(i) * time.Second / perSecond)); wait > 0 {
			time.Sleep(wait) // pacing the offered load, not waiting for a result
		}
		work <- i
	}
	close(work)
	offerSpan := time.Since(start)
	writers.Wait()
	deadline := time.Now().Add(time.Minute)
	for r.received.Load() < int64(b.N) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
	cancel()
	require.NoError(b, <-running)
	b.StopTimer()
	require.Equal(b, int64(b.N), r.received.Load(), "every delivery arrives once")
	require.NoError(b, r.firstVerified())
	r.report(b, 50, 95, 99)
	b.ReportMetric(float64(b.N)/offerSpan.Seconds(), "offered-events/s")
}

// scheduleBenchEvent stores and schedules event i's delivery to one of the
// bench endpoints, due at now, as the fan-out does.
func scheduleBenchEvent(b *testing.B, f *fixture, i int, now time.Time) {
	eventID := fmt.Sprintf("evt_%d", i)
	ev := delivery.Event{SchemaVersion: "case-event-v2", EventID: eventID, Sequence: 1, Type: "case.opened", OccurredAt: now.UTC().Format("2006-01-02T15:04:05.000Z"), CaseID: "case_1", ExternalCaseID: "ext-1"}
	endpoint := fmt.Sprintf("we_%02d", i%benchEndpoints)
	_, err := f.dlv.Create(f.ctx, store.Delivery{ID: events.DeliveryID(eventID, endpoint), EventID: eventID, EventType: "case.opened", EndpointID: endpoint,
		Tenant: acme.Tenant, Environment: acme.Environment, PartnerID: acme.PartnerID, Status: store.StatusScheduled, Trigger: store.TriggerScheduled,
		CreatedAt: now, NextAttemptAt: now, Event: ev})
	if err != nil {
		b.Error(err)
	}
}

// benchReceiver is a partner's receiver for the benchmarks, lean as a
// partner's fast path is: it reads the body, notes the receipt and
// acknowledges. It keeps the first request to verify after the run (the
// package's tests verify every signature; verifying each here would
// measure Ed25519 verification on the sender's two cores), and the time
// from each offered event to its receipt.
type benchReceiver struct {
	url      string
	lookup   signature.KeyLookup
	received atomic.Int64
	lastAt   atomic.Int64 // unix ns of the latest receipt

	mu        sync.Mutex
	first     *http.Request
	firstBody []byte
	offered   map[string]time.Time
	latencies []time.Duration
}

func newBenchReceiver(b *testing.B, f *fixture) *benchReceiver {
	r := &benchReceiver{lookup: f.lookup, offered: map[string]time.Time{}, latencies: make([]time.Duration, 0, b.N)}
	srv := httptest.NewServer(http.HandlerFunc(r.serveHTTP))
	b.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *benchReceiver) serveHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	now := time.Now()
	eventID := req.Header.Get(signature.HeaderEventID)
	r.mu.Lock()
	if r.first == nil {
		r.first, r.firstBody = req.Clone(context.Background()), body
	}
	if at, ok := r.offered[eventID]; ok {
		r.latencies = append(r.latencies, now.Sub(at))
	}
	r.mu.Unlock()
	r.lastAt.Store(now.UnixNano())
	r.received.Add(1)
	w.WriteHeader(http.StatusNoContent)
}

// offer notes when event id was offered.
func (r *benchReceiver) offer(eventID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.offered[eventID] = time.Now()
}

// offeredAt is when event id was offered, if it was.
func (r *benchReceiver) offeredAt(eventID string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.offered[eventID]
	return at, ok
}

// firstVerified verifies the first request received as a partner does.
func (r *benchReceiver) firstVerified() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first == nil {
		return fmt.Errorf("nothing was received")
	}
	// Every bench endpoint shares this receiver: it takes the endpoint id
	// the delivery names, once it is one of the bench's.
	to := r.first.Header.Get(signature.HeaderEndpointID)
	var n int
	if _, err := fmt.Sscanf(to, "we_%02d", &n); err != nil || n >= benchEndpoints {
		return fmt.Errorf("signed for %q, not a bench endpoint", to)
	}
	_, err := signature.Verify(r.first.Header, r.firstBody, to, r.lookup, time.Now(), 5*time.Minute)
	return err
}

// report adds the given percentiles of the latencies as p<n>-ms metrics.
func (r *benchReceiver) report(b *testing.B, percentiles ...int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	slices.Sort(r.latencies)
	for _, p := range percentiles {
		b.ReportMetric(float64(r.latencies[len(r.latencies)*p/100].Microseconds())/1000, fmt.Sprintf("p%d-ms", p))
	}
}
