package dispatch

import (
	"context"
	"sync"

	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

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
