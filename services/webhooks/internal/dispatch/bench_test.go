package dispatch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/dispatch"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/events"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// BenchmarkSignedDeliveries sends b.N scheduled deliveries, spread over 20
// endpoints, to a local receiver that verifies every signature as a
// partner's does. It reports signed deliveries per second and the time
// from scheduled to received (p50, p99). The per-endpoint rate limit is
// raised out of the way: this measures the sender, not the policy.
func BenchmarkSignedDeliveries(b *testing.B) {
	cfg := dispatch.DefaultConfig()
	cfg.Rate = delivery.Rate{PerSecond: 1e6, Burst: 1e6}
	cfg.PerEndpointInFlight = 16
	cfg.Poll = 5 * time.Millisecond
	cfg.Batch = 200
	f := newFixture(b, cfg)
	r := newReceipts(b, f)
	const endpointCount = 20
	for i := range endpointCount {
		require.NoError(b, f.eps.Create(f.ctx, endpoints.New(fmt.Sprintf("we_%02d", i), acme, endpoints.Registration{URL: r.url + "/hook"}, time.Now())))
	}
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		now := time.Now()
		ev := fmt.Sprintf(`{"schemaVersion":"case-event-v2","eventId":"evt_%d","sequence":1,"type":"case.opened","occurredAt":%q,"caseId":"case_1","externalCaseId":"ext-1","actionRequired":false}`,
			i, now.UTC().Format("2006-01-02T15:04:05.000Z"))
		endpoint := fmt.Sprintf("we_%02d", i%endpointCount)
		_, err := f.dlv.Create(f.ctx, store.Delivery{ID: events.DeliveryID(fmt.Sprintf("evt_%d", i), endpoint), EventID: fmt.Sprintf("evt_%d", i), EventType: "case.opened", EndpointID: endpoint,
			Tenant: acme.Tenant, Environment: acme.Environment, PartnerID: acme.PartnerID, Status: store.StatusScheduled, Trigger: store.TriggerScheduled,
			CreatedAt: now, NextAttemptAt: now, Event: json.RawMessage(ev)})
		require.NoError(b, err)
		if i%200 == 199 {
			f.sender.Poll(f.ctx)
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for r.received.Load() < int64(b.N) && time.Now().Before(deadline) {
		f.sender.Poll(f.ctx)
		time.Sleep(cfg.Poll)
	}
	f.sender.Wait()
	elapsed := time.Since(start)
	require.Equal(b, int64(b.N), r.received.Load(), "every delivery arrives")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
	r.report(b, 50, 99)
}

// BenchmarkPublishedToDelivered offers 1,000 events a second, each
// scheduled as the fan-out schedules it (and nudging the sender, as the
// fan-out does), to a sender running with its default poll interval, and
// reports the time from scheduling to a verified receipt. b.N is the number
// of events.
func BenchmarkPublishedToDelivered(b *testing.B) {
	cfg := dispatch.DefaultConfig()
	cfg.Rate = delivery.Rate{PerSecond: 1e6, Burst: 1e6}
	f := newFixture(b, cfg)
	r := newReceipts(b, f)
	const endpointCount = 20
	for i := range endpointCount {
		require.NoError(b, f.eps.Create(f.ctx, endpoints.New(fmt.Sprintf("we_%02d", i), acme, endpoints.Registration{URL: r.url + "/hook"}, time.Now())))
	}
	ctx, cancel := context.WithCancel(f.ctx)
	running := make(chan error, 1)
	go func() { running <- f.sender.Run(ctx) }()
	b.ResetTimer()
	tick := time.NewTicker(time.Millisecond) // 1,000 events a second
	for i := range b.N {
		<-tick.C
		now := time.Now()
		ev := fmt.Sprintf(`{"schemaVersion":"case-event-v2","eventId":"evt_%d","sequence":1,"type":"case.opened","occurredAt":%q,"caseId":"case_1","externalCaseId":"ext-1","actionRequired":false}`,
			i, now.UTC().Format("2006-01-02T15:04:05.000Z"))
		endpoint := fmt.Sprintf("we_%02d", i%endpointCount)
		_, err := f.dlv.Create(f.ctx, store.Delivery{ID: events.DeliveryID(fmt.Sprintf("evt_%d", i), endpoint), EventID: fmt.Sprintf("evt_%d", i), EventType: "case.opened", EndpointID: endpoint,
			Tenant: acme.Tenant, Environment: acme.Environment, PartnerID: acme.PartnerID, Status: store.StatusScheduled, Trigger: store.TriggerScheduled,
			CreatedAt: now, NextAttemptAt: now, Event: json.RawMessage(ev)})
		require.NoError(b, err)
		f.sender.Nudge()
	}
	tick.Stop()
	deadline := time.Now().Add(time.Minute)
	for r.received.Load() < int64(b.N) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	require.NoError(b, <-running)
	require.Equal(b, int64(b.N), r.received.Load(), "every delivery arrives")
	r.report(b, 50, 95, 99)
}

// receipts is a partner's receiver for the benchmarks: it verifies every
// signature as a partner's does and keeps the time from each event's
// occurredAt (when it was scheduled) to its receipt.
type receipts struct {
	url       string
	received  atomic.Int64
	mu        sync.Mutex
	latencies []time.Duration
}

func newReceipts(b *testing.B, f *fixture) *receipts {
	r := &receipts{latencies: make([]time.Duration, 0, b.N)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if _, err := signature.Verify(req.Header, body, f.lookup, time.Now(), 5*time.Minute); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var e struct {
			OccurredAt time.Time `json:"occurredAt"`
		}
		_ = json.Unmarshal(body, &e)
		r.mu.Lock()
		r.latencies = append(r.latencies, time.Since(e.OccurredAt))
		r.mu.Unlock()
		r.received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// report adds the given percentiles of the latencies as p<n>-ms metrics.
func (r *receipts) report(b *testing.B, percentiles ...int) {
	slices.Sort(r.latencies)
	for _, p := range percentiles {
		b.ReportMetric(float64(r.latencies[len(r.latencies)*p/100].Microseconds())/1000, fmt.Sprintf("p%d-ms", p))
	}
}
