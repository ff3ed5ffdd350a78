package dispatch_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/dispatch"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/events"
	"github.com/pcourt/pcourt/services/webhooks/internal/keys"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// clock is the sender's injected clock: it moves only when the test says.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

// response is what a scripted receiver answers to one request; hang makes
// it wait until the sender gives up.
type response struct {
	status     int
	retryAfter string
	hang       bool
}

// scripted is a receiver that answers its script in order, then repeats
// the last answer. It verifies every request at the sender's clock, as the
// receiver of endpoint we_x.
type scripted struct {
	script   []response
	calls    atomic.Int64
	verified atomic.Int64
}

func (s *scripted) serve(f *fixture, clk *clock) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if _, err := signature.Verify(r.Header, body, "we_x", f.lookup, clk.Now(), 5*time.Minute); err == nil {
			s.verified.Add(1)
		}
		n := int(s.calls.Add(1)) - 1
		resp := s.script[min(n, len(s.script)-1)]
		if resp.hang {
			<-r.Context().Done()
			return
		}
		if resp.retryAfter != "" {
			w.Header().Set("Retry-After", resp.retryAfter)
		}
		w.WriteHeader(resp.status)
	}
}

// cumulative turns waits between attempts into instants after t0.
func cumulative(t0 time.Time, waits ...time.Duration) []time.Time {
	out := []time.Time{t0}
	for _, w := range waits {
		out = append(out, out[len(out)-1].Add(w))
	}
	return out
}

// The documented schedule, driven by an injected clock through the real
// sender against real receivers: every attempt happens exactly when
// docs/webhooks.md says, and ends the delivery and the endpoint as it says.
func TestRetryScheduleAgainstRealReceivers(t *testing.T) {
	sec, minute, hour := time.Second, time.Minute, time.Hour
	// Waits before attempts 2..17 of the default schedule (30 s doubling,
	// capped at 12 h), and the same raised to 60 s after a timeout.
	nominal := []time.Duration{30 * sec, minute, 2 * minute, 4 * minute, 8 * minute, 16 * minute, 32 * minute, 64 * minute,
		128 * minute, 256 * minute, 512 * minute, 12 * hour, 12 * hour, 12 * hour, 12 * hour, 12 * hour}
	afterTimeout := append([]time.Duration{60 * sec, 60 * sec}, nominal[2:]...)

	for _, tc := range []struct {
		name       string
		script     []response
		jitter     delivery.Jitter
		wantAt     func(t0 time.Time) []time.Time
		wantStatus string
		wantClass  []string // error class of each attempt
		wantEP     endpoints.Status
		wantReason string
		wantHealth delivery.Health // FailingSince is checked as an offset from t0 below
	}{
		{
			name: "fails three times then succeeds",
			script: []response{
				{status: 503, retryAfter: "5"}, // shorter than the schedule: ignored
				{status: 500}, {status: 404}, {status: 204},
			},
			jitter:     delivery.NoJitter,
			wantAt:     func(t0 time.Time) []time.Time { return cumulative(t0, nominal[:3]...) },
			wantStatus: store.StatusDelivered,
			wantClass:  []string{"http_5xx", "http_5xx", "http_4xx", ""},
			wantEP:     endpoints.Enabled,
			wantHealth: delivery.Health{Failures: 3, Successes: 1}, // one success of the three that end a streak
		},
		{
			name:       "the lowest jitter: 80% of each wait",
			script:     []response{{status: 502}, {status: 502}, {status: 200}},
			jitter:     func() float64 { return 0 },
			wantAt:     func(t0 time.Time) []time.Time { return cumulative(t0, 24*sec, 48*sec) },
			wantStatus: store.StatusDelivered,
			wantClass:  []string{"http_5xx", "http_5xx", ""},
			wantEP:     endpoints.Enabled,
			wantHealth: delivery.Health{Failures: 2, Successes: 1},
		},
		{
			name:       "times out every time: 17 attempts over 77 hours, at least 60 s apart, then failed",
			script:     []response{{hang: true}},
			jitter:     delivery.NoJitter,
			wantAt:     func(t0 time.Time) []time.Time { return cumulative(t0, afterTimeout...) },
			wantStatus: store.StatusFailed,
			wantClass:  repeatString("timeout", 17),
			wantEP:     endpoints.Enabled, // 77 h of failures is short of the 5 days that disable
			wantHealth: delivery.Health{Failures: 17},
		},
		{
			name: "429 with Retry-After, honoured up to 6 h",
			script: []response{
				{status: 429, retryAfter: "120"},   // longer than the 30 s schedule: honoured
				{status: 429, retryAfter: "86400"}, // a day: clamped to 6 h
				{status: 429, retryAfter: "1"},     // shorter than the 60 s floor after a 429
				{status: 200},
			},
			jitter:     delivery.NoJitter,
			wantAt:     func(t0 time.Time) []time.Time { return cumulative(t0, 120*sec, 6*hour, 2*minute) },
			wantStatus: store.StatusDelivered,
			wantClass:  []string{"throttled", "throttled", "throttled", ""},
			wantEP:     endpoints.Enabled,
			wantHealth: delivery.Health{Failures: 3, Successes: 1},
		},
		{
			name:       "410 Gone: one attempt, the delivery fails and the endpoint is disabled",
			script:     []response{{status: 410}},
			jitter:     delivery.NoJitter,
			wantAt:     func(t0 time.Time) []time.Time { return []time.Time{t0} },
			wantStatus: store.StatusFailed,
			wantClass:  []string{"gone"},
			wantEP:     endpoints.DisabledAfterFailures,
			wantReason: "gone",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := dispatch.DefaultConfig()
			cfg.Timeout = 100 * time.Millisecond // real time: the receiver hangs until the sender gives up
			t0 := time.Now().UTC().Truncate(time.Millisecond)
			clk := &clock{t: t0}
			f := newClockedFixture(t, cfg, clk.Now, tc.jitter)
			rcv := &scripted{script: tc.script}
			srv := httptest.NewServer(rcv.serve(f, clk))
			t.Cleanup(srv.Close)
			f.scheduleAt(t, "we_x", "evt_1", srv.URL, t0)

			for range 30 {
				d, _ := f.delivery(t, "we_x")
				if d.Status != store.StatusScheduled {
					break
				}
				clk.Set(d.NextAttemptAt)
				f.sender.Poll(f.ctx)
				f.sender.Wait()
			}

			d, atts := f.delivery(t, "we_x")
			require.Equal(t, tc.wantStatus, d.Status)
			want := tc.wantAt(t0)
			var at, next []time.Time
			var classes []string
			for _, a := range atts {
				at, classes = append(at, a.StartedAt.UTC()), append(classes, a.ErrorClass)
				next = append(next, a.NextAttemptAt.UTC())
			}
			require.Equal(t, want, at, "attempt times")
			assert.Equal(t, tc.wantClass, classes)
			for i := range atts[:len(atts)-1] {
				assert.Equal(t, want[i+1], next[i], "attempt %d names the next one", i+1)
				assert.Equal(t, i+1, atts[i].Number)
			}
			assert.True(t, next[len(next)-1].IsZero(), "the last attempt names no next one")
			assert.Equal(t, int64(len(want)), rcv.calls.Load(), "one request per recorded attempt")
			assert.Equal(t, int64(len(want)), rcv.verified.Load(), "every request verifies at its own time")

			ep, err := f.eps.Get(f.ctx, acme, "we_x")
			require.NoError(t, err)
			assert.Equal(t, tc.wantEP, ep.Status)
			assert.Equal(t, tc.wantReason, ep.DisabledReason)
			if tc.wantEP == endpoints.Enabled {
				h := ep.Health
				if tc.wantHealth.Failures > 0 {
					assert.Equal(t, t0, h.FailingSince.UTC(), "the streak began at the first failure")
				}
				h.FailingSince = time.Time{}
				assert.Equal(t, tc.wantHealth, h)
			}

			if tc.wantEP != endpoints.Enabled {
				require.Len(t, ep.Events, 1, "the disable is recorded on the endpoint")
				assert.Equal(t, endpoints.Event{Type: endpoints.EventDisabled, At: want[len(want)-1], Reason: tc.wantReason}, ep.Events[0])
				// What is scheduled for a disabled endpoint is cancelled, unsent.
				f.scheduleAt(t, "we_x", "evt_2", srv.URL, clk.Now())
				f.sender.Poll(f.ctx)
				f.sender.Wait()
				later, err := f.dlv.Get(f.ctx, acme, events.DeliveryID("evt_2", "we_x"))
				require.NoError(t, err)
				assert.Equal(t, store.StatusCancelled, later.Status)
				assert.Equal(t, int64(len(want)), rcv.calls.Load(), "nothing more was sent")
			}
		})
	}
}

// An endpoint that fails every attempt, event after event, is disabled
// once its failure streak is 5 days old, and the disable is recorded on
// the endpoint as an operational event.
func TestAnEndpointFailingForFiveDaysIsDisabledWithARecord(t *testing.T) {
	cfg := dispatch.DefaultConfig()
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	clk := &clock{t: t0}
	f := newClockedFixture(t, cfg, clk.Now, delivery.NoJitter)
	rcv := &scripted{script: []response{{status: 500}}}
	srv := httptest.NewServer(rcv.serve(f, clk))
	t.Cleanup(srv.Close)

	for step := 0; step <= 10; step++ { // an event every 12 hours
		at := t0.Add(time.Duration(step) * 12 * time.Hour)
		clk.Set(at)
		f.scheduleAt(t, "we_x", fmt.Sprintf("evt_%d", step), srv.URL, at)
		f.sender.Poll(f.ctx)
		f.sender.Wait()
		ep, err := f.eps.Get(f.ctx, acme, "we_x")
		require.NoError(t, err)
		if at.Sub(t0) < cfg.Health.DisableAfter {
			require.Equal(t, endpoints.Enabled, ep.Status, "still enabled after %s of failures", at.Sub(t0))
			require.Empty(t, ep.Events)
			continue
		}
		require.Equal(t, endpoints.DisabledAfterFailures, ep.Status, "disabled once the streak is %s old", cfg.Health.DisableAfter)
		assert.Equal(t, "failures", ep.DisabledReason)
		require.Len(t, ep.Events, 1)
		ev := ep.Events[0]
		assert.Equal(t, endpoints.EventDisabled, ev.Type)
		assert.Equal(t, "failures", ev.Reason)
		assert.Equal(t, at, ev.At.UTC())
		assert.Equal(t, t0, ev.FailingSince.UTC())
		assert.GreaterOrEqual(t, ev.Failures, cfg.Health.MinFailures)
		assert.Equal(t, int64(ev.Failures), rcv.calls.Load(), "every request of the streak is counted")
	}
}

func repeatString(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// newClockedFixture is newFixture with the sender on an injected clock and
// jitter source; the keys are active from the clock's start.
func newClockedFixture(t testing.TB, cfg dispatch.Config, now func() time.Time, jitter delivery.Jitter) *fixture {
	t.Helper()
	rdb := redistest.NewClient(t)
	ks, err := keys.Ephemeral(now())
	require.NoError(t, err)
	ring, err := keys.New(keys.DefaultConfig(dispatch.DefaultConfig().RetryHorizon()), ks...)
	require.NoError(t, err)
	f := &fixture{ctx: context.Background(), eps: store.NewEndpoints(rdb), dlv: store.NewDeliveries(rdb, store.DeliveriesConfig{Shards: 2, Retention: time.Hour}), ring: ring}
	f.sender = dispatch.New(cfg, f.dlv, f.eps, ring, devClients(cfg), slog.New(slog.NewTextHandler(io.Discard, nil)), now, jitter)
	return f
}

// scheduleAt registers endpoint id at url (once) and schedules eventID to
// it at at, as the fan-out does.
func (f *fixture) scheduleAt(t *testing.T, id, eventID, url string, at time.Time) {
	t.Helper()
	if _, err := f.eps.Get(f.ctx, acme, id); err != nil {
		require.NoError(t, f.eps.Create(f.ctx, endpoints.New(id, acme, endpoints.Registration{URL: url}, at)))
	}
	ev := delivery.Event{SchemaVersion: "case-event-v2", EventID: eventID, Sequence: 1, Type: "case.opened", OccurredAt: "2026-11-23T12:00:00.000Z", CaseID: "case_1", ExternalCaseID: "ext-1"}
	dID := events.DeliveryID(eventID, id)
	_, err := f.dlv.Create(f.ctx, store.Delivery{ID: dID, EventID: eventID, EventType: "case.opened", EndpointID: id,
		Tenant: acme.Tenant, Environment: acme.Environment, PartnerID: acme.PartnerID, Status: store.StatusScheduled, Trigger: store.TriggerScheduled,
		CreatedAt: at, NextAttemptAt: at, Event: ev})
	require.NoError(t, err)
}
