package receiver

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// Deduper remembers which event ids were already handed to the callback.
// Deliveries of one event carry the same event id and different delivery
// ids, so the event id is the key. A shared implementation (Redis, SQL)
// lets several receiver replicas deduplicate together.
type Deduper interface {
	// Claim records eventID and reports whether this call is the first to
	// claim it within the deduper's retention.
	Claim(ctx context.Context, eventID string) (bool, error)
	// Release forgets a claim whose processing failed, so that a later
	// delivery of the event is processed again.
	Release(ctx context.Context, eventID string) error
}

// MemoryDeduper is an in-process Deduper: it remembers up to capacity event
// ids, each for ttl, forgetting the least recently claimed first. It is safe
// for concurrent use. Its memory does not survive a restart and is not
// shared between replicas.
type MemoryDeduper struct {
	capacity int
	ttl      time.Duration
	now      func() time.Time

	mu    sync.Mutex
	order *list.List // front: most recently claimed
	byID  map[string]*list.Element
}

type claim struct {
	id      string
	expires time.Time
}

// NewMemoryDeduper returns a deduper of capacity ids (at least 1) kept for
// ttl (more than zero). now is the clock; nil means time.Now. Choose ttl
// longer than the sender's retry horizon plus the timestamp tolerance: a
// delivery older than that is refused by its timestamp anyway.
func NewMemoryDeduper(capacity int, ttl time.Duration, now func() time.Time) *MemoryDeduper {
	if now == nil {
		now = time.Now
	}
	return &MemoryDeduper{
		capacity: max(capacity, 1),
		ttl:      max(ttl, time.Nanosecond),
		now:      now,
		order:    list.New(),
		byID:     make(map[string]*list.Element),
	}
}

// Claim records eventID; it reports false when eventID is already held and
// not expired.
func (d *MemoryDeduper) Claim(_ context.Context, eventID string) (bool, error) {
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if e, ok := d.byID[eventID]; ok {
		if now.Before(e.Value.(*claim).expires) {
			return false, nil
		}
		d.order.Remove(e)
		delete(d.byID, eventID)
	}
	for d.order.Len() >= d.capacity {
		oldest := d.order.Back()
		d.order.Remove(oldest)
		delete(d.byID, oldest.Value.(*claim).id)
	}
	d.byID[eventID] = d.order.PushFront(&claim{id: eventID, expires: now.Add(d.ttl)})
	return true, nil
}

// Release forgets eventID.
func (d *MemoryDeduper) Release(_ context.Context, eventID string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if e, ok := d.byID[eventID]; ok {
		d.order.Remove(e)
		delete(d.byID, eventID)
	}
	return nil
}

// Len returns how many ids are held (expired ones included until evicted).
func (d *MemoryDeduper) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.order.Len()
}
