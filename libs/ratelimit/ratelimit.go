// Package ratelimit counts requests against limits shared by every replica:
// each limit is one Redis key updated by one Lua script (GCRA, the generic
// cell rate algorithm), so a check costs one round trip and the key holds a
// single timestamp that expires when the caller goes quiet.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/envconf"
)

// Rule is one limit: Rate events per Period sustained, with bursts of up to
// Burst events. A zero Rate switches the limit off.
type Rule struct {
	Rate   int
	Period time.Duration
	Burst  int
}

// Off is a rule that never limits, for benchmarks and for deployments that
// limit elsewhere.
var Off = Rule{}

// Enabled reports whether the rule limits anything.
func (r Rule) Enabled() bool { return r.Rate > 0 }

// Validate reports an unusable rule. Off is valid.
func (r Rule) Validate() error {
	switch {
	case !r.Enabled():
		return nil
	case r.Period <= 0:
		return errors.New("rate limit period must be positive")
	case r.Burst < 1:
		return errors.New("rate limit burst must be at least 1")
	}
	return nil
}

// String renders the rule for configuration logs, e.g. "50/1s burst 100".
func (r Rule) String() string {
	if !r.Enabled() {
		return "off"
	}
	return fmt.Sprintf("%d/%s burst %d", r.Rate, r.Period, r.Burst)
}

// emission is the time one event uses up.
func (r Rule) emission() time.Duration { return r.Period / time.Duration(r.Rate) }

// Decision is the outcome of a check.
type Decision struct {
	Allowed bool
	// RetryAfter is how long until the next event would be allowed, when it
	// is not allowed now.
	RetryAfter time.Duration
}

// RetryAfterSeconds is RetryAfter rounded up to whole seconds, at least 1,
// as the Retry-After header wants it.
func (d Decision) RetryAfterSeconds() int {
	s := int((d.RetryAfter + time.Second - 1) / time.Second)
	return max(s, 1)
}

// Limiter checks limits in Redis.
type Limiter struct {
	rdb    redis.UniversalClient
	prefix string
}

// New returns a limiter whose keys start with prefix, e.g. "pc:rl".
func New(rdb redis.UniversalClient, prefix string) *Limiter {
	return &Limiter{rdb: rdb, prefix: prefix}
}

// Allow counts one event for key under rule and reports whether it is
// within the limit. A refused event is not counted, so a caller that waits
// out RetryAfter gets through.
func (l *Limiter) Allow(ctx context.Context, key string, rule Rule) (Decision, error) {
	return l.run(ctx, key, rule, 1)
}

// Peek reports whether one more event would be allowed without counting it:
// a failure throttle peeks before doing the work and counts (Allow) only
// the failures.
func (l *Limiter) Peek(ctx context.Context, key string, rule Rule) (Decision, error) {
	return l.run(ctx, key, rule, 0)
}

func (l *Limiter) run(ctx context.Context, key string, rule Rule, count int) (Decision, error) {
	if !rule.Enabled() {
		return Decision{Allowed: true}, nil
	}
	res, err := gcra.Run(ctx, l.rdb, []string{l.prefix + ":" + key},
		rule.emission().Microseconds(), int64(rule.Burst)*rule.emission().Microseconds(), count).Int64Slice()
	if err != nil {
		return Decision{}, fmt.Errorf("checking rate limit: %w", err)
	}
	return Decision{Allowed: res[0] == 1, RetryAfter: time.Duration(res[1]) * time.Microsecond}, nil
}

// gcra keeps the theoretical arrival time (TAT) of the next event in
// microseconds of the Redis clock, so replicas with skewed clocks agree.
// An event is allowed when it arrives no earlier than TAT minus the burst
// tolerance; counting it moves TAT on by one emission interval.
//
// KEYS[1] the limit's key; ARGV emission µs, tolerance µs (burst × emission),
// count (1 to count an allowed event, 0 to only look).
// Returns {allowed 0|1, retry after µs}.
var gcra = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local emission = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + emission
local allow_at = new_tat - tolerance
if now < allow_at then
  return {0, allow_at - now}
end
if tonumber(ARGV[3]) == 1 then
  redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', math.ceil((new_tat - now) / 1000))
end
return {1, 0}
`)

// FromEnv reads <prefix>_RATE, <prefix>_PERIOD and <prefix>_BURST over def;
// <prefix>_RATE=0 switches the limit off.
func FromEnv(r *envconf.Reader, prefix string, def Rule) Rule {
	return Rule{
		Rate:   r.Int(prefix+"_RATE", def.Rate),
		Period: r.Duration(prefix+"_PERIOD", def.Period),
		Burst:  r.Int(prefix+"_BURST", def.Burst),
	}
}
