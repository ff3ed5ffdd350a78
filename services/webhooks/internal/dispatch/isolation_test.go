package dispatch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/dispatch"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/events"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// One endpoint that hangs does not raise the p99 delivery latency of the
// others by more than 10%. One running sender (its real loop, nudged as
// the fan-out nudges it) takes 500 deliveries a second spread over ten
// healthy endpoints, first alone, then with an eleventh endpoint that
// never answers taking its share as well (every request hangs until the
// 10 s timeout). The latency is from scheduling to the receiver's handler.
//
// The bound is p99(with) <= 1.1 * p99(without) + 2 ms. The 2 ms floor is
// there because on this shared 2-core machine the p99 of a few thousand
// loopback deliveries is a few milliseconds and moves by a millisecond or
// two from one second to the next with the other processes' load; 10% of
// it alone is below that noise. A sender that let the hanging endpoint
// take its slots or block its loop adds whole seconds, far past either.
func TestAHangingEndpointDoesNotRaiseTheOthersP99(t *testing.T) {
	const healthy, perSecond = 10, 500
	phase := 3 * time.Second
	if raceEnabled || testing.Short() {
		phase = time.Second
	}
	cfg := dispatch.DefaultConfig()
	cfg.Rate = delivery.Rate{PerSecond: 1000, Burst: 1000} // healthy endpoints take 50/s each, above the default 10/s
	f := newFixture(t, cfg)

	var mu sync.Mutex
	scheduled := map[string]time.Time{}
	var latencies []time.Duration
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		var b struct {
			DeliveryID string `json:"deliveryId"`
		}
		_ = json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		if at, found := scheduled[b.DeliveryID]; found {
			latencies = append(latencies, now.Sub(at))
		}
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(ok.Close)
	hanging, stopHanging := hangingEndpoint(t)

	for i := range healthy {
		require.NoError(t, f.eps.Create(f.ctx, endpoints.New(fmt.Sprintf("we_ok%d", i), acme, endpoints.Registration{URL: ok.URL}, time.Now())))
	}
	require.NoError(t, f.eps.Create(f.ctx, endpoints.New("we_hang", acme, endpoints.Registration{URL: hanging.URL}, time.Now())))

	ctx, cancel := context.WithCancel(f.ctx)
	running := make(chan error, 1)
	go func() { running <- f.sender.Run(ctx) }()
	n := 0
	offer := func(withHanging bool) []time.Duration {
		mu.Lock()
		latencies = nil
		mu.Unlock()
		tick := time.NewTicker(time.Second / perSecond)
		defer tick.Stop()
		sent := 0
		for end := time.Now().Add(phase); time.Now().Before(end); {
			<-tick.C
			n++
			endpoint := fmt.Sprintf("we_ok%d", n%healthy)
			if withHanging && n%(healthy+1) == healthy {
				endpoint = "we_hang"
			}
			ev := fmt.Sprintf("evt_%d", n)
			id := events.DeliveryID(ev, endpoint)
			now := time.Now()
			if endpoint != "we_hang" {
				mu.Lock()
				scheduled[id] = now
				mu.Unlock()
				sent++
			}
			_, err := f.dlv.Create(f.ctx, store.Delivery{ID: id, EventID: ev, EventType: "case.opened", EndpointID: endpoint,
				Tenant: acme.Tenant, Environment: acme.Environment, PartnerID: acme.PartnerID, Status: store.StatusScheduled, Trigger: store.TriggerScheduled,
				CreatedAt: now, NextAttemptAt: now, Event: eventBody(ev)})
			require.NoError(t, err)
			f.sender.Nudge()
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			got := len(latencies)
			mu.Unlock()
			if got >= sent {
				break
			}
			require.True(t, time.Now().Before(deadline), "only %d of %d healthy deliveries arrived", got, sent)
			<-time.After(10 * time.Millisecond) // polling the receiver with a deadline
		}
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(latencies)
	}

	p := func(ls []time.Duration, q int) time.Duration {
		slices.Sort(ls)
		return ls[len(ls)*q/100]
	}
	// A hanging endpoint that held up the others would add its timeout
	// (seconds) to their p99 every time; the machine's noise adds
	// milliseconds now and then. So a pair of phases is measured up to
	// three times, and the first pair within the bound passes.
	var p99Without, p99With time.Duration
	for attempt := 1; attempt <= 3; attempt++ {
		without := offer(false)
		with := offer(true)
		p99Without, p99With = p(without, 99), p(with, 99)
		t.Logf("attempt %d, healthy endpoints, %d deliveries/s: p50 %v, p99 %v alone; p50 %v, p99 %v beside a hanging endpoint (%d and %d samples)",
			attempt, perSecond, p(without, 50), p99Without, p(with, 50), p99With, len(without), len(with))
		if p99With <= p99Without+p99Without/10+2*time.Millisecond {
			break
		}
	}
	cancel()
	stopHanging() // the hanging requests end now, not at their timeout
	require.NoError(t, <-running)
	limit := p99Without + p99Without/10 + 2*time.Millisecond
	require.LessOrEqual(t, p99With, limit, "the hanging endpoint raised the others' p99 from %v to %v", p99Without, p99With)
}

func eventBody(eventID string) delivery.Event {
	return delivery.Event{SchemaVersion: "case-event-v2", EventID: eventID, Sequence: 1, Type: "case.opened", OccurredAt: "2026-11-23T12:00:00.000Z", CaseID: "case_1", ExternalCaseID: "ext-1"}
}
