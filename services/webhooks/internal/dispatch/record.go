package dispatch

// Recording: what a send leaves behind. A delivery's new state and its
// attempt are written in one Lua step under the claim's lease token, so a
// replica that lost its lease (it hung past it and another claimed the
// delivery) changes nothing; concurrent sends share round trips (the
// recorder's group commit), because at a few thousand sends a second one
// round trip per delivery was the sender's bottleneck. The endpoint's
// health is written after the record and only when it can change, so the
// steady state of a working endpoint writes nothing but the delivery.

import (
	"context"
	"sync"

	"errors"
	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
	"log/slog"
)

func (s *Sender) complete(ctx context.Context, log func() *slog.Logger, d store.Delivery, a *store.Attempt) {
	if err := s.recorder.record(ctx, store.Completion{Delivery: d, Attempt: a}); err != nil {
		log().ErrorContext(ctx, "recording delivery failed", "err", err)
	}
}

// recordHealth counts an attempt's outcome in its endpoint's health, which
// disables an endpoint that keeps failing (endpoints.RecordAttempt).
func (s *Sender) recordHealth(ctx context.Context, log func() *slog.Logger, ep endpoints.Endpoint, k delivery.Kind) {
	// A success on an endpoint that was healthy when loaded leaves its
	// health as it was: no write, which is the steady state of every
	// working endpoint. (Had another replica recorded a failure since, this
	// success goes uncounted and recovery takes one success more.)
	if k == delivery.Success && !ep.Health.Failing() {
		return
	}
	updated, err := s.endpoints.Modify(ctx, ep.Scope, ep.ID, func(e endpoints.Endpoint) (endpoints.Endpoint, error) {
		next, changed := endpoints.RecordAttempt(e, s.cfg.Health, k, s.now())
		if changed {
			ev := next.Events[len(next.Events)-1]
			log().WarnContext(ctx, "endpoint disabled", "reason", ev.Reason, "failingSince", ev.FailingSince, "failures", ev.Failures,
				"partner", ep.Scope.PartnerID, "environment", ep.Scope.Environment)
		}
		return next, nil
	})
	switch {
	case err == nil:
		s.gates.remember(updated)
	case !errors.Is(err, endpoints.ErrNotFound):
		log().ErrorContext(ctx, "recording endpoint health failed", "err", err)
	}
}

// recorder writes the completions of concurrent sends in shared round
// trips (a group commit): the first send to finish writes its record at
// once; the sends that finish while that write is in flight queue theirs,
// and one of them writes the whole queue in one pipeline when it returns.
// An idle sender waits for nothing; a busy one makes one round trip per
// group instead of one per delivery. Each send still returns only once its
// own record is written, so a send's slot, and Wait, mean what they did.
type recorder struct {
	deliveries *store.Deliveries
	token      string

	mu      sync.Mutex
	writing bool // a group is being written
	queue   []*pending
}

// pending is one send's completion waiting in the queue.
type pending struct {
	completion store.Completion
	reply      chan recorded // buffered; written once
}

// recorded answers a pending completion: its error, or lead true when its
// sender is to write the queue now (its own completion is in it).
type recorded struct {
	err  error
	lead bool
}

// record writes c and returns its error (store.ErrLeaseLost among them).
func (r *recorder) record(ctx context.Context, c store.Completion) error {
	p := &pending{completion: c, reply: make(chan recorded, 1)}
	r.mu.Lock()
	r.queue = append(r.queue, p)
	if r.writing {
		r.mu.Unlock()
		got := <-p.reply
		if !got.lead {
			return got.err
		}
		r.mu.Lock()
	}
	r.writing = true
	group := r.queue
	r.queue = nil
	r.mu.Unlock()

	cs := make([]store.Completion, len(group))
	for i, q := range group {
		cs[i] = q.completion
	}
	errs := r.deliveries.CompleteAll(ctx, r.token, cs)
	var mine error
	for i, q := range group {
		if q == p {
			mine = errs[i]
			continue
		}
		q.reply <- recorded{err: errs[i]}
	}

	// Hand the queue that formed meanwhile to one of its senders, or stop.
	r.mu.Lock()
	if len(r.queue) == 0 {
		r.writing = false
		r.mu.Unlock()
		return mine
	}
	next := r.queue[0]
	r.mu.Unlock()
	next.reply <- recorded{lead: true}
	return mine
}
