package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/pcourt/pcourt/libs/kafka"
)

// Publisher is what the relay needs from Kafka: a synchronous publish that
// returns once the brokers have the messages.
type Publisher interface {
	Publish(ctx context.Context, msgs ...kafka.Message) error
}

// RelayConfig configures a Relay.
type RelayConfig struct {
	Sharding Sharding
	// Group was the stream consumer group of the relay this one replaced;
	// it is still required, but leases, not a group, now share the shards
	// out (see the package documentation).
	Group string
	// Consumer names this replica (the pod name) in the lease it holds.
	Consumer string
	// Batch is the most entries published in one Kafka request.
	Batch int
	// Block is how long an idle read waits for new entries; it is
	// shortened to a third of ClaimIdle so the lease is renewed in time.
	// The read holds its connection while it waits, one per shard, so the
	// relay runs on a client of its own (service.Base.RelayRedis), never
	// on the pool that requests use.
	Block time.Duration
	// ClaimIdle is the shard lease's lifetime: how long a silent holder
	// (a killed pod, a stalled one) keeps its shards before another
	// replica takes them over. The holder renews it about every third.
	ClaimIdle time.Duration
	// RetryBackoff is the pause after a failed publish.
	RetryBackoff time.Duration
}

// DefaultRelayConfig returns the defaults for a service.
func DefaultRelayConfig(sharding Sharding, consumer string) RelayConfig {
	return RelayConfig{
		Sharding:     sharding,
		Group:        "relay",
		Consumer:     consumer,
		Batch:        100,
		Block:        time.Second,
		ClaimIdle:    30 * time.Second,
		RetryBackoff: 500 * time.Millisecond,
	}
}

// Validate reports the first unusable setting.
func (c RelayConfig) Validate() error {
	if err := c.Sharding.Validate(); err != nil {
		return err
	}
	switch {
	case c.Group == "" || c.Consumer == "":
		return errors.New("outbox relay: group and consumer required")
	case strings.Contains(c.Consumer, "/"):
		return errors.New("outbox relay: consumer may not contain '/'")
	case c.Batch < 1:
		return errors.New("outbox relay: batch must be positive")
	case c.Block < time.Millisecond || c.ClaimIdle < 3*time.Millisecond || c.RetryBackoff <= 0:
		return errors.New("outbox relay: durations must be positive")
	}
	return nil
}

// Relay publishes outbox entries to Kafka.
type Relay struct {
	rdb    redis.UniversalClient
	pub    Publisher
	cfg    RelayConfig
	logger *slog.Logger
	tracer trace.Tracer
}

// NewRelay returns a relay, or the configuration's error; Run starts it.
// tp may be nil for the global provider.
func NewRelay(rdb redis.UniversalClient, pub Publisher, cfg RelayConfig, logger *slog.Logger, tp trace.TracerProvider) (*Relay, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return &Relay{rdb: rdb, pub: pub, cfg: cfg, logger: logger, tracer: tp.Tracer("github.com/pcourt/pcourt/libs/outbox")}, nil
}

// Run relays every shard whose lease it holds or wins until ctx is
// cancelled, then gives its leases up so a successor need not wait for
// them to expire. Entries read but not yet acknowledged when it stops stay
// in their stream and are published again by the shard's next holder.
func (r *Relay) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, stream := range r.cfg.Sharding.Streams() {
		wg.Go(func() { r.runShard(ctx, stream) })
	}
	wg.Wait()
	return nil
}

// The lease of a shard: one key beside its stream, holding
// "<consumer>/<epoch>", and the epoch counter, which only grows, so a
// token names one tenure: a holder that lost its lease and won it back has
// a new one. Both keys share the stream's hash tag, so the scripts below
// run on one node of a cluster.
func leaseKey(stream string) string { return stream + ":lease" }
func epochKey(stream string) string { return stream + ":epoch" }

// LeaseHolder names the replica (its RelayConfig.Consumer) whose lease on
// stream's shard is current, or "" when nobody holds it: for operators and
// tests that follow a takeover.
func LeaseHolder(ctx context.Context, rdb redis.UniversalClient, stream string) (string, error) {
	token, err := rdb.Get(ctx, leaseKey(stream)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the lease of %s: %w", stream, err)
	}
	consumer, _, _ := strings.Cut(token, "/")
	return consumer, nil
}

// acquireLease renews the caller's lease (ARGV[1], its token, or "" when
// it holds none) or, when nobody holds the shard, starts a new tenure. It
// returns the token held, or false when another replica holds the shard.
var acquireLease = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then
  if cur == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    return cur
  end
  return false
end
local token = ARGV[2] .. '/' .. redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], token, 'PX', ARGV[3])
return token
`)

// ackFenced deletes published entries only while the caller's tenure
// lasts: it returns -1 and deletes nothing when the lease holds another
// token (or none).
var ackFenced = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -1
end
return redis.call('XDEL', KEYS[2], unpack(ARGV, 2))
`)

// releaseLease gives the caller's lease up at shutdown.
var releaseLease = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// errFenced means the relay's tenure ended while it published: another
// replica holds the shard and republishes what this one did not delete.
var errFenced = errors.New("the shard's lease passed to another replica")

func (r *Relay) runShard(ctx context.Context, stream string) {
	poll := r.cfg.ClaimIdle / 3
	block := min(r.cfg.Block, poll)
	token := ""
	defer func() {
		if token == "" {
			return
		}
		release, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		if err := releaseLease.Run(release, r.rdb, []string{leaseKey(stream)}, token).Err(); err != nil {
			r.logger.WarnContext(release, "releasing the outbox lease failed; it expires", "stream", stream, "err", err)
		}
	}()
	for ctx.Err() == nil {
		renewed := time.Now()
		held, err := acquireLease.Run(ctx, r.rdb, []string{leaseKey(stream), epochKey(stream)},
			token, r.cfg.Consumer, r.cfg.ClaimIdle.Milliseconds()).Text()
		switch {
		case errors.Is(err, redis.Nil):
			if token != "" {
				r.logger.WarnContext(ctx, "outbox lease lost; another replica relays the shard", "stream", stream, "lease", token)
			}
			token = ""
			wait(ctx, poll)
			continue
		case err != nil:
			if ctx.Err() == nil {
				r.logger.ErrorContext(ctx, "renewing the outbox lease failed", "stream", stream, "err", err)
				wait(ctx, r.cfg.RetryBackoff)
			}
			continue
		}
		if held != token {
			r.logger.InfoContext(ctx, "outbox lease taken", "stream", stream, "lease", held)
			token = held
		}
		// The tenure ends at renewed+ClaimIdle at the latest; nothing this
		// holder publishes after that could be acknowledged.
		tenure, cancel := context.WithDeadline(ctx, renewed.Add(r.cfg.ClaimIdle))
		err = r.relayHead(tenure, stream, token, block)
		cancel()
		switch {
		case errors.Is(err, errFenced):
			r.logger.WarnContext(ctx, "outbox lease lost while publishing; the entries stay for the shard's next holder", "stream", stream, "lease", token)
			token = ""
		case err != nil && ctx.Err() == nil:
			r.logger.ErrorContext(ctx, "relaying outbox entries failed; they stay in the stream", "stream", stream, "err", err)
			wait(ctx, r.cfg.RetryBackoff)
		}
	}
}

// relayHead publishes the oldest entries of stream, waiting up to block
// for one when it is empty, and deletes them if token still holds the
// lease. The stream holds only entries not yet published (published ones
// are deleted), so reading from its start is reading in order from the
// first unpublished entry.
func (r *Relay) relayHead(ctx context.Context, stream, token string, block time.Duration) error {
	res, err := r.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{stream, "0-0"}, Count: int64(r.cfg.Batch), Block: block}).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", stream, err)
	}
	var entries []redis.XMessage
	for _, s := range res {
		entries = append(entries, s.Messages...)
	}
	if len(entries) == 0 {
		return nil
	}
	msgs := make([]kafka.Message, 0, len(entries))
	ids := make([]any, 0, len(entries)+1)
	ids = append(ids, token)
	for _, e := range entries {
		ids = append(ids, e.ID)
		m, err := toMessage(e)
		if err != nil {
			// A malformed entry can never be published; leaving it would
			// block its shard forever. It is logged whole and dropped.
			r.logger.ErrorContext(ctx, "dropping malformed outbox entry", "stream", stream, "entry", e.ID, "values", e.Values, "err", err)
			continue
		}
		msgs = append(msgs, m)
	}
	if len(msgs) > 0 {
		if err := r.pub.Publish(ctx, msgs...); err != nil {
			return err
		}
	}
	// Acknowledge even if ctx ended meanwhile: the brokers have the
	// records, and the fence, not ctx, says whether this tenure may.
	ack, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	n, err := ackFenced.Run(ack, r.rdb, []string{leaseKey(stream), stream}, ids...).Int64()
	if err != nil {
		return fmt.Errorf("acknowledging %d entries: %w", len(entries), err)
	}
	if n < 0 {
		return errFenced
	}
	return nil
}

func toMessage(e redis.XMessage) (kafka.Message, error) {
	get := func(k string) string { s, _ := e.Values[k].(string); return s }
	m := kafka.Message{
		Topic:   get("topic"),
		Key:     get("key"),
		EventID: get("id"),
		Schema:  get("schema"),
		Value:   []byte(get("payload")),
	}
	if m.Topic == "" || m.EventID == "" || m.Schema == "" {
		return kafka.Message{}, errors.New("entry lacks topic, id or schema")
	}
	if tp := get("traceparent"); tp != "" {
		ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp})
		m.Parent = trace.SpanContextFromContext(ctx)
	}
	return m, nil
}

// wait pauses for d or until ctx ends.
func wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
