package dispatch_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/kafka"
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

// receipt is one request a receiver got.
type receipt struct {
	endpoint    int
	deliveryID  string
	eventID     string
	signature   string
	incarnation int
	sentAt      time.Time // when the incarnation's transport took the request
	verified    bool
}

// incarnationHeader and sentAtHeader tell the receivers which sender
// incarnation sent a request, and when; they are the test's, outside the
// signed input.
const (
	incarnationHeader = "X-Test-Incarnation"
	sentAtHeader      = "X-Test-Sent-At"
)

// killable is a sender incarnation's transport: once dead, nothing more
// leaves it and what is on the wire is cut, as when a process dies.
type killable struct {
	base        http.RoundTripper
	dead        context.Context
	incarnation int
}

var errKilled = errors.New("sender incarnation killed")

func (k killable) RoundTrip(req *http.Request) (*http.Response, error) {
	// Stamped before the check: a request that passes it was stamped
	// before the kill.
	sentAt := time.Now()
	if k.dead.Err() != nil {
		return nil, errKilled
	}
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(k.dead, cancel)
	r := req.Clone(ctx)
	r.Header.Set(incarnationHeader, strconv.Itoa(k.incarnation))
	r.Header.Set(sentAtHeader, strconv.FormatInt(sentAt.UnixNano(), 10))
	resp, err := k.base.RoundTrip(r)
	if err != nil {
		stop()
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{resp.Body, func() { stop(); cancel() }}
	return resp, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel func()
}

func (c cancelOnClose) Close() error { err := c.ReadCloser.Close(); c.cancel(); return err }

// replica is one running sender incarnation with its own Redis client and
// transport, as one process has.
type replica struct {
	incarnation int
	kill        context.CancelFunc // cuts the transport
	stop        context.CancelFunc // ends Run
	rdb         *redis.Client
	done        chan error
	killedAt    time.Time
}

// Kill the dispatcher while 10,000 events are in flight to 20 endpoints:
// two sender replicas run; six times, at a random moment, one of them dies
// (its Redis client closed, its transport cut, its loop cancelled, all
// at once) and a new one takes its place. Every event still reaches every
// subscribed endpoint, every request verifies, and the only duplicates are
// requests a killed incarnation sent and never recorded, at most its
// concurrency each.
//
// Under the race detector (about ten times slower) and in -short runs the
// test sends 1,000 events instead of 10,000.
func TestKilledSendersLoseNothing(t *testing.T) {
	eventCount := 10000
	if raceEnabled || testing.Short() {
		eventCount = 1000
	}
	const endpointCount, typeCount, kills = 20, 10, 6
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d events", seed, eventCount)
	rng := rand.New(rand.NewPCG(seed, 0))

	srv := redistest.Start(t)
	setup := srv.Client(t)
	ks, err := keys.Ephemeral(time.Now())
	require.NoError(t, err)
	ring, err := keys.New(keys.DefaultConfig(dispatch.DefaultConfig().RetryHorizon()), ks...)
	require.NoError(t, err)
	lookup := func(kid string) (ed25519.PublicKey, error) {
		for _, k := range ring.Published("", time.Now()) {
			if k.Kid == kid {
				return k.PublicKey()
			}
		}
		return nil, signature.ErrUnknownKey
	}
	dcfg := store.DeliveriesConfig{Shards: 16, Retention: time.Hour}
	eps := store.NewEndpoints(setup)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))

	// Endpoints 0-9 take type i; 10-19 take types i and i+1 (mod 10):
	// each event has three subscribed endpoints.
	var mu sync.Mutex
	var receipts []receipt
	subscribed := make([][]int, typeCount)
	for i := range endpointCount {
		types := []string{fmt.Sprintf("case.t%d", i%typeCount)}
		subscribed[i%typeCount] = append(subscribed[i%typeCount], i)
		if i >= typeCount {
			next := (i + 1) % typeCount
			types = append(types, fmt.Sprintf("case.t%d", next))
			subscribed[next] = append(subscribed[next], i)
		}
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			_, verr := signature.Verify(r.Header, body, fmt.Sprintf("we_%02d", i), lookup, time.Now(), 5*time.Minute)
			var b struct {
				DeliveryID string `json:"deliveryId"`
				EventID    string `json:"eventId"`
			}
			_ = json.Unmarshal(body, &b)
			inc, _ := strconv.Atoi(r.Header.Get(incarnationHeader))
			sent, _ := strconv.ParseInt(r.Header.Get(sentAtHeader), 10, 64)
			mu.Lock()
			receipts = append(receipts, receipt{endpoint: i, deliveryID: b.DeliveryID, eventID: b.EventID, signature: r.Header.Get(signature.HeaderSignature),
				incarnation: inc, sentAt: time.Unix(0, sent), verified: verr == nil})
			mu.Unlock()
			if verr != nil {
				http.Error(w, verr.Error(), http.StatusUnauthorized)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(recv.Close)
		require.NoError(t, eps.Create(context.Background(), endpoints.New(fmt.Sprintf("we_%02d", i), acme,
			endpoints.Registration{URL: recv.URL + "/hook", EventTypes: types}, time.Now())))
	}

	cfg := dispatch.DefaultConfig()
	cfg.Rate = delivery.Rate{PerSecond: 1e6, Burst: 1e6} // this measures loss, not the rate limit
	cfg.PerEndpointInFlight = 16
	cfg.Poll = 20 * time.Millisecond
	cfg.Batch = 100
	cfg.Timeout = 2 * time.Second
	cfg.Lease = 4 * time.Second // short, so a killed replica's work comes due again soon

	var incarnations atomic.Int64
	start := func() *replica {
		n := int(incarnations.Add(1))
		rdb := srv.Client(t)
		dead, kill := context.WithCancel(context.Background())
		run, stop := context.WithCancel(context.Background())
		client := egress.NewClient(egress.NewDialer(egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, nil, time.Second), cfg.Timeout, cfg.Concurrency)
		client.Transport = killable{base: client.Transport, dead: dead, incarnation: n}
		s := dispatch.New(cfg, store.NewDeliveries(rdb, dcfg), store.NewEndpoints(rdb), ring, dispatch.Clients{Sandbox: client}, logger, nil, nil)
		r := &replica{incarnation: n, kill: kill, stop: stop, rdb: rdb, done: make(chan error, 1)}
		go func() { r.done <- s.Run(run) }()
		return r
	}
	replicas := []*replica{start(), start()}

	// The fan-out runs alongside, four records at a time, as four
	// partitions would.
	fan := &events.Fanout{Endpoints: eps, Deliveries: store.NewDeliveries(setup, dcfg), Logger: logger, Now: time.Now}
	fanned := make(chan error, 1)
	go func() {
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < eventCount; i += 4 {
					ev := fmt.Sprintf(`{"schemaVersion":"case-event-v2","eventId":"evt_%d","sequence":1,"type":"case.t%d","occurredAt":"2026-11-23T12:00:00.000Z","caseId":"case_%d","externalCaseId":"ext","actionRequired":false}`,
						i, i%typeCount, i)
					value, _ := json.Marshal(events.Envelope{SchemaVersion: events.EnvelopeSchema,
						Recipients: []events.Recipient{{Tenant: acme.Tenant, Environment: acme.Environment, PartnerID: acme.PartnerID}}, Event: json.RawMessage(ev)})
					if err := fan.Handle(context.Background(), kafka.Message{Schema: events.EnvelopeSchema, EventID: fmt.Sprintf("evt_%d", i), Value: value}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		fanned <- <-errs
	}()

	var killed []*replica
	for range kills {
		// A random moment, not a wait for anything: the kill lands
		// wherever the senders happen to be.
		<-time.After(time.Duration(200+rng.IntN(800)) * time.Millisecond)
		i := rng.IntN(len(replicas))
		r := replicas[i]
		// Redis first: from here nothing this incarnation does is
		// recorded, not even the failures the cut transport causes.
		_ = r.rdb.Close()
		r.kill()
		r.killedAt = time.Now()
		r.stop()
		require.NoError(t, <-r.done)
		killed = append(killed, r)
		replicas[i] = start()
	}
	require.NoError(t, <-fanned)

	want := 0
	for i := range eventCount {
		want += len(subscribed[i%typeCount])
	}
	pairs := func() int {
		mu.Lock()
		defer mu.Unlock()
		seen := map[string]bool{}
		for _, r := range receipts {
			if r.verified {
				seen[r.deliveryID] = true
			}
		}
		return len(seen)
	}
	deadline := time.Now().Add(90 * time.Second)
	for pairs() < want && time.Now().Before(deadline) {
		<-time.After(50 * time.Millisecond) // polling the receivers with a deadline
	}
	// A delivery whose only request came from a killed incarnation reached
	// its endpoint but was never recorded: it stays scheduled until its
	// lease lapses and a survivor sends it again. Wait for that too.
	dlv := store.NewDeliveries(setup, dcfg)
	for id := range allDeliveries(eventCount, subscribed, typeCount) {
		for {
			d, err := dlv.Get(context.Background(), acme, id)
			require.NoError(t, err)
			if d.Status == store.StatusDelivered || time.Now().After(deadline) {
				break
			}
			<-time.After(50 * time.Millisecond) // polling the store with a deadline
		}
	}
	for _, r := range replicas { // the survivors stop cleanly: everything they sent is recorded
		r.stop()
		require.NoError(t, <-r.done)
	}

	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d deliveries, %d requests received", want, len(receipts))
	byDelivery := map[string][]receipt{}
	for _, r := range receipts {
		require.True(t, r.verified, "a request of %s did not verify", r.deliveryID)
		byDelivery[r.deliveryID] = append(byDelivery[r.deliveryID], r)
	}

	// Every event reached every subscribed endpoint, and nothing else.
	killedAt := map[int]time.Time{}
	for _, r := range killed {
		killedAt[r.incarnation] = r.killedAt
	}
	unrecordedBy := map[int]int{}
	duplicates := 0
	for i := range eventCount {
		ev := fmt.Sprintf("evt_%d", i)
		for _, e := range subscribed[i%typeCount] {
			id := events.DeliveryID(ev, fmt.Sprintf("we_%02d", e))
			got := byDelivery[id]
			require.NotEmpty(t, got, "%s never reached endpoint %d", ev, e)
			delete(byDelivery, id)
			d, err := dlv.Get(context.Background(), acme, id)
			require.NoError(t, err)
			require.Equal(t, store.StatusDelivered, d.Status, id)
			atts, err := dlv.Attempts(context.Background(), id)
			require.NoError(t, err)
			recorded := map[string]bool{}
			for _, a := range atts {
				recorded[a.RequestHeaders["X-Pc-Signature"]] = true
			}
			// Each request is either one the delivery's record shows, or
			// one a killed incarnation sent before it died.
			shown := 0
			for _, r := range got {
				require.Equal(t, e, r.endpoint)
				require.Equal(t, ev, r.eventID)
				if recorded[r.signature] {
					shown++
					continue
				}
				at, wasKilled := killedAt[r.incarnation]
				require.True(t, wasKilled, "%s: a request of live incarnation %d is missing from the record", id, r.incarnation)
				require.True(t, r.sentAt.Before(at), "%s: incarnation %d sent after it was killed", id, r.incarnation)
				unrecordedBy[r.incarnation]++
			}
			require.Equal(t, 1, shown, "%s: the record shows exactly the one successful request", id)
			duplicates += len(got) - 1
		}
	}
	assert.Empty(t, byDelivery, "requests for deliveries nobody subscribed to")
	for inc, n := range unrecordedBy {
		assert.LessOrEqual(t, n, cfg.Concurrency, "incarnation %d: more duplicates than it could have in flight", inc)
	}
	t.Logf("%d kills, %d duplicates (by killed incarnation: %v)", kills, duplicates, unrecordedBy)
}

// allDeliveries names every delivery the test's events make: one per event
// and subscribed endpoint.
func allDeliveries(eventCount int, subscribed [][]int, typeCount int) map[string]bool {
	ids := map[string]bool{}
	for i := range eventCount {
		for _, e := range subscribed[i%typeCount] {
			ids[events.DeliveryID(fmt.Sprintf("evt_%d", i), fmt.Sprintf("we_%02d", e))] = true
		}
	}
	return ids
}
