package redisclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/pcourt/pcourt/libs/envconf"
)

// The confirmations REDIS_DURABLE_WRITES names.
const (
	// DurableOff answers as soon as the primary applied the write: a
	// primary lost before it replicated or fsynced the write loses it.
	DurableOff = "off"
	// DurableWait waits until Replicas replicas acknowledge the write
	// (WAIT): it survives the loss of the primary.
	DurableWait = "wait"
	// DurableWaitAOF waits until the primary's append-only file holds the
	// write on disk and Replicas replicas' do (WAITAOF 1 Replicas): it
	// survives the loss of every process as well. Redis 7.2 or later with
	// appendonly yes.
	DurableWaitAOF = "waitaof"
)

// DurableConfig says how a write the caller must not lose (a case opened,
// a payment settled, an act on a case) is confirmed before it is answered.
type DurableConfig struct {
	Mode     string
	Replicas int           // replicas that must acknowledge; 0 with waitaof: the primary's fsync alone
	Timeout  time.Duration // the longest a write waits for them
}

// durableFromEnv reads REDIS_DURABLE_WRITES (off, wait, waitaof; default
// off), REDIS_DURABLE_REPLICAS (1) and REDIS_DURABLE_TIMEOUT (500ms).
func durableFromEnv(r *envconf.Reader) DurableConfig {
	return DurableConfig{
		Mode:     r.String("REDIS_DURABLE_WRITES", DurableOff),
		Replicas: r.Int("REDIS_DURABLE_REPLICAS", 1),
		Timeout:  r.Duration("REDIS_DURABLE_TIMEOUT", 500*time.Millisecond),
	}
}

// Validate reports an unusable configuration.
func (c DurableConfig) Validate() error {
	switch c.Mode {
	case DurableOff:
		return nil
	case DurableWait:
		if c.Replicas < 1 {
			return fmt.Errorf("redis: REDIS_DURABLE_WRITES=wait needs REDIS_DURABLE_REPLICAS of at least 1, got %d", c.Replicas)
		}
	case DurableWaitAOF:
		if c.Replicas < 0 {
			return fmt.Errorf("redis: REDIS_DURABLE_REPLICAS must not be negative, got %d", c.Replicas)
		}
	default:
		return fmt.Errorf("redis: REDIS_DURABLE_WRITES %q is not off, wait or waitaof", c.Mode)
	}
	if c.Timeout < time.Millisecond || c.Timeout > 10*time.Second {
		return fmt.Errorf("redis: REDIS_DURABLE_TIMEOUT must be between 1ms and 10s, got %s", c.Timeout)
	}
	return nil
}

// Durable confirms writes the caller must not lose. Redis answers a write
// once the primary has applied it in memory; replication and the
// append-only file's fsync follow asynchronously. Durable closes that
// window for the writes that are records (docs/redis.md, "Durable
// writes"): it runs the write on one connection to the primary that holds
// the write's key and then, on the same connection, WAIT or WAITAOF,
// which wait for that connection's own writes.
//
// What happens when fewer acknowledge in time: the write stands (it was
// applied and cannot be taken back), the caller's answer is the write's
// own, and the shortfall is logged as "durable write short" with what was
// wanted and what was obtained, and returned in Confirmation. The answer
// claims nothing about durability; an operator sees a replica that lags
// or is away in the log. Refusing the answer instead (503) would not make
// the write more durable: a retry finds it applied and has nothing of its
// own to wait for.
//
// A nil *Durable writes without waiting, as DurableOff does.
type Durable struct {
	cfg    DurableConfig
	logger *slog.Logger
	// confirmed counts the waits by result (Instrument); nil counts nothing.
	confirmed metric.Int64Counter
}

// Instrument counts every confirmation Durable waits for in
// pcourt_redis_durable_writes_total{result="confirmed"|"short"}: a short
// one is a record the replicas (or the AOF) did not hold when it was
// answered (docs/observability.md).
func (d *Durable) Instrument(mp metric.MeterProvider) error {
	if d == nil {
		return nil
	}
	c, err := mp.Meter("github.com/pcourt/pcourt/libs/redisclient").Int64Counter("pcourt.redis.durable_writes",
		metric.WithUnit("{write}"),
		metric.WithDescription("Writes of record Durable waited for, by whether the configured replicas and AOF confirmed them in time."))
	if err != nil {
		return err
	}
	d.confirmed = c
	return nil
}

// NewDurable returns the confirmer of cfg, logging shortfalls to logger.
func NewDurable(cfg DurableConfig, logger *slog.Logger) *Durable {
	return &Durable{cfg: cfg, logger: logger}
}

// Confirmation is what a write obtained: how many replicas acknowledged
// it and whether the primary's append-only file holds it, with Short set
// when that is less than the configuration asks.
type Confirmation struct {
	Waited     bool // a confirmation was asked for (mode not off)
	Replicas   int
	LocalFsync bool
	Short      bool
}

// Write runs write on one connection to the primary that holds key, then
// waits for the configured confirmation on that connection. It returns
// write's error unchanged; a wait that falls short or fails is never an
// error (see Durable).
func (d *Durable) Write(ctx context.Context, rdb redis.UniversalClient, key string, write func(redis.Scripter) error) (Confirmation, error) {
	if d == nil || d.cfg.Mode == DurableOff || d.cfg.Mode == "" {
		return Confirmation{}, write(rdb)
	}
	primary, err := primaryFor(ctx, rdb, key)
	if err != nil {
		return Confirmation{}, err
	}
	conn := primary.Conn()
	defer conn.Close()
	if err := write(conn); err != nil {
		return Confirmation{}, err
	}
	got, err := d.wait(ctx, conn)
	if d.confirmed != nil {
		result := "confirmed"
		if err != nil || got.Short {
			result = "short"
		}
		d.confirmed.Add(ctx, 1, metric.WithAttributes(attribute.String("result", result)))
	}
	if err != nil || got.Short {
		d.logger.WarnContext(ctx, "durable write short", "key", key, "mode", d.cfg.Mode,
			"replicas_wanted", d.cfg.Replicas, "replicas", got.Replicas, "local_fsync", got.LocalFsync,
			"timeout", d.cfg.Timeout, "err", err)
	}
	return got, nil
}

func (d *Durable) wait(ctx context.Context, conn *redis.Conn) (Confirmation, error) {
	got := Confirmation{Waited: true, Short: true}
	switch d.cfg.Mode {
	case DurableWait:
		n, err := conn.Wait(ctx, d.cfg.Replicas, d.cfg.Timeout).Result()
		if err != nil {
			return got, fmt.Errorf("WAIT: %w", err)
		}
		got.Replicas = int(n)
		got.Short = got.Replicas < d.cfg.Replicas
	case DurableWaitAOF:
		v, err := conn.WaitAOF(ctx, 1, d.cfg.Replicas, d.cfg.Timeout).Result()
		if err != nil {
			return got, fmt.Errorf("WAITAOF: %w", err)
		}
		if len(v) != 2 {
			return got, fmt.Errorf("WAITAOF answered %v", v)
		}
		got.LocalFsync, got.Replicas = v[0] >= 1, int(v[1])
		got.Short = !got.LocalFsync || got.Replicas < d.cfg.Replicas
	}
	return got, nil
}

// primaryFor returns the client of the one server that takes key's
// writes: a cluster's primary for key's slot, or the client itself
// (standalone, or Sentinel's current primary). A slot that moves between
// the lookup and the write answers MOVED, an error the caller retries.
func primaryFor(ctx context.Context, rdb redis.UniversalClient, key string) (*redis.Client, error) {
	switch c := rdb.(type) {
	case *redis.Client:
		return c, nil
	case *redis.ClusterClient:
		node, err := c.MasterForKey(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("finding the primary of %s: %w", key, err)
		}
		return node, nil
	}
	return nil, fmt.Errorf("durable writes: unsupported redis client %T", rdb)
}

// CheckDurable tells at start whether every primary can give the
// confirmation cfg asks for: WAITAOF needs Redis 7.2 or later with
// appendonly yes, which a primary answers WAITAOF 1 0 0 with at once. It
// returns nil when durable writes are off. An error a primary answers
// means the deployment contradicts its configuration and the service must
// not start; a primary that cannot be reached yet is logged and skipped,
// since Redis may start after the service.
func CheckDurable(ctx context.Context, rdb redis.UniversalClient, cfg DurableConfig, logger *slog.Logger) error {
	if cfg.Mode != DurableWaitAOF {
		return nil
	}
	probe := func(ctx context.Context, c *redis.Client) error {
		err := c.WaitAOF(ctx, 1, 0, time.Millisecond).Err()
		var refused redis.Error
		if err != nil && !errors.As(err, &refused) {
			logger.WarnContext(ctx, "durable writes not checked: redis unreachable", "addr", c.Options().Addr, "err", err)
			return nil
		}
		if err != nil {
			return fmt.Errorf("REDIS_DURABLE_WRITES=waitaof needs Redis 7.2 or later with appendonly yes on every primary; %s answered: %w", c.Options().Addr, err)
		}
		return nil
	}
	switch c := rdb.(type) {
	case *redis.Client:
		return probe(ctx, c)
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, probe)
	}
	return errors.New("durable writes: unsupported redis client")
}
