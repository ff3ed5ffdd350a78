// Package redisclient opens the service's Redis connection from its
// configuration: one address for a single server, several for a cluster.
package redisclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/envconf"
)

// Config locates Redis.
type Config struct {
	Addrs    []string // one address, or the seed nodes of a cluster
	Password envconf.Secret
	PoolSize int // 0: go-redis default (10 per CPU)
}

// FromEnv reads REDIS_ADDRS (comma-separated, default 127.0.0.1:6379),
// REDIS_PASSWORD and REDIS_POOL_SIZE.
func FromEnv(r *envconf.Reader) Config {
	return Config{
		Addrs:    r.List("REDIS_ADDRS", []string{"127.0.0.1:6379"}),
		Password: r.Secret("REDIS_PASSWORD"),
		PoolSize: r.Int("REDIS_POOL_SIZE", 0),
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
	return nil
}

// New returns a client: a cluster client when several addresses are given,
// a single-node client otherwise. Every script the platform runs keeps its
// keys in one hash slot, so both behave the same.
func New(c Config) redis.UniversalClient {
	return redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:        c.Addrs,
		Password:     c.Password.Reveal(),
		PoolSize:     c.PoolSize,
		DialTimeout:  5 * time.Second,
		ReadTimeout:  3 * time.Second,
		WriteTimeout: 3 * time.Second,
	})
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
