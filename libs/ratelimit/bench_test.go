package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/redistest"
)

// raised is a rule with budgets raised so nothing is refused, as the load
// tests run with limits on.
var raised = ratelimit.Rule{Rate: 1_000_000, Period: time.Second, Burst: 2_000_000}

// BenchmarkAllow is Allow under parallel load on one key (a load test from
// one address): leased, and one round trip per event as before, for a
// profile figure only.
func BenchmarkAllow(b *testing.B) {
	rdb := redistest.NewClient(b)
	b.Run("leased", func(b *testing.B) {
		l := ratelimit.New(rdb, "bench:rl")
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if d, err := l.Allow(context.Background(), "addr:10.0.0.1", raised); err != nil || !d.Allowed {
					b.Fatal(d, err)
				}
			}
		})
	})
	b.Run("round-trip", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := roundTrip(rdb, "bench:rt:addr:10.0.0.1"); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// roundTrip is the check as it was: one GCRA script call per event.
func roundTrip(rdb redis.UniversalClient, key string) error {
	return gcra.Run(context.Background(), rdb, []string{key}, 1, 2_000_000, 1).Err()
}

var gcra = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local emission = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + emission
if now < new_tat - tolerance then
  return {0, new_tat - tolerance - now}
end
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', math.ceil((new_tat - now) / 1000))
return {1, 0}
`)
