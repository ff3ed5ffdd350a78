// Package outbox implements the transactional outbox of the platform design.
//
// A service changes its state and records the events that change produces in
// one Lua script: the script's keys share a hash tag with one of the
// service's outbox streams, so the step is atomic on a single Redis and on
// Redis Cluster alike. A Relay then publishes stream entries to Kafka and
// deletes them only after the brokers have them. A relay that dies between
// the two steps leaves its entries in the stream; the shard's next relay
// publishes them again, so every event is published at least once and
// consumers dedupe by event id.
//
// # Order
//
// Events of one key (a case) keep on Kafka the order their scripts gave
// them in the stream: for each key, the first copy of each event on its
// partition comes in stream order; any later copy is a duplicate that the
// consumers drop by event id. It holds because of three rules:
//
//  1. The stream holds only what is not yet published: an entry is
//     deleted once the brokers acknowledged it, never before. A relay
//     always reads from the start of the stream, so a batch holding an
//     event holds every older unpublished event of its shard before it,
//     and the Publisher writes one batch's records of one partition in
//     order, in one request.
//  2. One relay publishes a shard at a time: the one holding the shard's
//     lease, a Redis key beside the stream with a token
//     "<consumer>/<epoch>" whose epoch grows with each new holder. The
//     holder renews it about every third of ClaimIdle; a silent holder
//     (killed, partitioned, paused) loses it after ClaimIdle and another
//     replica takes the shard. Its successor starts from the start of the
//     stream, so whatever the old holder had in flight is published again
//     before anything newer.
//  3. Deleting is fenced: one script deletes a batch only if the lease
//     still holds the deleting relay's token. A holder that outlived its
//     tenure (a publish slower than ClaimIdle, a pause) finds it out there,
//     deletes nothing and stops relaying the shard. Its late records are
//     an in-order batch from the start of the stream, which its successor
//     publishes too, before anything newer: whether they land before or
//     after the successor's copies, the first copy of each event stays in
//     stream order. And it cannot delete entries its successor has still
//     to publish.
//     A holder also stops publishing when its tenure would have ended
//     (the publish's deadline), which keeps such stale records rare.
//
// Without rule 1 order would rest on timing: the relay this replaces read
// through a stream consumer group, which handed each replica different
// entries and let a successor publish newer entries while the entries a
// dead replica held waited ClaimIdle to be claimed, so a case's later
// event could reach Kafka before its earlier one.
package outbox

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/propagation"
)

// Event is one fact to publish.
type Event struct {
	ID      string // unique and stable: consumers dedupe on it
	Topic   string
	Key     string // the Kafka key, usually the case id: per-key order
	Schema  string
	Payload []byte
}

// Validate reports the first missing field.
func (e Event) Validate() error {
	switch {
	case e.ID == "":
		return errors.New("outbox event: id required")
	case e.Topic == "":
		return errors.New("outbox event: topic required")
	case e.Schema == "":
		return errors.New("outbox event: schema required")
	}
	return nil
}

// Sharding spreads a service's entities, and with them its outbox, over a
// fixed number of hash tags. All keys of one entity carry its shard's tag, so
// they and the shard's outbox stream live in one cluster slot. Count is part
// of the data layout: changing it needs a migration.
type Sharding struct {
	Service string // key prefix owner, e.g. "filings"
	Count   int
}

// DefaultShards is enough slots to spread load over a small cluster while
// keeping one relay goroutine per shard cheap.
const DefaultShards = 16

// Validate reports an unusable configuration.
func (s Sharding) Validate() error {
	if s.Service == "" || s.Count < 1 || s.Count > 1024 {
		return fmt.Errorf("outbox sharding: service required and count in 1..1024, got %q/%d", s.Service, s.Count)
	}
	return nil
}

// Tag returns the hash tag, braces included, of the shard that owns entityID.
func (s Sharding) Tag(entityID string) string {
	h := fnv.New32a()
	h.Write([]byte(entityID))
	return s.tag(int(h.Sum32() % uint32(s.Count)))
}

func (s Sharding) tag(shard int) string { return fmt.Sprintf("{%s.%02d}", s.Service, shard) }

// Stream returns the outbox stream key for a hash tag from Tag.
func (s Sharding) Stream(tag string) string { return "pc:" + s.Service + ":" + tag + ":outbox" }

// Tags lists the hash tag of every shard, in shard order, for the workers
// that sweep each shard's indexes (reconcilers).
func (s Sharding) Tags() []string {
	out := make([]string, s.Count)
	for i := range out {
		out[i] = s.tag(i)
	}
	return out
}

// Streams lists every shard's outbox stream.
func (s Sharding) Streams() []string {
	out := make([]string, s.Count)
	for i := range out {
		out[i] = s.Stream(s.tag(i))
	}
	return out
}

// ArgCount is how many ARGV slots one event takes in a script.
const ArgCount = 6

// Args returns the ARGV values outbox_append reads for ev, including the
// trace context of ctx, so the trace continues when the relay publishes.
func Args(ctx context.Context, ev Event) []any {
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return []any{ev.ID, ev.Topic, ev.Key, ev.Schema, carrier["traceparent"], ev.Payload}
}

// luaAppend defines outbox_append(stream, at): it appends the event whose
// ArgCount values start at ARGV[at] to stream.
const luaAppend = `
local function outbox_append(stream, at)
  return redis.call('XADD', stream, '*',
    'id', ARGV[at], 'topic', ARGV[at + 1], 'key', ARGV[at + 2],
    'schema', ARGV[at + 3], 'traceparent', ARGV[at + 4], 'payload', ARGV[at + 5])
end
`

// Script returns a Lua script whose body may call outbox_append(stream, at)
// in the same atomic step as its state change. The stream must be the outbox
// of the tag the script's other keys carry.
func Script(body string) *redis.Script {
	return redis.NewScript(luaAppend + body)
}
