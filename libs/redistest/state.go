package redistest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// State returns every key matching one of patterns ("*" when none are
// given) with its serialized value (DUMP), leaving out the keys skip says
// are bookkeeping (an idempotency journal, rate-limit counters). Two equal
// states mean nothing a test cares about changed in between.
func State(tb testing.TB, rdb redis.UniversalClient, skip func(key string) bool, patterns ...string) map[string]string {
	tb.Helper()
	if len(patterns) == 0 {
		patterns = []string{"*"}
	}
	ctx := context.Background()
	state := map[string]string{}
	for _, pattern := range patterns {
		for _, key := range Keys(tb, rdb, pattern) {
			if skip != nil && skip(key) {
				continue
			}
			v, err := rdb.Dump(ctx, key).Result()
			if errors.Is(err, redis.Nil) {
				continue // expired between SCAN and DUMP
			}
			if err != nil {
				tb.Fatalf("dumping %s: %v", key, err)
			}
			state[key] = v
		}
	}
	return state
}

// Keys returns every key matching pattern, on a standalone server or on
// every primary of a cluster (where one SCAN sees only one node's keys).
func Keys(tb testing.TB, rdb redis.UniversalClient, pattern string) []string {
	tb.Helper()
	ctx := context.Background()
	var keys []string
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		return iter.Err()
	}
	var err error
	if cluster, ok := rdb.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		err = cluster.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			mu.Lock() // ForEachMaster visits the nodes concurrently
			defer mu.Unlock()
			return scan(ctx, node)
		})
	} else {
		err = scan(ctx, rdb)
	}
	if err != nil {
		tb.Fatalf("scanning %s: %v", pattern, err)
	}
	return keys
}

// Unchanged runs act and fails the test, naming each key, unless the state
// (as State takes it) is the same afterwards: the check that a refusal
// changes nothing.
func Unchanged(tb testing.TB, rdb redis.UniversalClient, skip func(key string) bool, act func(), patterns ...string) {
	tb.Helper()
	before := State(tb, rdb, skip, patterns...)
	act()
	after := State(tb, rdb, skip, patterns...)
	for _, k := range slices.Sorted(maps.Keys(after)) {
		if v, ok := before[k]; !ok {
			tb.Errorf("a refusal wrote %s", k)
		} else if v != after[k] {
			tb.Errorf("a refusal changed %s", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(before)) {
		if _, ok := after[k]; !ok {
			tb.Errorf("a refusal deleted %s", k)
		}
	}
}
