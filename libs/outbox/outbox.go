// Package outbox implements the transactional outbox of the platform design.
//
// A service changes its state and records the events that change produces in
// one Lua script: the script's keys share a hash tag with one of the
// service's outbox streams, so the step is atomic on a single Redis and on
// Redis Cluster alike. A Relay then publishes stream entries to Kafka and
// acknowledges them only after the brokers have them. A relay that dies
// between the two steps leaves its entries pending; they are published again
// (by its successor, or by another replica once they have been idle for
// ClaimIdle), so every event is published at least once and consumers dedupe
// by event id.
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
