// Package service builds what every pcourt service sets up the same way
// before its own parts: the shared settings, the logger, telemetry, the
// Redis client, and an HTTP server whose readiness follows Redis (Kafka
// reported, never gating).
// A service's main reads as: load config → service.Start → its own parts →
// Base.Server → lifecycle.Run with the HTTP server first, then consumers,
// then the outbox relay (the shutdown order) → deferred Close of clients.
package service

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/logging"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/telemetry"
)

// Config holds the settings every service has.
type Config struct {
	HTTP         httpserver.Config
	Auth         auth.StoreConfig
	Redis        redisclient.Config
	KafkaBrokers []string
	// KafkaSecurity is TLS and SASL/SCRAM to the brokers (KAFKA_TLS…).
	KafkaSecurity kafka.Security
	// KafkaCommitInterval batches a consumer's offset commits (see
	// kafka.ConsumerConfig.CommitInterval).
	KafkaCommitInterval time.Duration
	LogLevel            string
	PodName             string // names this replica, e.g. as an outbox relay consumer
}

// ConfigFromEnv reads HTTP_*, REDIS_*, KAFKA_BROKERS (default
// 127.0.0.1:9092), KAFKA_TLS* and KAFKA_SASL_* (kafka.SecurityFromEnv),
// KAFKA_COMMIT_INTERVAL (100ms), LOG_LEVEL (info) and
// POD_NAME (the hostname).
func ConfigFromEnv(r *envconf.Reader, defaultAddr string) Config {
	host, _ := os.Hostname()
	return Config{
		HTTP:          httpserver.ConfigFromEnv(r, defaultAddr),
		Auth:          auth.StoreConfigFromEnv(r),
		Redis:         redisclient.FromEnv(r),
		KafkaBrokers:  r.List("KAFKA_BROKERS", []string{"127.0.0.1:9092"}),
		KafkaSecurity: kafka.SecurityFromEnv(r),
		// One synchronous commit per message caps a consumer near a
		// thousand messages a second; batched every 100 ms, a crash
		// redelivers at most that much, which the consumers dedupe.
		KafkaCommitInterval: r.Duration("KAFKA_COMMIT_INTERVAL", 100*time.Millisecond),
		LogLevel:            r.String("LOG_LEVEL", "info"),
		PodName:             r.String("POD_NAME", host),
	}
}

// Validate reports every unusable setting.
func (c Config) Validate() error {
	errs := []error{c.HTTP.Validate(), c.Auth.Validate(), c.Redis.Validate(), c.KafkaSecurity.Validate()}
	if len(c.KafkaBrokers) == 0 {
		errs = append(errs, errors.New("KAFKA_BROKERS must name at least one broker"))
	}
	if c.KafkaCommitInterval < 0 {
		errs = append(errs, errors.New("KAFKA_COMMIT_INTERVAL must not be negative"))
	}
	if c.PodName == "" {
		errs = append(errs, errors.New("POD_NAME is empty and the hostname unknown"))
	}
	return errors.Join(errs...)
}

// Base is a started service's shared parts.
type Base struct {
	Name      string
	Config    Config
	Logger    *slog.Logger
	Telemetry *telemetry.Providers
	Redis     redis.UniversalClient
	// Durable confirms the writes that are records (case openings and
	// acts, payments) as REDIS_DURABLE_WRITES says (docs/redis.md).
	Durable *redisclient.Durable

	logs  *logging.Batch        // nil when the output is not a file
	relay redis.UniversalClient // RelayRedis's client, once made
}

// Options are what Start needs from a service's main.
type Options struct {
	Name    string
	Version string
	// Config is the shared part of the service's configuration.
	Config Config
	// FullConfig is the service's whole configuration, logged at start;
	// secrets redact themselves.
	FullConfig any
	Getenv     func(string) string
	Stdout     io.Writer
}

// Start builds the logger, logs the service's whole configuration, sets the
// garbage collector's target and memory limit, sets up telemetry and opens
// Redis, traced and measured. Close undoes it.
func Start(ctx context.Context, o Options) (base *Base, err error) {
	// The process's own output (a file or a pipe to the container
	// runtime) gets its lines in batches, one write system call per batch
	// rather than per access-log line (logging.Batch says what a reader can
	// rely on); a writer in memory, a test's, gets each line as logged.
	out, logs := o.Stdout, (*logging.Batch)(nil)
	if f, ok := o.Stdout.(*os.File); ok {
		logs = logging.NewBatch(f, logging.DefaultBatchInterval)
		out = logs
		defer func() {
			if err != nil {
				_ = logs.Close()
			}
		}()
	}
	logger := logging.New(out, o.Name, logging.ParseLevel(o.Config.LogLevel))
	logger.Info("starting", "version", o.Version, "config", o.FullConfig,
		"gc", tuneGC(o.Getenv, "/sys/fs/cgroup"))
	tel, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: o.Name, ServiceVersion: o.Version}, o.Getenv)
	if err != nil {
		return nil, err
	}
	rdb := redisclient.New(o.Config.Redis)
	if err := redisclient.CheckDurable(ctx, rdb, o.Config.Redis.Durable, logger); err != nil {
		_ = rdb.Close()
		_ = tel.Shutdown(ctx)
		return nil, err
	}
	if err := redisclient.Instrument(rdb, tel.Tracer, tel.Meter); err != nil {
		_ = rdb.Close()
		_ = tel.Shutdown(ctx)
		return nil, err
	}
	logEvictionPolicy(ctx, rdb, logger)
	durable := redisclient.NewDurable(o.Config.Redis.Durable, logger)
	if err := durable.Instrument(tel.Meter); err != nil {
		_ = rdb.Close()
		_ = tel.Shutdown(ctx)
		return nil, err
	}
	return &Base{Name: o.Name, Config: o.Config, Logger: logger, Telemetry: tel, Redis: rdb, Durable: durable, logs: logs}, nil
}

// logEvictionPolicy says at start whether Redis may evict the service's
// keys. It never stops the service: the policy can change while it runs
// (the readiness check "redis-eviction" follows it), and a managed Redis
// may hide it.
func logEvictionPolicy(ctx context.Context, rdb redis.UniversalClient, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	switch err := redisclient.CheckNoEviction(ctx, rdb); {
	case err == nil:
		logger.Info("redis eviction policy checked", "maxmemory_policy", "noeviction")
	case errors.Is(err, redisclient.ErrConfigHidden):
		logger.Info("redis eviction policy not checked: CONFIG GET refused; make sure the provider runs noeviction", "err", err)
	default:
		logger.Warn("redis may evict records: maxmemory-policy must be noeviction (docs/redis.md)", "err", err)
	}
}

// EvictionCheck is the advisory readiness check that Redis runs with
// maxmemory-policy noeviction: another policy is reported (status
// degraded) but keeps the pod ready, since the API works until memory
// fills; a Redis that hides its configuration passes, as logged at start.
func (b *Base) EvictionCheck() httpserver.Check {
	return httpserver.Check{Name: "redis-eviction", Advisory: true, Probe: func(ctx context.Context) error {
		if err := redisclient.CheckNoEviction(ctx, b.Redis); err != nil && !errors.Is(err, redisclient.ErrConfigHidden) {
			return err
		}
		return nil
	}}
}

// Credentials returns the credential store with the configured limits.
func (b *Base) Credentials() *auth.Store { return auth.NewStore(b.Redis, b.Config.Auth) }

// Server returns the service's HTTP server, ready when Redis answers and
// every extra check that is not advisory passes, with its per-address
// limit counted in Redis. Every service's API needs Redis alone: a
// service that also uses Kafka adds KafkaCheck and its consumers' probes,
// advisory, so a Kafka outage is reported and waited out, never turned
// into an API outage (docs/architecture.md, "HTTP conventions").
func (b *Base) Server(mapper problem.Mapper, extra ...httpserver.Check) *httpserver.Server {
	return httpserver.New(b.Config.HTTP, httpserver.Deps{
		Service:   b.Name,
		Logger:    b.Logger,
		Telemetry: b.Telemetry,
		Mapper:    mapper,
		Limiter:   ratelimit.New(b.Redis, "pc:rl:"+b.Name),
		Checks: append([]httpserver.Check{
			{Name: "redis", Probe: redisclient.Ping(b.Redis)},
			b.EvictionCheck(),
		}, extra...),
	})
}

// KafkaCheck is the advisory readiness check of a service that publishes
// or consumes through Kafka: while the brokers are away its outbox keeps
// the writes and its relay and consumers retry, so the pod stays ready.
func (b *Base) KafkaCheck() httpserver.Check {
	return httpserver.Check{Name: "kafka", Advisory: true, Probe: func(ctx context.Context) error { return kafka.Ping(ctx, b.Config.KafkaBrokers, b.Config.KafkaSecurity) }}
}

// RelayRedis returns the outbox relay's own Redis client, with one
// connection for each of sharding's shards, instrumented like Redis.
//
// The relay's idle read of a shard blocks on its connection for up to a
// second, on every shard at once (outbox.RelayConfig.Block): on the
// request path's client, sixteen shards would hold sixteen of the ten
// connections a one-CPU pod's pool has (go-redis: ten per GOMAXPROCS, and
// the chart gives each service one), and every request would queue
// behind a read that is waiting for nothing. A pool of its own keeps the
// two apart: the relay never waits for a connection either, since each
// shard's loop issues one command at a time.
func (b *Base) RelayRedis(sharding outbox.Sharding) (redis.UniversalClient, error) {
	if b.relay != nil {
		return nil, errors.New("service: the relay's Redis client is made once")
	}
	cfg := b.Config.Redis
	cfg.PoolSize = len(sharding.Streams())
	rdb := redisclient.New(cfg)
	if err := redisclient.Instrument(rdb, b.Telemetry.Tracer, b.Telemetry.Meter); err != nil {
		_ = rdb.Close()
		return nil, err
	}
	b.relay = rdb
	return rdb, nil
}

// Close closes Redis and flushes telemetry, logging what fails. It is the
// last step of shutdown, after lifecycle.Run has returned.
func (b *Base) Close() {
	if b.relay != nil {
		if err := b.relay.Close(); err != nil {
			b.Logger.Error("closing the relay's redis failed", "err", err)
		}
	}
	if err := b.Redis.Close(); err != nil {
		b.Logger.Error("closing redis failed", "err", err)
	}
	if err := b.Telemetry.Shutdown(context.Background()); err != nil {
		b.Logger.Error("flushing telemetry failed", "err", err)
	}
	if b.logs != nil {
		_ = b.logs.Close() // last: every line above is written
	}
}
