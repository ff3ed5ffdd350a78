// Package redisclient opens the service's Redis connection from its
// configuration: a single server, a Cluster (several seed addresses, or
// one configuration endpoint with REDIS_MODE=cluster), or a primary found
// through Sentinel; optionally over TLS.
package redisclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/tlsclient"
)

// The topologies REDIS_MODE names.
const (
	ModeAuto       = ""           // one address: standalone; several: cluster
	ModeStandalone = "standalone" // exactly one address
	ModeCluster    = "cluster"    // the addresses are seed nodes or a configuration endpoint
	ModeSentinel   = "sentinel"   // the addresses are sentinels; SentinelMaster names the primary
)

// Config locates Redis.
type Config struct {
	Addrs    []string // one address, the seed nodes of a cluster, or the sentinels
	Mode     string
	Username string // ACL user; empty is "default"
	Password envconf.Secret
	// SentinelMaster is the primary's name at the sentinels (mode sentinel).
	SentinelMaster   string
	SentinelPassword envconf.Secret
	PoolSize         int // 0: go-redis default (10 per CPU)
	// TLS connects with TLS 1.2 or later, verifying the server against
	// TLSCAFile (PEM) or, when empty, the system roots.
	TLS           bool
	TLSCAFile     string
	TLSServerName string // overrides the name checked in the certificate
	// Durable confirms the writes that are records (durable.go).
	Durable DurableConfig
}

// FromEnv reads REDIS_ADDRS (comma-separated, default 127.0.0.1:6379),
// REDIS_MODE (standalone, cluster, sentinel; empty chooses by the number of
// addresses), REDIS_USERNAME, REDIS_PASSWORD, REDIS_SENTINEL_MASTER,
// REDIS_SENTINEL_PASSWORD, REDIS_POOL_SIZE, REDIS_TLS, REDIS_TLS_CA_FILE and
// REDIS_TLS_SERVER_NAME, and the durable writes' REDIS_DURABLE_WRITES,
// REDIS_DURABLE_REPLICAS and REDIS_DURABLE_TIMEOUT.
func FromEnv(r *envconf.Reader) Config {
	return Config{
		Addrs:            r.List("REDIS_ADDRS", []string{"127.0.0.1:6379"}),
		Mode:             r.String("REDIS_MODE", ModeAuto),
		Username:         r.String("REDIS_USERNAME", ""),
		Password:         r.Secret("REDIS_PASSWORD"),
		SentinelMaster:   r.String("REDIS_SENTINEL_MASTER", ""),
		SentinelPassword: r.Secret("REDIS_SENTINEL_PASSWORD"),
		PoolSize:         r.Int("REDIS_POOL_SIZE", 0),
		TLS:              r.Bool("REDIS_TLS", false),
		TLSCAFile:        r.String("REDIS_TLS_CA_FILE", ""),
		TLSServerName:    r.String("REDIS_TLS_SERVER_NAME", ""),
		Durable:          durableFromEnv(r),
	}
}

// Validate reports an unusable configuration.
func (c Config) Validate() error {
	if len(c.Addrs) == 0 {
		return errors.New("redis: at least one address required")
	}
	if c.PoolSize < 0 {
		return errors.New("redis: pool size must not be negative")
	}
	switch c.Mode {
	case ModeAuto, ModeCluster:
	case ModeStandalone:
		if len(c.Addrs) != 1 {
			return fmt.Errorf("redis: mode standalone takes one address, got %d", len(c.Addrs))
		}
	case ModeSentinel:
		if c.SentinelMaster == "" {
			return errors.New("redis: mode sentinel needs REDIS_SENTINEL_MASTER, the primary's name")
		}
	default:
		return fmt.Errorf("redis: mode %q is not standalone, cluster or sentinel", c.Mode)
	}
	if c.Mode != ModeSentinel && c.SentinelMaster != "" {
		return errors.New("redis: REDIS_SENTINEL_MASTER is set but the mode is not sentinel")
	}
	if !c.TLS && (c.TLSCAFile != "" || c.TLSServerName != "") {
		return errors.New("redis: TLS settings given but REDIS_TLS is not true")
	}
	if _, err := c.tlsConfig(); err != nil {
		return err
	}
	return c.Durable.Validate()
}

func (c Config) tlsConfig() (*tls.Config, error) {
	t, err := tlsclient.Config(c.TLS, c.TLSCAFile, c.TLSServerName)
	if err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	return t, nil
}

// New returns a client for the configured topology. Every script the
// platform runs keeps its keys in one hash slot, so all behave the same.
func New(c Config) redis.UniversalClient {
	tc, err := c.tlsConfig()
	if err != nil {
		// Validate reports this; a client that can trust no server fails
		// closed rather than falling back to the system roots.
		tc = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: x509.NewCertPool()}
	}
	o := &redis.UniversalOptions{
		Addrs:         c.Addrs,
		Username:      c.Username,
		Password:      c.Password.Reveal(),
		PoolSize:      c.PoolSize,
		TLSConfig:     tc,
		IsClusterMode: c.Mode == ModeCluster,
		DialTimeout:   5 * time.Second,
		ReadTimeout:   3 * time.Second,
		WriteTimeout:  3 * time.Second,
	}
	if c.Mode == ModeSentinel {
		o.MasterName = c.SentinelMaster
		o.SentinelPassword = c.SentinelPassword.Reveal()
	}
	if c.Mode == ModeStandalone {
		o.Addrs = c.Addrs[:1]
	}
	return redis.NewUniversalClient(o)
}

// Ping is the readiness probe.
func Ping(rdb redis.UniversalClient) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := rdb.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("pinging redis: %w", err)
		}
		return nil
	}
}

// Instrument makes a client span of every command and pipeline (go-redis's
// OpenTelemetry instrumentation) and exports the connection pool and
// command latency metrics (db_client_connections_*, docs/observability.md).
// Spans leave the command's arguments out: they hold credential hashes,
// capability digests and case records, which do not belong in a trace.
func Instrument(rdb redis.UniversalClient, tp trace.TracerProvider, mp metric.MeterProvider) error {
	if err := redisotel.InstrumentTracing(rdb,
		redisotel.WithTracerProvider(tp),
		redisotel.WithDBStatement(false),
		redisotel.WithCallerEnabled(false),
	); err != nil {
		return fmt.Errorf("redis: instrumenting tracing: %w", err)
	}
	if err := redisotel.InstrumentMetrics(rdb,
		redisotel.WithMeterProvider(mp),
		redisotel.WithSemConvCompliantMetrics(true),
	); err != nil {
		return fmt.Errorf("redis: instrumenting metrics: %w", err)
	}
	return nil
}

// CountDue returns, for each sorted set of keys scored by a time in Unix
// milliseconds (a deadline index, a delivery queue), how many members are
// due at now, in one pipeline: the size of a queue of scheduled work for
// its gauge. Each key may be in another cluster slot.
func CountDue(ctx context.Context, rdb redis.UniversalClient, keys []string, now time.Time) ([]int64, error) {
	cmds := make([]*redis.IntCmd, len(keys))
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, key := range keys {
			cmds[i] = p.ZCount(ctx, key, "-inf", strconv.FormatInt(now.UnixMilli(), 10))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(cmds))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}
