package dispatch_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/dispatch"
	"github.com/pcourt/pcourt/services/webhooks/internal/egress"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/events"
	"github.com/pcourt/pcourt/services/webhooks/internal/keys"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

var acme = endpoints.Scope{Tenant: "t1", Environment: "sandbox", PartnerID: "acme"}

const event = `{"schemaVersion":"case-event-v2","eventId":"evt_1","sequence":1,"type":"case.opened","occurredAt":"2026-11-23T12:00:00.000Z","caseId":"case_1","externalCaseId":"ext-1","actionRequired":false}`

type fixture struct {
	ctx    context.Context
	rdb    *redis.Client
	eps    *store.Endpoints
	dlv    *store.Deliveries
	ring   *keys.Ring
	sender *dispatch.Sender
}

func newFixture(t testing.TB, cfg dispatch.Config) *fixture {
	t.Helper()
	rdb := redistest.NewClient(t)
	ks, err := keys.Ephemeral(time.Now())
	require.NoError(t, err)
	ring, err := keys.New(keys.DefaultConfig(dispatch.DefaultConfig().RetryHorizon()), ks...)
	require.NoError(t, err)
	f := &fixture{ctx: context.Background(), rdb: rdb, eps: store.NewEndpoints(rdb), dlv: store.NewDeliveries(rdb, store.DeliveriesConfig{Shards: 2, Retention: time.Hour}), ring: ring}
	f.sender = dispatch.New(cfg, f.dlv, f.eps, ring, publicClients(cfg), slog.New(slog.NewTextHandler(io.Discard, nil)), nil, delivery.NoJitter)
	return f
}

// publicClients stand for receivers on public addresses: the test's
// receivers listen on loopback, which the dial guard refuses unless an
// allowlist opens it, and then their answers are not recorded
// (TestAnswersOfAllowlistedReceiversAreNotKept). These clients dial
// without the guard and, like the guarded ones, never follow redirects.
func publicClients(cfg dispatch.Config) dispatch.Clients {
	c := &http.Client{Timeout: cfg.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return dispatch.Clients{Sandbox: c, Live: c}
}

// devClients are the clients of the development stack: the allowlist
// 127.0.0.0/8, which only sandbox uses.
func devClients(cfg dispatch.Config) dispatch.Clients {
	policy := egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	return dispatch.Clients{
		Sandbox: egress.NewClient(egress.NewDialer(policy.ForEnvironment("sandbox"), nil, time.Second), cfg.Timeout, cfg.Concurrency),
		Live:    egress.NewClient(egress.NewDialer(policy.ForEnvironment("live"), nil, time.Second), cfg.Timeout, cfg.Concurrency),
	}
}

// parseEvent decodes a case-event-v2 body as the fan-out does.
func parseEvent(t testing.TB, raw string) delivery.Event {
	t.Helper()
	ev, err := events.ParseBody([]byte(raw))
	require.NoError(t, err)
	return ev
}

func (f *fixture) endpoint(t *testing.T, id, url string) { f.endpointIn(t, acme, id, url) }

func (f *fixture) endpointIn(t *testing.T, scope endpoints.Scope, id, url string) {
	t.Helper()
	require.NoError(t, f.eps.Create(f.ctx, endpoints.New(id, scope, endpoints.Registration{URL: url}, time.Now())))
	now := time.Now()
	_, err := f.dlv.Create(f.ctx, store.Delivery{ID: events.DeliveryID("evt_1", id), EventID: "evt_1", EventType: "case.opened", EndpointID: id,
		Tenant: scope.Tenant, Environment: scope.Environment, PartnerID: scope.PartnerID, Status: store.StatusScheduled, Trigger: store.TriggerScheduled,
		CreatedAt: now, NextAttemptAt: now, Event: parseEvent(t, event)})
	require.NoError(t, err)
}

func (f *fixture) delivery(t *testing.T, endpointID string) (store.Delivery, []store.Attempt) {
	return f.deliveryIn(t, acme, endpointID)
}

func (f *fixture) deliveryIn(t *testing.T, scope endpoints.Scope, endpointID string) (store.Delivery, []store.Attempt) {
	t.Helper()
	id := events.DeliveryID("evt_1", endpointID)
	d, err := f.dlv.Get(f.ctx, scope, id)
	require.NoError(t, err)
	atts, err := f.dlv.Attempts(f.ctx, id)
	require.NoError(t, err)
	return d, atts
}

func (f *fixture) lookup(kid string) (ed25519.PublicKey, error) {
	for _, k := range f.ring.Published("", time.Now()) {
		if k.Kid == kid {
			return k.PublicKey()
		}
	}
	return nil, signature.ErrUnknownKey
}

func TestSuccessfulDeliveryIsSignedAndRecorded(t *testing.T) {
	f := newFixture(t, dispatch.DefaultConfig())
	var verified atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_, err := signature.Verify(r.Header, body, "we_ok", f.lookup, time.Now(), 5*time.Minute)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		verified.Store(string(body))
		w.Header().Set("X-Receipt", "ok")
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	f.endpoint(t, "we_ok", srv.URL+"/hook")

	f.sender.Poll(f.ctx)
	f.sender.Wait()

	d, atts := f.delivery(t, "we_ok")
	require.Equal(t, store.StatusDelivered, d.Status, "%+v", atts)
	require.Len(t, atts, 1)
	a := atts[0]
	assert.Equal(t, 204, a.Status)
	assert.Equal(t, "success", a.Outcome)
	assert.Equal(t, "scheduled", a.Trigger)
	assert.Regexp(t, `^pcwh_sandbox_`, a.KeyID)
	assert.Equal(t, "ok", a.ResponseHeaders["X-Receipt"])
	for _, h := range signature.SignedHeaderNames {
		assert.NotEmpty(t, a.RequestHeaders[http.CanonicalHeaderKey(h)], h)
	}
	assert.Equal(t, "we_ok", a.RequestHeaders["X-Pc-Endpoint-Id"])
	assert.Equal(t, "false", a.RequestHeaders["X-Pc-Test"], "an event of a case is no test")
	var body map[string]any
	require.NoError(t, json.Unmarshal([]byte(verified.Load().(string)), &body))
	assert.Equal(t, d.ID, body["deliveryId"])
	assert.Equal(t, "evt_1", body["eventId"])
}

func TestFailuresRescheduleAndGoneDisables(t *testing.T) {
	f := newFixture(t, dispatch.DefaultConfig())
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write(make([]byte, 10000))
	}))
	t.Cleanup(failing.Close)
	gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) }))
	t.Cleanup(gone.Close)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://elsewhere.example/", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	f.endpoint(t, "we_503", failing.URL)
	f.endpoint(t, "we_410", gone.URL)
	f.endpoint(t, "we_307", redirect.URL)

	before := time.Now()
	f.sender.Poll(f.ctx)
	f.sender.Wait()

	d, atts := f.delivery(t, "we_503")
	assert.Equal(t, store.StatusScheduled, d.Status)
	require.Len(t, atts, 1)
	assert.Equal(t, "http_5xx", atts[0].ErrorClass)
	assert.Len(t, atts[0].ResponseBody, 4096, "the first 4 KiB of the body")
	assert.WithinDuration(t, before.Add(120*time.Second), d.NextAttemptAt, 5*time.Second, "Retry-After beats the 30 s schedule")
	assert.Equal(t, d.NextAttemptAt, atts[0].NextAttemptAt)

	d, atts = f.delivery(t, "we_410")
	assert.Equal(t, store.StatusFailed, d.Status)
	assert.Equal(t, "gone", atts[0].ErrorClass)
	ep, err := f.eps.Get(f.ctx, acme, "we_410")
	require.NoError(t, err)
	assert.Equal(t, endpoints.DisabledAfterFailures, ep.Status)

	d, atts = f.delivery(t, "we_307")
	assert.Equal(t, store.StatusScheduled, d.Status)
	assert.Equal(t, "redirect", atts[0].ErrorClass)
	assert.Equal(t, 307, atts[0].Status)
}

// hangingEndpoint is a receiver that never answers: each request waits
// until the sender gives up on it or release is called (at the latest when
// the test ends, before the server closes, so Close does not wait on it).
func hangingEndpoint(t *testing.T) (srv *httptest.Server, release func()) {
	t.Helper()
	released := make(chan struct{})
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-released:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	release = sync.OnceFunc(func() { close(released) })
	t.Cleanup(release) // runs before Close: cleanups run last first
	return srv, release
}

func TestAHangingEndpointDoesNotDelayOthers(t *testing.T) {
	cfg := dispatch.DefaultConfig()
	cfg.Timeout = 3 * time.Second
	f := newFixture(t, cfg)
	hanging, _ := hangingEndpoint(t)
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(fast.Close)
	f.endpoint(t, "we_hang", hanging.URL)
	f.endpoint(t, "we_fast", fast.URL)

	start := time.Now()
	f.sender.Poll(f.ctx)
	require.Eventually(t, func() bool {
		d, _ := f.delivery(t, "we_fast")
		return d.Status == store.StatusDelivered
	}, cfg.Timeout/2, 10*time.Millisecond, "the fast endpoint waited for the hanging one")
	assert.Less(t, time.Since(start), cfg.Timeout)
	f.sender.Wait()
	d, atts := f.delivery(t, "we_hang")
	assert.Equal(t, store.StatusScheduled, d.Status)
	assert.Equal(t, "timeout", atts[0].ErrorClass)
	assert.WithinDuration(t, atts[0].StartedAt.Add(cfg.Timeout+60*time.Second), d.NextAttemptAt, 2*time.Second, "at least 60 s after a timeout")
}

func TestDisabledEndpointCancelsItsDeliveries(t *testing.T) {
	f := newFixture(t, dispatch.DefaultConfig())
	f.endpoint(t, "we_off", "http://127.0.0.1:1/")
	_, err := f.eps.Modify(f.ctx, acme, "we_off", func(e endpoints.Endpoint) (endpoints.Endpoint, error) { return endpoints.Disable(e, time.Now()), nil })
	require.NoError(t, err)
	f.sender.Poll(f.ctx)
	f.sender.Wait()
	d, atts := f.delivery(t, "we_off")
	assert.Equal(t, store.StatusCancelled, d.Status)
	assert.Empty(t, atts)
}

// The fan-out nudges the sender when it schedules deliveries: they go out
// at once, not at the next poll (here an hour away).
func TestNudgeSendsWithoutWaitingForThePoll(t *testing.T) {
	cfg := dispatch.DefaultConfig()
	cfg.Poll = time.Hour
	f := newFixture(t, cfg)
	// The sender reads its clock once per shard and poll: after as many
	// reads as shards, Run's first poll has claimed with its last instant.
	var reads atomic.Int64
	var lastRead atomic.Int64 // unix ms
	f.sender = dispatch.New(cfg, f.dlv, f.eps, f.ring, publicClients(cfg), slog.New(slog.NewTextHandler(io.Discard, nil)),
		func() time.Time {
			now := time.Now()
			lastRead.Store(now.UnixMilli())
			reads.Add(1)
			return now
		}, delivery.NoJitter)
	got := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
		got <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(f.ctx)
	running := make(chan error, 1)
	go func() { running <- f.sender.Run(ctx) }()
	// Run's first poll found nothing: every shard was asked, and the
	// delivery below is due after the instant the last one was asked at,
	// so only a nudged poll can claim it.
	require.Eventually(t, func() bool {
		return reads.Load() >= int64(f.dlv.Shards()) && time.Now().UnixMilli() > lastRead.Load()
	}, 5*time.Second, time.Millisecond, "Run did not poll")

	f.endpoint(t, "we_nudged", srv.URL+"/hook")
	f.sender.Nudge()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("a nudged sender did not send within 5 s")
	}
	cancel()
	require.NoError(t, <-running)
}

// A backlog larger than the sender's concurrency drains at the speed of
// the sends: Run claims again as soon as a batch of slots is free, not at
// its next poll (here an hour away).
func TestRunDrainsABacklogWithoutWaitingForThePoll(t *testing.T) {
	cfg := dispatch.DefaultConfig()
	cfg.Poll = time.Hour
	cfg.Concurrency, cfg.Batch = 4, 2
	cfg.Rate = delivery.Rate{PerSecond: 1e6, Burst: 1e6}
	f := newFixture(t, cfg)
	var received atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	const endpointCount, perEndpoint = 5, 6
	for i := range endpointCount {
		id := fmt.Sprintf("we_%d", i)
		require.NoError(t, f.eps.Create(f.ctx, endpoints.New(id, acme, endpoints.Registration{URL: srv.URL + "/hook"}, time.Now())))
		for j := range perEndpoint {
			scheduleEvent(t, f, fmt.Sprintf("evt_%d_%d", i, j), id)
		}
	}
	ctx, cancel := context.WithCancel(f.ctx)
	running := make(chan error, 1)
	go func() { running <- f.sender.Run(ctx) }()
	require.Eventually(t, func() bool { return received.Load() == endpointCount*perEndpoint }, 10*time.Second, 5*time.Millisecond)
	cancel()
	require.NoError(t, <-running)
}

// A delivery whose endpoint has its in-flight bound reached waits on the
// replica for the endpoint's next send to end; it is sent then, on its
// first attempt, not put back on the schedule for a second and left to
// the next poll (here an hour away).
func TestABusyEndpointsDeliveriesWaitForItsSendsInsteadOfTheSchedule(t *testing.T) {
	cfg := dispatch.DefaultConfig()
	cfg.Poll = time.Hour
	cfg.PerEndpointInFlight = 2
	cfg.Rate = delivery.Rate{PerSecond: 1e6, Burst: 1e6}
	f := newFixture(t, cfg)
	var inFlight, most atomic.Int64
	// A slow endpoint: its first sends hang until the test has seen the
	// in-flight bound reached, so the others have to queue.
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		inFlight.Add(-1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	require.NoError(t, f.eps.Create(f.ctx, endpoints.New("we_slow", acme, endpoints.Registration{URL: srv.URL + "/hook"}, time.Now())))
	ids := []string{}
	for i := range 4 { // two in flight, two waiting
		ids = append(ids, scheduleEvent(t, f, fmt.Sprintf("evt_%d", i), "we_slow"))
	}
	ctx, cancel := context.WithCancel(f.ctx)
	running := make(chan error, 1)
	go func() { running <- f.sender.Run(ctx) }()
	require.Eventually(t, func() bool { return inFlight.Load() == 2 }, 5*time.Second, time.Millisecond, "the first two were not sent")
	close(release)
	require.Eventually(t, func() bool {
		for _, id := range ids {
			if d, err := f.dlv.Get(f.ctx, acme, id); err != nil || d.Status != store.StatusDelivered {
				return false
			}
		}
		return true
	}, 5*time.Second, 5*time.Millisecond, "the waiting deliveries were sent when the first two ended")
	cancel()
	require.NoError(t, <-running)
	assert.Equal(t, int64(2), most.Load(), "never more than the in-flight bound at once")
	for _, id := range ids {
		atts, err := f.dlv.Attempts(f.ctx, id)
		require.NoError(t, err)
		assert.Len(t, atts, 1, "one attempt, one POST")
	}
}

// scheduleEvent schedules eventID's delivery to endpointID, due now, and
// returns its id.
func scheduleEvent(t *testing.T, f *fixture, eventID, endpointID string) string {
	t.Helper()
	now := time.Now()
	ev := delivery.Event{SchemaVersion: "case-event-v2", EventID: eventID, Sequence: 1, Type: "case.opened", OccurredAt: "2026-11-23T12:00:00.000Z", CaseID: "case_1", ExternalCaseID: "ext-1"}
	id := events.DeliveryID(eventID, endpointID)
	_, err := f.dlv.Create(f.ctx, store.Delivery{ID: id, EventID: eventID, EventType: "case.opened", EndpointID: endpointID,
		Tenant: acme.Tenant, Environment: acme.Environment, PartnerID: acme.PartnerID, Status: store.StatusScheduled, Trigger: store.TriggerScheduled,
		CreatedAt: now, NextAttemptAt: now, Event: ev})
	require.NoError(t, err)
	return id
}

// Sends held by a hanging endpoint do not stop the backlog from draining:
// Run claims again whenever any slot is free, whatever the others hold
// (here the hanging endpoint holds three of five slots, more than the
// batch leaves free, for the whole 10 s timeout).
func TestABacklogDrainsBesideAHangingEndpoint(t *testing.T) {
	cfg := dispatch.DefaultConfig()
	cfg.Poll = time.Hour
	cfg.Concurrency, cfg.Batch, cfg.PerEndpointInFlight = 5, 4, 3
	cfg.Rate = delivery.Rate{PerSecond: 1e6, Burst: 1e6}
	f := newFixture(t, cfg)
	hanging, _ := hangingEndpoint(t)
	var received atomic.Int64
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(fast.Close)
	require.NoError(t, f.eps.Create(f.ctx, endpoints.New("we_hang", acme, endpoints.Registration{URL: hanging.URL}, time.Now())))
	require.NoError(t, f.eps.Create(f.ctx, endpoints.New("we_fast", acme, endpoints.Registration{URL: fast.URL}, time.Now())))
	for i := range 3 {
		scheduleEvent(t, f, fmt.Sprintf("evt_h%d", i), "we_hang")
	}
	// The hanging endpoint's deliveries are due first: the backlog's are
	// scheduled in a later millisecond, the schedule's resolution.
	hangDue := time.Now().UnixMilli()
	require.Eventually(t, func() bool { return time.Now().UnixMilli() > hangDue }, time.Second, 100*time.Microsecond)
	const backlog = 20
	for i := range backlog {
		scheduleEvent(t, f, fmt.Sprintf("evt_f%d", i), "we_fast")
	}
	ctx, cancel := context.WithCancel(f.ctx)
	running := make(chan error, 1)
	go func() { running <- f.sender.Run(ctx) }()
	require.Eventually(t, func() bool { return received.Load() == backlog }, 3*time.Second, 5*time.Millisecond,
		"the backlog waited for the hanging endpoint's sends")
	cancel()
	require.NoError(t, <-running)
}

// TestAnswersOfAllowlistedReceiversAreNotKept is item 5 of "Security,
// round 2": with the development allowlist, an endpoint at an internal
// address (a debug port of the deployment) is dialed, but nothing of its
// answer reaches the record the partner reads; its status still counts.
func TestAnswersOfAllowlistedReceiversAreNotKept(t *testing.T) {
	cfg := dispatch.DefaultConfig()
	f := newFixture(t, cfg)
	f.sender = dispatch.New(cfg, f.dlv, f.eps, f.ring, devClients(cfg), slog.New(slog.NewTextHandler(io.Discard, nil)), nil, delivery.NoJitter)
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Internal-Build", "secret-sha")
		_, _ = io.WriteString(w, "goroutine profile: total 42\n")
	}))
	t.Cleanup(internal.Close)
	f.endpoint(t, "we_debug", internal.URL+"/debug/pprof/goroutine?debug=1")

	f.sender.Poll(f.ctx)
	f.sender.Wait()

	d, atts := f.delivery(t, "we_debug")
	assert.Equal(t, store.StatusDelivered, d.Status, "the dial is allowed in sandbox")
	require.Len(t, atts, 1)
	assert.Equal(t, http.StatusOK, atts[0].Status)
	assert.True(t, atts[0].ResponseWithheld)
	assert.Empty(t, atts[0].ResponseBody)
	assert.Empty(t, atts[0].ResponseHeaders)
	raw, err := f.rdb.Keys(f.ctx, "*").Result()
	require.NoError(t, err)
	for _, k := range raw {
		if typ, _ := f.rdb.Type(f.ctx, k).Result(); typ == "string" {
			v, _ := f.rdb.Get(f.ctx, k).Result()
			assert.NotContains(t, v, "goroutine profile", k)
			assert.NotContains(t, v, "secret-sha", k)
		}
	}
}

// TestLiveNeverDialsInternalAddresses: the development allowlist opens
// loopback to sandbox deliveries only. A live endpoint stored at a
// loopback address (registered before registration refused it, or by a
// name that resolves there) is refused at dial time.
func TestLiveNeverDialsInternalAddresses(t *testing.T) {
	cfg := dispatch.DefaultConfig()
	f := newFixture(t, cfg)
	f.sender = dispatch.New(cfg, f.dlv, f.eps, f.ring, devClients(cfg), slog.New(slog.NewTextHandler(io.Discard, nil)), nil, delivery.NoJitter)
	var calls atomic.Int64
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	t.Cleanup(internal.Close)
	live := endpoints.Scope{Tenant: acme.Tenant, Environment: "live", PartnerID: acme.PartnerID}
	f.endpointIn(t, live, "we_live", internal.URL+"/hook")
	f.endpoint(t, "we_sandbox", internal.URL+"/hook")

	f.sender.Poll(f.ctx)
	f.sender.Wait()

	_, atts := f.deliveryIn(t, live, "we_live")
	require.Len(t, atts, 1)
	assert.Equal(t, "forbidden_address", atts[0].ErrorClass, atts[0].Error)
	assert.Zero(t, atts[0].Status)
	d, _ := f.delivery(t, "we_sandbox")
	assert.Equal(t, store.StatusDelivered, d.Status)
	assert.EqualValues(t, 1, calls.Load(), "only the sandbox delivery reached the receiver")
}
