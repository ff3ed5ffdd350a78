package redisclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ErrConfigHidden is CheckNoEviction's answer where the server refuses
// CONFIG GET, as managed services often do: the policy cannot be seen from
// here and must be checked in the provider's settings.
var ErrConfigHidden = errors.New("redis refuses CONFIG GET: maxmemory-policy cannot be checked from here")

// CheckNoEviction reports whether every primary runs with
// maxmemory-policy noeviction. Redis is the store of record
// (docs/redis.md): under any other policy a full server deletes cases,
// payments or outbox entries to make room, silently; under noeviction it
// refuses the write instead, which the caller sees and retries. The
// error names each primary whose policy is another.
func CheckNoEviction(ctx context.Context, rdb redis.UniversalClient) error {
	var (
		mu     sync.Mutex // a cluster's primaries answer concurrently
		wrong  []string
		hidden bool
	)
	probe := func(ctx context.Context, c *redis.Client) error {
		v, err := c.ConfigGet(ctx, "maxmemory-policy").Result()
		var refused redis.Error
		mu.Lock()
		defer mu.Unlock()
		if errors.As(err, &refused) {
			hidden = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading maxmemory-policy of %s: %w", c.Options().Addr, err)
		}
		if policy := v["maxmemory-policy"]; policy != "noeviction" {
			wrong = append(wrong, fmt.Sprintf("%s has %q", c.Options().Addr, policy))
		}
		return nil
	}
	var err error
	switch c := rdb.(type) {
	case *redis.Client:
		err = probe(ctx, c)
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return probe(ctx, n) })
	default:
		return fmt.Errorf("checking maxmemory-policy: unsupported redis client %T", rdb)
	}
	switch {
	case err != nil:
		return err
	case len(wrong) > 0:
		return fmt.Errorf("maxmemory-policy must be noeviction: %s", strings.Join(wrong, ", "))
	case hidden:
		return ErrConfigHidden
	}
	return nil
}
