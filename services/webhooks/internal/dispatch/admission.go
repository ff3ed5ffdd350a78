package dispatch

// Admission: whether a claimed delivery may be sent now, decided per
// endpoint on this replica, in memory, before any network call. It is
// shaped as one small gate per endpoint (in-flight count, short waiting
// queue, token bucket, breaker, cached endpoint record) behind one mutex:
// every decision reads and writes several of them together and takes
// nanoseconds next to a POST, so a finer lock would buy nothing, and no
// decision here needs Redis, so a failing or hanging endpoint costs the
// others nothing. The rules themselves (Bucket, Breaker) are pure, in
// package delivery; this file only holds their state.

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// gates are the endpoints' gates on this replica.
type gates struct {
	cfg Config
	now func() time.Time

	mu         sync.Mutex
	byEndpoint map[string]*gate
}

func newGates(cfg Config, now func() time.Time) *gates {
	return &gates{cfg: cfg, now: now, byEndpoint: map[string]*gate{}}
}

// gate is one endpoint's isolation state on this replica.
type gate struct {
	bucket   delivery.Bucket
	breaker  delivery.Breaker
	inFlight int
	// waiting are deliveries claimed while the endpoint was busy, sent in
	// turn as its sends end; at most PerEndpointInFlight of them.
	waiting []claimed
	// endpoint is the endpoint as last read or written by this replica,
	// at readAt.
	endpoint *endpoints.Endpoint
	readAt   time.Time
}

// admission is what admit decided for a delivery.
type admission int

const (
	sent   admission = iota // it took an in-flight slot and a token: send it
	queued                  // the endpoint is busy; it waits in the gate
	held                    // put it back on the schedule for the wait given
)

// admit takes the endpoint's breaker, in-flight slot and token, or queues
// c behind the endpoint's sends in flight, or says how long to wait.
func (gs *gates) admit(c claimed) (time.Duration, admission) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.of(c.delivery.EndpointID)
	now := gs.now()
	if g.inFlight >= gs.cfg.PerEndpointInFlight {
		if len(g.waiting) < gs.cfg.PerEndpointInFlight {
			g.waiting = append(g.waiting, c)
			return 0, queued
		}
		return time.Second, held
	}
	br, ok, wait := gs.cfg.Breaker.Allow(g.breaker, now)
	if !ok {
		return wait, held
	}
	b, wait := gs.cfg.Rate.Take(g.bucket, now)
	g.bucket = b
	if wait > 0 {
		return wait, held
	}
	g.breaker = br
	g.inFlight++
	return 0, sent
}

// nextWaiting takes the endpoint's oldest waiting delivery if it has a
// free in-flight slot. A waiting delivery always has a send of its
// endpoint in flight when it is queued, and every send that ends calls
// this, so none waits for nothing.
func (gs *gates) nextWaiting(endpointID string) (claimed, bool) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.byEndpoint[endpointID]
	if g == nil || len(g.waiting) == 0 || g.inFlight >= gs.cfg.PerEndpointInFlight {
		return claimed{}, false
	}
	c := g.waiting[0]
	g.waiting = slices.Delete(g.waiting, 0, 1)
	return c, true
}

// of returns the endpoint's gate, made on first use; gs.mu is held.
func (gs *gates) of(endpointID string) *gate {
	g := gs.byEndpoint[endpointID]
	if g == nil {
		g = &gate{}
		gs.byEndpoint[endpointID] = g
	}
	return g
}

// release gives back the in-flight slot admit took and tells the breaker
// how the send went.
func (gs *gates) release(endpointID string, k delivery.Kind) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.byEndpoint[endpointID]
	g.inFlight--
	g.breaker = gs.cfg.Breaker.Record(g.breaker, k, gs.now())
}

// endpoint returns the delivery's endpoint, read again once the cached
// copy is older than EndpointCacheTTL. Every working endpoint takes
// thousands of deliveries a minute; reading it for each is the sender's
// largest cost after the POST itself.
func (s *Sender) endpoint(ctx context.Context, d store.Delivery) (endpoints.Endpoint, error) {
	if ep, ok := s.gates.cached(d); ok {
		return ep, nil
	}
	ep, err := s.endpoints.Get(ctx, d.Scope(), d.EndpointID)
	if err != nil {
		return endpoints.Endpoint{}, err
	}
	s.gates.remember(ep)
	return ep, nil
}

// cached returns the endpoint of d as this replica last saw it, unless
// that copy is older than EndpointCacheTTL or of another scope.
func (gs *gates) cached(d store.Delivery) (endpoints.Endpoint, bool) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.of(d.EndpointID)
	if g.endpoint != nil && g.endpoint.Scope == d.Scope() && gs.now().Sub(g.readAt) < gs.cfg.EndpointCacheTTL {
		return *g.endpoint, true
	}
	return endpoints.Endpoint{}, false
}

// remember caches ep as this replica last saw it.
func (gs *gates) remember(ep endpoints.Endpoint) {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.of(ep.ID)
	g.endpoint, g.readAt = &ep, gs.now()
}
