// Package dispatch is the sender loop: every replica claims due deliveries
// from the shared schedule under a lease, sends each as a signed POST, and
// records the attempt and what follows it. A replica that dies mid-send
// loses nothing: its leases lapse and the deliveries come due again for any
// replica (at least once; receivers dedupe by event id).
//
// Endpoints are isolated from each other: every send runs in its own
// goroutine under a global concurrency bound and a small per-endpoint
// in-flight bound, and each endpoint has its own token bucket and circuit
// breaker. A delivery whose endpoint is throttled or open is put back on
// the schedule without spending an attempt. One whose endpoint is busy (its
// in-flight bound reached) waits on this replica, holding no send slot, for
// the next of that endpoint's sends to end, which sends it next; only when
// that short queue is full too is it put back on the schedule. So one
// hanging endpoint holds at most its own in-flight slots and never delays
// the others, and a busy healthy one is not made to wait a second.
// Buckets and breakers are per replica (in memory); their limits are per
// replica accordingly.
package dispatch

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/egress"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// Config configures a Sender.
type Config struct {
	Timeout             time.Duration // one attempt, connection to last body byte
	Lease               time.Duration // must exceed Timeout with room to record
	Poll                time.Duration // how often each shard is asked for due work
	Batch               int           // deliveries claimed per shard per poll
	Concurrency         int           // sends in flight per replica
	PerEndpointInFlight int           // sends in flight per endpoint per replica
	Schedule            delivery.Schedule
	Breaker             delivery.BreakerPolicy
	Rate                delivery.Rate
	Health              delivery.HealthPolicy
	// EndpointCacheTTL is how long this replica reuses an endpoint it read
	// (its URL, status and health) before reading it again; a change made
	// through the API reaches every sender within it. 0 reads it for every
	// attempt.
	EndpointCacheTTL time.Duration
}

// DefaultConfig is a 10 s timeout under a 60 s lease.
func DefaultConfig() Config {
	return Config{
		Timeout: 10 * time.Second, Lease: 60 * time.Second, Poll: 500 * time.Millisecond, Batch: 50,
		Concurrency: 64, PerEndpointInFlight: 4,
		Schedule: delivery.DefaultSchedule(), Breaker: delivery.DefaultBreakerPolicy(),
		Rate: delivery.Rate{PerSecond: 10, Burst: 20}, Health: delivery.DefaultHealthPolicy(),
		EndpointCacheTTL: time.Second,
	}
}

// Validate reports unusable settings.
func (c Config) Validate() error {
	var errs []error
	if c.Timeout <= 0 || c.Lease < c.Timeout+5*time.Second {
		errs = append(errs, errors.New("dispatch: timeout positive and lease at least timeout+5s"))
	}
	if c.Poll <= 0 || c.Batch < 1 || c.Concurrency < 1 || c.PerEndpointInFlight < 1 {
		errs = append(errs, errors.New("dispatch: poll, batch and concurrency must be positive"))
	}
	errs = append(errs, c.Schedule.Validate(), c.Breaker.Validate(), c.Rate.Validate(), c.Health.Validate())
	return errors.Join(errs...)
}

// RetryHorizon is the longest time from a delivery's first attempt to the
// end of its last: the schedule's horizon, a breaker hold before every
// attempt (a held delivery waits without spending an attempt) and the last
// attempt's timeout. A signing key is kept published at least this long
// after it stops signing (keys.GraceAfter).
func (c Config) RetryHorizon() time.Duration {
	holds := time.Duration(c.Schedule.MaxAttempts) * (c.Breaker.MaxCooldown + c.Breaker.ProbeTimeout)
	return c.Schedule.Horizon() + holds + c.Timeout
}

// Clients are the HTTP clients deliveries are sent with, one per
// environment, each over its own dial guard (egress.Policy.ForEnvironment):
// live's never dials an internal address, whatever the allowlist says.
// Separate transports also mean a connection a sandbox delivery opened to
// an allowlisted address is never reused by a live one.
type Clients struct {
	Sandbox *http.Client
	Live    *http.Client
}

// For returns the client of env.
func (c Clients) For(env string) (*http.Client, error) {
	var client *http.Client
	switch env {
	case "sandbox":
		client = c.Sandbox
	case "live":
		client = c.Live
	}
	if client == nil {
		return nil, fmt.Errorf("no delivery client for environment %q", env)
	}
	return client, nil
}

// Signers gives the active signer of an environment.
type Signers interface {
	Signer(env signature.Environment, now time.Time) (*signature.Signer, error)
}

// Sender sends due deliveries.
type Sender struct {
	cfg        Config
	deliveries *store.Deliveries
	endpoints  *store.Endpoints
	signers    Signers
	clients    Clients
	logger     *slog.Logger
	now        func() time.Time
	jitter     delivery.Jitter
	token      string

	// wake asks Run to poll now; Nudge fills it.
	wake chan struct{}
	// freed tells Run that a send ended and its slot is free.
	freed chan struct{}
	// recorder writes the sends' completions in shared round trips.
	recorder *recorder

	mu    sync.Mutex
	gates map[string]*gate
	slots chan struct{}
	wg    sync.WaitGroup
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

// claimed is a delivery this replica holds the lease of, until leasedUntil.
type claimed struct {
	delivery    store.Delivery
	leasedUntil time.Time
}

// recordMargin is the time a lease must still have after a send's timeout
// to record the attempt; a waiting delivery with less is put back on the
// schedule instead of sent, so no other replica can claim it mid-send.
const recordMargin = time.Second

// New returns a sender. now and jitter may be nil (time.Now, rand.Float64).
func New(cfg Config, deliveries *store.Deliveries, eps *store.Endpoints, signers Signers, clients Clients, logger *slog.Logger, now func() time.Time, jitter delivery.Jitter) *Sender {
	if now == nil {
		now = time.Now
	}
	if jitter == nil {
		jitter = rand.Float64
	}
	b := make([]byte, 8)
	_, _ = cryptoRead(b)
	token := hex.EncodeToString(b)
	return &Sender{cfg: cfg, deliveries: deliveries, endpoints: eps, signers: signers, clients: clients, logger: logger,
		now: now, jitter: jitter, token: token, gates: map[string]*gate{}, slots: make(chan struct{}, cfg.Concurrency),
		wake: make(chan struct{}, 1), freed: make(chan struct{}, 1), recorder: &recorder{deliveries: deliveries, token: token}}
}

var cryptoRead = crand.Read

// Run claims and sends until ctx ends, then waits for sends in flight.
// While polls find full batches there is likely more due work: Run claims
// again at once while slots are free, and otherwise as soon as sends end
// (awaitSlots), instead of at the next tick, so a backlog drains at the
// speed of the sends, not at one batch per poll interval.
func (s *Sender) Run(ctx context.Context) error {
	defer s.wg.Wait()
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		if s.Poll(ctx) {
			if cap(s.slots) > len(s.slots) || s.awaitSlots(ctx, t.C) {
				continue
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-s.wake:
		}
	}
}

// claimWindow is how long awaitSlots waits, after a first send ends, for
// more to end before Run claims what is free.
const claimWindow = 5 * time.Millisecond

// awaitSlots waits, after a poll that filled every slot, until half a batch
// of slots is free, or claimWindow after the first send ended, or a tick
// or nudge: claims stay batched (one round trip per shard and poll), and
// sends that hang and hold most slots delay the next claim by claimWindow
// at most. It reports false when ctx ended.
func (s *Sender) awaitSlots(ctx context.Context, tick <-chan time.Time) bool {
	want := max(1, min(s.cfg.Batch, cap(s.slots))/2)
	var window <-chan time.Time
	for cap(s.slots)-len(s.slots) < want {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			return true
		case <-s.wake:
			return true
		case <-window:
			return true
		case <-s.freed:
			if window == nil {
				timer := time.NewTimer(claimWindow)
				defer timer.Stop()
				window = timer.C
			}
		}
	}
	return true
}

// Nudge makes Run poll now rather than at its next tick: the fan-out of
// this replica calls it when it scheduled deliveries that are due, so an
// event is sent within milliseconds of its record, not a poll interval
// later. Other replicas find the work at their next poll.
func (s *Sender) Nudge() {
	select {
	case s.wake <- struct{}{}:
	default: // a poll is already pending
	}
}

// Poll claims due work from every shard once and starts its sends. It
// reports whether it stopped for want of free slots or claimed a full
// batch somewhere: more work is likely due. Tests call it directly, then
// Wait.
func (s *Sender) Poll(ctx context.Context) (more bool) {
	for n := range s.deliveries.Shards() {
		free := cap(s.slots) - len(s.slots)
		if free == 0 {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		limit := min(free, s.cfg.Batch)
		now := s.now()
		due, err := s.deliveries.Claim(ctx, n, now, s.cfg.Lease, limit, s.token)
		if err != nil {
			s.logger.ErrorContext(ctx, "claiming deliveries failed", "shard", n, "err", err)
			continue
		}
		if len(due) == limit {
			more = true
		}
		for _, d := range due {
			s.slots <- struct{}{}
			s.wg.Add(1)
			go func() {
				defer func() {
					<-s.slots
					s.wg.Done()
					select {
					case s.freed <- struct{}{}:
					default: // Run has a wake-up pending already
					}
				}()
				// Sends finish even while shutting down: the lease covers them.
				s.run(context.WithoutCancel(ctx), claimed{delivery: d, leasedUntil: now.Add(s.cfg.Lease)})
			}()
		}
	}
	return more
}

// Wait waits for the sends Poll started.
func (s *Sender) Wait() { s.wg.Wait() }

// run handles c, then, on the same send slot, the deliveries that wait for
// its endpoint while it has a free in-flight slot.
func (s *Sender) run(ctx context.Context, c claimed) {
	for ok := true; ok; c, ok = s.nextWaiting(c.delivery.EndpointID) {
		s.handle(ctx, c)
	}
}

func (s *Sender) handle(ctx context.Context, c claimed) {
	d := c.delivery
	// The delivery's logger is made when something is logged: building it
	// for every delivery cost more than some of the sends' own steps.
	log := func() *slog.Logger {
		return s.logger.With("delivery", d.ID, "event", d.EventID, "endpoint", d.EndpointID)
	}
	ep, err := s.endpoint(ctx, d)
	if errors.Is(err, endpoints.ErrNotFound) || (err == nil && ep.Status != endpoints.Enabled) {
		d.Status = store.StatusCancelled
		s.complete(ctx, log, d, nil)
		return
	}
	if err != nil {
		log().ErrorContext(ctx, "loading endpoint failed", "err", err)
		return // the lease lapses and the delivery comes due again
	}
	if s.now().Add(s.cfg.Timeout + recordMargin).After(c.leasedUntil) {
		// It waited for its endpoint too long to be sent under this lease.
		d.NextAttemptAt = s.now()
		s.complete(ctx, log, d, nil)
		return
	}
	switch wait, admitted := s.admit(c); admitted {
	case queued:
		return // the endpoint's next send to end sends it
	case held:
		d.NextAttemptAt = s.now().Add(wait)
		s.complete(ctx, log, d, nil)
		return
	}
	attempt, result := s.send(ctx, d, ep)
	s.release(d.EndpointID, result.Kind)

	d.Attempts++
	d.LastAttemptAt, d.LastStatus = attempt.StartedAt, attempt.Status
	next, again := s.cfg.Schedule.Next(d.Attempts, result, s.now(), s.jitter)
	switch {
	case result.Kind == delivery.Success:
		d.Status = store.StatusDelivered
	case again:
		d.Status, d.NextAttemptAt = store.StatusScheduled, next
		attempt.NextAttemptAt = next
	default:
		d.Status = store.StatusFailed
	}
	if d.Status != store.StatusScheduled {
		d.NextAttemptAt = time.Time{}
	}
	s.complete(ctx, log, d, &attempt)

	// A success on an endpoint that was healthy when loaded leaves its
	// health as it was: no write, which is the steady state of every
	// working endpoint. (Had another replica recorded a failure since, this
	// success goes uncounted and recovery takes one success more.)
	if result.Kind == delivery.Success && !ep.Health.Failing() {
		return
	}
	updated, err := s.endpoints.Modify(ctx, ep.Scope, ep.ID, func(e endpoints.Endpoint) (endpoints.Endpoint, error) {
		next, changed := endpoints.RecordAttempt(e, s.cfg.Health, result.Kind, s.now())
		if changed {
			ev := next.Events[len(next.Events)-1]
			log().WarnContext(ctx, "endpoint disabled", "reason", ev.Reason, "failingSince", ev.FailingSince, "failures", ev.Failures,
				"partner", ep.Scope.PartnerID, "environment", ep.Scope.Environment)
		}
		return next, nil
	})
	switch {
	case err == nil:
		s.remember(updated)
	case !errors.Is(err, endpoints.ErrNotFound):
		log().ErrorContext(ctx, "recording endpoint health failed", "err", err)
	}
}

// endpoint returns the delivery's endpoint, read again once the cached
// copy is older than EndpointCacheTTL. Every working endpoint takes
// thousands of deliveries a minute; reading it for each is the sender's
// largest cost after the POST itself.
func (s *Sender) endpoint(ctx context.Context, d store.Delivery) (endpoints.Endpoint, error) {
	s.mu.Lock()
	g := s.gateOf(d.EndpointID)
	if g.endpoint != nil && g.endpoint.Scope == d.Scope() && s.now().Sub(g.readAt) < s.cfg.EndpointCacheTTL {
		ep := *g.endpoint
		s.mu.Unlock()
		return ep, nil
	}
	s.mu.Unlock()
	ep, err := s.endpoints.Get(ctx, d.Scope(), d.EndpointID)
	if err != nil {
		return endpoints.Endpoint{}, err
	}
	s.remember(ep)
	return ep, nil
}

// remember caches ep as this replica last saw it.
func (s *Sender) remember(ep endpoints.Endpoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gateOf(ep.ID)
	g.endpoint, g.readAt = &ep, s.now()
}

func (s *Sender) complete(ctx context.Context, log func() *slog.Logger, d store.Delivery, a *store.Attempt) {
	if err := s.recorder.record(ctx, store.Completion{Delivery: d, Attempt: a}); err != nil {
		log().ErrorContext(ctx, "recording delivery failed", "err", err)
	}
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
func (s *Sender) admit(c claimed) (time.Duration, admission) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gateOf(c.delivery.EndpointID)
	now := s.now()
	if g.inFlight >= s.cfg.PerEndpointInFlight {
		if len(g.waiting) < s.cfg.PerEndpointInFlight {
			g.waiting = append(g.waiting, c)
			return 0, queued
		}
		return time.Second, held
	}
	br, ok, wait := s.cfg.Breaker.Allow(g.breaker, now)
	if !ok {
		return wait, held
	}
	b, wait := s.cfg.Rate.Take(g.bucket, now)
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
func (s *Sender) nextWaiting(endpointID string) (claimed, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gates[endpointID]
	if g == nil || len(g.waiting) == 0 || g.inFlight >= s.cfg.PerEndpointInFlight {
		return claimed{}, false
	}
	c := g.waiting[0]
	g.waiting = slices.Delete(g.waiting, 0, 1)
	return c, true
}

// gateOf returns the endpoint's gate, made on first use; s.mu is held.
func (s *Sender) gateOf(endpointID string) *gate {
	g := s.gates[endpointID]
	if g == nil {
		g = &gate{}
		s.gates[endpointID] = g
	}
	return g
}

func (s *Sender) release(endpointID string, k delivery.Kind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gates[endpointID]
	g.inFlight--
	g.breaker = s.cfg.Breaker.Record(g.breaker, k, s.now())
}

// maxRecordedBody is how much of a response body an attempt keeps.
const maxRecordedBody = 4 << 10

// maxDrainedBody is how much of a withheld answer is read (and dropped),
// so that its connection can be reused.
const maxDrainedBody = 64 << 10

func (s *Sender) send(ctx context.Context, d store.Delivery, ep endpoints.Endpoint) (store.Attempt, delivery.Result) {
	start := s.now()
	a := store.Attempt{Number: d.Attempts + 1, Trigger: store.TriggerScheduled, StartedAt: start, URL: ep.URL}
	if d.Attempts == 0 {
		a.Trigger = d.Trigger
	}
	fail := func(class delivery.Class, err error) (store.Attempt, delivery.Result) {
		a.ErrorClass, a.Error, a.Outcome = string(class), err.Error(), string(delivery.Failure)
		return a, delivery.Result{Kind: delivery.Failure, Class: class}
	}
	// The stored event, encoded once: these bytes are signed, sent and
	// shown as the delivery's requestBody.
	body := d.Event.Body(d.ID)
	signer, err := s.signers.Signer(signature.Environment(d.Environment), start)
	if err != nil {
		return fail(delivery.ClassNetwork, err)
	}
	// The signature names the endpoint, so it is good at this partner's
	// receiver only (the keys are the environment's, shared by all).
	headers, err := signer.Sign(body, d.EventID, signature.Recipient{EndpointID: d.EndpointID, Test: d.Test}, start)
	if err != nil {
		return fail(delivery.ClassNetwork, err)
	}
	a.KeyID = signer.KeyID()
	client, err := s.clients.For(d.Environment)
	if err != nil {
		return fail(delivery.ClassNetwork, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	// The connection's dial tells whether the receiver is on an internal
	// range the allowlist opened: then nothing of its answer is kept.
	var allowlisted atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		allowlisted.Store(egress.Allowlisted(info.Conn))
	}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		return fail(delivery.ClassNetwork, err)
	}
	headers.Apply(req.Header)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "pcourt-webhooks/1")
	a.RequestHeaders = flatten(req.Header)

	resp, err := client.Do(req)
	if err != nil {
		a.DurationMs = s.now().Sub(start).Milliseconds()
		r := delivery.Classify(delivery.Outcome{Err: err}, s.now())
		a.ErrorClass, a.Error, a.Outcome = string(r.Class), err.Error(), string(r.Kind)
		return a, r
	}
	defer resp.Body.Close()
	var head []byte
	var readErr error
	if allowlisted.Load() {
		// An internal service answered (a development allowlist let the
		// dial through): its headers and body stay out of the record the
		// partner reads, or an endpoint at a debug port would read the
		// port's output back.
		_, readErr = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrainedBody))
		a.ResponseWithheld = true
	} else {
		head, readErr = io.ReadAll(io.LimitReader(resp.Body, maxRecordedBody))
		a.ResponseHeaders, a.ResponseBody = flatten(resp.Header), string(bytes.ToValidUTF8(head, []byte("\uFFFD")))
	}
	a.DurationMs = s.now().Sub(start).Milliseconds()
	a.Status = resp.StatusCode
	r := delivery.Classify(delivery.Outcome{Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After")}, s.now())
	if readErr != nil && r.Kind == delivery.Success {
		// The status arrived; a body cut short does not undo the receipt.
		a.Error = fmt.Sprintf("reading response body: %v", readErr)
	}
	a.ErrorClass, a.Outcome = string(r.Class), string(r.Kind)
	return a, r
}

// flatten keeps the first value of each header, bounded, for the record.
func flatten(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		if len(out) == 50 {
			break
		}
		if len(v) > 0 {
			out[http.CanonicalHeaderKey(k)] = truncate(v[0], 512)
		}
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
