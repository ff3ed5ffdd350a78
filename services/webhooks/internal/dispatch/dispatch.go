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
//
// One delivery's way through a replica is one file each: claim.go (the
// loop that leases due work from the schedule's shards and starts sends),
// admission.go (the per-endpoint gates: in-flight bound, waiting queue,
// bucket, breaker, endpoint cache), send.go (sign the stored bytes and
// POST them) and record.go (write the outcome under the lease, in group
// commits, and the endpoint's health). This file holds the Sender and the
// step that ties them together (handle).
package dispatch

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
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

	// gates admit each delivery, per endpoint, on this replica.
	gates *gates
	// slots bound the sends in flight on this replica.
	slots chan struct{}
	wg    sync.WaitGroup

	// inst are the spans and metrics (telemetry.go).
	inst instruments
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
		now: now, jitter: jitter, token: token, gates: newGates(cfg, now), slots: make(chan struct{}, cfg.Concurrency),
		wake: make(chan struct{}, 1), freed: make(chan struct{}, 1), recorder: &recorder{deliveries: deliveries, token: token},
		inst: noInstruments()}
}

var cryptoRead = crand.Read

// handle takes one claimed delivery through its steps: load its endpoint
// (cached per replica, admission.go), admit it (admission.go), send it (send.go), decide
// what follows with the schedule, and record (record.go). Every way out
// records the delivery under its lease, except an endpoint that could not
// be read: then the lease lapses and the delivery comes due again.
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
	switch wait, admitted := s.gates.admit(c); admitted {
	case queued:
		return // the endpoint's next send to end sends it
	case held:
		d.NextAttemptAt = s.now().Add(wait)
		s.complete(ctx, log, d, nil)
		return
	}
	attempt, result := s.send(ctx, d, ep)
	s.gates.release(d.EndpointID, result.Kind)

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
	s.inst.recordEnd(ctx, d.Status)

	s.recordHealth(ctx, log, ep, result.Kind)
}
