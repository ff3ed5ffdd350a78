package dispatch

// Claiming: how due work reaches this replica. Deliveries wait in Redis
// sorted sets (the shards of the schedule), not in a queue on a replica,
// so that any replica can send any delivery and a dead one loses nothing;
// a claim leases a batch from one shard in one Lua step. The loop is
// shaped around the send slots rather than the clock: it claims again at
// once while slots are free and a batch came back full, waits for slots
// to free up when they are not, and is nudged by this replica's fan-out
// and recovery worker, so a backlog drains at the speed of the sends and a
// new event is sent within milliseconds, while an idle replica asks Redis
// once per poll interval.

import (
	"context"
	"time"

	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// claimed is a delivery this replica holds the lease of, until leasedUntil.
type claimed struct {
	delivery    store.Delivery
	leasedUntil time.Time
}

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
	for ok := true; ok; c, ok = s.gates.nextWaiting(c.delivery.EndpointID) {
		s.handle(ctx, c)
	}
}
