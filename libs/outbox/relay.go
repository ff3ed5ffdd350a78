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
	// Group is the stream consumer group all replicas share, so each entry
	// goes to one replica in steady state.
	Group string
	// Consumer names this replica within the group (the pod name).
	Consumer string
	// Batch is the most entries published in one Kafka request.
	Batch int
	// Block is how long an idle read waits for new entries.
	Block time.Duration
	// ClaimIdle is how long an entry stays pending with a silent replica
	// before another takes it over.
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
		Block:        time.Second, // go-redis raises shorter blocks to 1 s anyway
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
	case c.Batch < 1:
		return errors.New("outbox relay: batch must be positive")
	case c.Block < time.Millisecond || c.ClaimIdle < time.Millisecond || c.RetryBackoff <= 0:
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

// Run relays every shard until ctx is cancelled. Entries read but not yet
// acknowledged when it stops stay pending and are published again later.
func (r *Relay) Run(ctx context.Context) error {
	streams := r.cfg.Sharding.Streams()
	for _, stream := range streams {
		err := r.rdb.XGroupCreateMkStream(ctx, stream, r.cfg.Group, "0").Err()
		if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
			return fmt.Errorf("creating relay group on %s: %w", stream, err)
		}
	}
	var wg sync.WaitGroup
	for _, stream := range streams {
		wg.Go(func() { r.runShard(ctx, stream) })
	}
	wg.Wait()
	return nil
}

func (r *Relay) runShard(ctx context.Context, stream string) {
	// Entries this consumer name read before a restart come first; they may
	// or may not have reached Kafka.
	ownPending := true
	nextClaim := time.Time{}
	for ctx.Err() == nil {
		var entries []redis.XMessage
		var err error
		switch {
		case ownPending:
			entries, err = r.read(ctx, stream, "0", -1)
			ownPending = len(entries) > 0
		case time.Now().After(nextClaim):
			entries, _, err = r.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
				Stream: stream, Group: r.cfg.Group, Consumer: r.cfg.Consumer,
				MinIdle: r.cfg.ClaimIdle, Start: "0-0", Count: int64(r.cfg.Batch),
			}).Result()
			if len(entries) == 0 {
				nextClaim = time.Now().Add(r.cfg.ClaimIdle / 2)
			}
		default:
			entries, err = r.read(ctx, stream, ">", r.cfg.Block)
		}
		if err != nil {
			if ctx.Err() == nil {
				r.logger.ErrorContext(ctx, "reading outbox failed", "stream", stream, "err", err)
				r.pause(ctx)
			}
			continue
		}
		if len(entries) == 0 {
			continue
		}
		if err := r.relay(ctx, stream, entries); err != nil {
			if ctx.Err() == nil {
				r.logger.ErrorContext(ctx, "relaying outbox entries failed; they stay pending", "stream", stream, "entries", len(entries), "err", err)
				r.pause(ctx)
			}
			ownPending = true
		}
	}
}

// read returns up to Batch entries: id "0" re-reads this consumer's pending
// entries, ">" reads new ones, waiting up to block (negative: no wait).
func (r *Relay) read(ctx context.Context, stream, id string, block time.Duration) ([]redis.XMessage, error) {
	res, err := r.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: r.cfg.Group, Consumer: r.cfg.Consumer,
		Streams: []string{stream, id}, Count: int64(r.cfg.Batch), Block: block,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []redis.XMessage
	for _, s := range res {
		for _, m := range s.Messages {
			if m.Values == nil { // deleted after it was read: nothing to publish
				continue
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// relay publishes the entries in stream order and only then acknowledges and
// deletes them.
func (r *Relay) relay(ctx context.Context, stream string, entries []redis.XMessage) error {
	msgs := make([]kafka.Message, 0, len(entries))
	ids := make([]string, 0, len(entries))
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
	if ctx.Err() != nil {
		// Stopping between publish and acknowledge: the entries stay pending
		// and are published again, which consumers absorb by event id.
		return ctx.Err()
	}
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.XAck(ctx, stream, r.cfg.Group, ids...)
		p.XDel(ctx, stream, ids...)
		return nil
	})
	if err != nil {
		return fmt.Errorf("acknowledging %d entries: %w", len(ids), err)
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

func (r *Relay) pause(ctx context.Context) {
	t := time.NewTimer(r.cfg.RetryBackoff)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
