// Package dispatch is the sender loop: every replica claims due deliveries
// from the shared schedule under a lease, sends each as a signed POST, and
// records the attempt and what follows it. A replica that dies mid-send
// loses nothing: its leases lapse and the deliveries come due again for any
// replica (at least once; receivers dedupe by event id).
//
// Endpoints are isolated from each other: every send runs in its own
// goroutine under a global concurrency bound and a small per-endpoint
// in-flight bound, and each endpoint has its own token bucket and circuit
// breaker. A delivery whose endpoint is throttled, open or busy is put back
// on the schedule without spending an attempt, so one hanging endpoint
// holds at most its own in-flight slots and never delays the others.
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
	"sync"
	"time"

	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/events"
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
	client     *http.Client
	logger     *slog.Logger
	now        func() time.Time
	jitter     delivery.Jitter
	token      string

	// wake asks Run to poll now; Nudge fills it.
	wake chan struct{}

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
	// endpoint is the endpoint as last read or written by this replica,
	// at readAt.
	endpoint *endpoints.Endpoint
	readAt   time.Time
}

// New returns a sender. now and jitter may be nil (time.Now, rand.Float64).
func New(cfg Config, deliveries *store.Deliveries, eps *store.Endpoints, signers Signers, client *http.Client, logger *slog.Logger, now func() time.Time, jitter delivery.Jitter) *Sender {
	if now == nil {
		now = time.Now
	}
	if jitter == nil {
		jitter = rand.Float64
	}
	b := make([]byte, 8)
	_, _ = cryptoRead(b)
	return &Sender{cfg: cfg, deliveries: deliveries, endpoints: eps, signers: signers, client: client, logger: logger,
		now: now, jitter: jitter, token: hex.EncodeToString(b), gates: map[string]*gate{}, slots: make(chan struct{}, cfg.Concurrency), wake: make(chan struct{}, 1)}
}

var cryptoRead = crand.Read

// Run claims and sends until ctx ends, then waits for sends in flight.
func (s *Sender) Run(ctx context.Context) error {
	defer s.wg.Wait()
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		s.Poll(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-s.wake:
		}
	}
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

// Poll claims due work from every shard once and starts its sends. Tests
// call it directly, then Wait.
func (s *Sender) Poll(ctx context.Context) {
	for n := range s.deliveries.Shards() {
		free := cap(s.slots) - len(s.slots)
		if free == 0 || ctx.Err() != nil {
			return
		}
		claimed, err := s.deliveries.Claim(ctx, n, s.now(), s.cfg.Lease, min(free, s.cfg.Batch), s.token)
		if err != nil {
			s.logger.ErrorContext(ctx, "claiming deliveries failed", "shard", n, "err", err)
			continue
		}
		for _, d := range claimed {
			s.slots <- struct{}{}
			s.wg.Add(1)
			go func() {
				defer func() { <-s.slots; s.wg.Done() }()
				// Sends finish even while shutting down: the lease covers them.
				s.handle(context.WithoutCancel(ctx), d)
			}()
		}
	}
}

// Wait waits for the sends Poll started.
func (s *Sender) Wait() { s.wg.Wait() }

func (s *Sender) handle(ctx context.Context, d store.Delivery) {
	log := s.logger.With("delivery", d.ID, "event", d.EventID, "endpoint", d.EndpointID)
	ep, err := s.endpoint(ctx, d)
	if errors.Is(err, endpoints.ErrNotFound) || (err == nil && ep.Status != endpoints.Enabled) {
		d.Status = store.StatusCancelled
		s.complete(ctx, log, d, nil)
		return
	}
	if err != nil {
		log.ErrorContext(ctx, "loading endpoint failed", "err", err)
		return // the lease lapses and the delivery comes due again
	}
	if wait, ok := s.admit(ep.ID); !ok {
		d.NextAttemptAt = s.now().Add(wait)
		s.complete(ctx, log, d, nil)
		return
	}
	attempt, result := s.send(ctx, d, ep)
	s.release(ep.ID, result.Kind)

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
			log.WarnContext(ctx, "endpoint disabled", "reason", ev.Reason, "failingSince", ev.FailingSince, "failures", ev.Failures,
				"partner", ep.Scope.PartnerID, "environment", ep.Scope.Environment)
		}
		return next, nil
	})
	switch {
	case err == nil:
		s.remember(updated)
	case !errors.Is(err, endpoints.ErrNotFound):
		log.ErrorContext(ctx, "recording endpoint health failed", "err", err)
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

func (s *Sender) complete(ctx context.Context, log *slog.Logger, d store.Delivery, a *store.Attempt) {
	if err := s.deliveries.Complete(ctx, s.token, d, a); err != nil {
		log.ErrorContext(ctx, "recording delivery failed", "err", err)
	}
}

// admit takes the endpoint's breaker, in-flight slot and token, or says how
// long to wait.
func (s *Sender) admit(endpointID string) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gateOf(endpointID)
	now := s.now()
	if g.inFlight >= s.cfg.PerEndpointInFlight {
		return time.Second, false
	}
	br, ok, wait := s.cfg.Breaker.Allow(g.breaker, now)
	if !ok {
		return wait, false
	}
	b, wait := s.cfg.Rate.Take(g.bucket, now)
	g.bucket = b
	if wait > 0 {
		return wait, false
	}
	g.breaker = br
	g.inFlight++
	return 0, true
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
	body, err := events.WithDeliveryID(d.Event, d.ID)
	if err != nil {
		return fail(delivery.ClassNetwork, err)
	}
	signer, err := s.signers.Signer(signature.Environment(d.Environment), start)
	if err != nil {
		return fail(delivery.ClassNetwork, err)
	}
	headers, err := signer.Sign(body, d.EventID, start)
	if err != nil {
		return fail(delivery.ClassNetwork, err)
	}
	a.KeyID = signer.KeyID()
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		return fail(delivery.ClassNetwork, err)
	}
	headers.Apply(req.Header)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "pcourt-webhooks/1")
	a.RequestHeaders = flatten(req.Header)

	resp, err := s.client.Do(req)
	if err != nil {
		a.DurationMs = s.now().Sub(start).Milliseconds()
		r := delivery.Classify(delivery.Outcome{Err: err}, s.now())
		a.ErrorClass, a.Error, a.Outcome = string(r.Class), err.Error(), string(r.Kind)
		return a, r
	}
	defer resp.Body.Close()
	head, readErr := io.ReadAll(io.LimitReader(resp.Body, maxRecordedBody))
	a.DurationMs = s.now().Sub(start).Milliseconds()
	a.Status, a.ResponseHeaders, a.ResponseBody = resp.StatusCode, flatten(resp.Header), string(bytes.ToValidUTF8(head, []byte("\uFFFD")))
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
