// Package ratelimit counts requests against limits shared by every replica,
// without a Redis round trip per request.
//
// Each limit is one Redis key holding a GCRA bucket (the generic cell rate
// algorithm: the theoretical arrival time of the next event, on the Redis
// clock, so replicas with skewed clocks agree). A replica does not ask that
// key about every event. It takes a lease of tokens from it in one script
// call (the shared bucket is charged for all of them at once), spends them
// in process, and asks again when they run out.
//
// Why this is correct, and how far it can be off:
//
//   - Every admitted event spends exactly one token, and every token was
//     charged to the shared bucket exactly once: a lease is refilled and
//     spent under its own mutex, so two goroutines never take the same token
//     and a refill race can only make one of them wait for the other's
//     round trip, never take a second lease and drop the first. No event is
//     counted twice, and none is admitted uncounted.
//   - A lease holds at most Batch(rule) tokens: a sixteenth of the burst, at
//     least 1 and at most 256. Rules with a burst under 32 (the failed
//     authentication throttle among them) have a batch of 1: every event
//     is one round trip and is counted exactly as it happens.
//   - The shared bucket never gives a replica more than half of what it has
//     left (at least one token), so one replica cannot take the last of a
//     nearly empty bucket while others go without.
//   - The bound. Tokens leave the shared bucket no faster than the rule
//     allows, so over any long run the admitted rate never exceeds Rate per
//     Period. What can exceed the rule is a burst: tokens a replica took
//     before a window and spends inside it. With N replicas, the events
//     admitted for one key in any window of length T are at most
//     Burst + T×Rate/Period + N×Batch(rule). A lease also lapses after
//     leaseLifetime (its batch's worth of emission intervals, from 100 ms
//     to 1 s), so tokens are never spent long after they were taken.
//   - Unspent tokens are given back to the shared bucket, in the same script
//     call, when the replica next refills that key after its lease lapsed,
//     and all of them on Release. Tokens of a lease that is evicted or never
//     refilled are lost; that errs towards refusing (at most N×(Batch-1)
//     events early), never towards admitting, and heals as the bucket
//     refills.
//   - A refused check is remembered until the shared bucket said the next
//     token would be there, so a flood of refused requests costs one round
//     trip per Retry-After, not one per request. Retry-After is what the
//     shared bucket answered, less the time since.
//
// A replica keeps one small entry per key it has seen; the entries are
// sharded (so that contention on one key does not slow others), and each
// shard holds at most maxKeysPerShard, dropping lapsed entries first when
// full, so idle keys cannot grow memory without bound.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
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

// Batch is the most tokens one replica takes from the shared bucket at
// once for rule: a sixteenth of the burst, at least 1 and at most 256. With
// N replicas a burst can exceed the rule by at most N×Batch events.
func Batch(rule Rule) int { return min(max(rule.Burst/16, 1), 256) }

// leaseLifetime is how long tokens taken for rule may be spent: the time
// the shared bucket takes to earn back a batch, so a replica that goes
// quiet does not spend stale tokens later; at most a second, and at least
// minLeaseLifetime. The floor is for fast rules (raised budgets): 256
// tokens of a rule of ten million a second are earned back in 26 µs, and a
// lease that lapsed that soon would cost a round trip per event, held
// under the key's lock. The bound above does not depend on the lifetime:
// a lease's tokens were charged to the shared bucket when it was taken.
func leaseLifetime(rule Rule) time.Duration {
	return min(max(time.Duration(Batch(rule))*rule.emission(), minLeaseLifetime), time.Second)
}

// minLeaseLifetime is the shortest time a lease's tokens may be spent.
const minLeaseLifetime = 100 * time.Millisecond

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

const (
	shardCount      = 64
	maxKeysPerShard = 1024
)

// Limiter checks limits shared in Redis, spending leased tokens in process.
// It is safe for concurrent use; one per process and key prefix.
type Limiter struct {
	rdb    redis.UniversalClient
	prefix string
	seed   maphash.Seed
	shards [shardCount]shard
	now    func() time.Time
}

type shard struct {
	mu     sync.Mutex
	leases map[string]*lease
}

// lease is one key's tokens on this replica. mu is held across a refill's
// round trip, so concurrent events on one key wait for it rather than each
// taking a lease of its own.
type lease struct {
	mu           sync.Mutex
	rule         Rule      // the rule the tokens were taken under
	tokens       int       // taken from the shared bucket, not yet spent
	lapses       time.Time // when the tokens may no longer be spent
	refusedUntil time.Time // the shared bucket had nothing before this
}

// New returns a limiter whose keys start with prefix, e.g. "pc:rl".
func New(rdb redis.UniversalClient, prefix string) *Limiter {
	l := &Limiter{rdb: rdb, prefix: prefix, seed: maphash.MakeSeed(), now: time.Now}
	for i := range l.shards {
		l.shards[i].leases = map[string]*lease{}
	}
	return l
}

// Allow counts one event for key under rule and reports whether it is
// within the limit. A refused event is not counted, so a caller that waits
// out RetryAfter gets through. Most calls are decided in process; the
// error is that of a refill's round trip.
func (l *Limiter) Allow(ctx context.Context, key string, rule Rule) (Decision, error) {
	if !rule.Enabled() {
		return Decision{Allowed: true}, nil
	}
	ls := l.lease(key)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	now := l.now()
	if ls.rule == rule && ls.tokens > 0 && now.Before(ls.lapses) {
		ls.tokens--
		return Decision{Allowed: true}, nil
	}
	if now.Before(ls.refusedUntil) && ls.rule == rule {
		return Decision{RetryAfter: ls.refusedUntil.Sub(now)}, nil
	}
	// Out of tokens, or they lapsed: give back what is left and take more.
	granted, retry, err := l.exchange(ctx, key, rule, ls.tokens, Batch(rule))
	if err != nil {
		return Decision{}, err
	}
	now = l.now()
	ls.rule = rule
	ls.tokens = granted
	if granted == 0 {
		ls.refusedUntil = now.Add(retry)
		return Decision{RetryAfter: retry}, nil
	}
	ls.tokens--
	ls.lapses = now.Add(leaseLifetime(rule))
	ls.refusedUntil = time.Time{}
	return Decision{Allowed: true}, nil
}

// Peek reports whether one more event would be allowed without counting it:
// a failure throttle peeks before doing the work and counts (Allow) only
// the failures. A replica holding a token answers itself; otherwise it asks
// the shared bucket, taking nothing from it.
func (l *Limiter) Peek(ctx context.Context, key string, rule Rule) (Decision, error) {
	if !rule.Enabled() {
		return Decision{Allowed: true}, nil
	}
	ls := l.lease(key)
	ls.mu.Lock()
	defer ls.mu.Unlock()
	now := l.now()
	if ls.rule == rule && ls.tokens > 0 && now.Before(ls.lapses) {
		return Decision{Allowed: true}, nil
	}
	if now.Before(ls.refusedUntil) && ls.rule == rule {
		return Decision{RetryAfter: ls.refusedUntil.Sub(now)}, nil
	}
	granted, retry, err := l.exchange(ctx, key, rule, 0, 0)
	if err != nil {
		return Decision{}, err
	}
	return Decision{Allowed: granted > 0, RetryAfter: retry}, nil
}

// Release gives every unspent token back to the shared buckets, so that
// other replicas can spend them: for shutdown. Keys whose give-back fails
// are skipped; the error is the first failure.
func (l *Limiter) Release(ctx context.Context) error {
	var first error
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		leases := s.leases
		s.leases = map[string]*lease{}
		s.mu.Unlock()
		for key, ls := range leases {
			ls.mu.Lock()
			if ls.tokens > 0 {
				if _, _, err := l.exchange(ctx, key, ls.rule, ls.tokens, -1); err != nil && first == nil {
					first = err
				}
				ls.tokens = 0
			}
			ls.mu.Unlock()
		}
	}
	return first
}

// lease returns key's entry, making room in its shard when it is full.
func (l *Limiter) lease(key string) *lease {
	s := &l.shards[maphash.String(l.seed, key)%shardCount]
	s.mu.Lock()
	defer s.mu.Unlock()
	if ls, ok := s.leases[key]; ok {
		return ls
	}
	if len(s.leases) >= maxKeysPerShard {
		s.evict(l.now())
	}
	ls := &lease{}
	s.leases[key] = ls
	return ls
}

// evict drops the entries that hold nothing live: lapsed leases whose
// refusal is over (their unspent tokens are lost, which only errs towards
// refusing). If that leaves the shard over three quarters full it drops
// live entries not in use until it is not, so the shard stays bounded
// whatever the traffic and a flood of new keys scans a shard once per
// quarter of it, not once per key.
func (s *shard) evict(now time.Time) {
	target := maxKeysPerShard * 3 / 4
	for key, ls := range s.leases {
		if !ls.mu.TryLock() {
			continue // in use
		}
		idle := !now.Before(ls.lapses) && !now.Before(ls.refusedUntil)
		ls.mu.Unlock()
		if idle {
			delete(s.leases, key)
		}
	}
	for key, ls := range s.leases {
		if len(s.leases) <= target {
			return
		}
		if ls.mu.TryLock() {
			ls.mu.Unlock()
			delete(s.leases, key)
		}
	}
}

// exchange gives back `back` unspent tokens and asks for up to want more;
// want 0 only looks, want -1 only gives back. It returns the tokens granted
// and, when none were, how long until one would be.
func (l *Limiter) exchange(ctx context.Context, key string, rule Rule, back, want int) (int, time.Duration, error) {
	// The script counts in microseconds of the Redis clock: a rule faster
	// than one event per microsecond per key is counted as one per
	// microsecond (a zero interval would divide by zero).
	emission := max(rule.emission().Microseconds(), 1)
	res, err := leaseScript.Run(ctx, l.rdb, []string{l.prefix + ":" + key},
		emission, int64(rule.Burst)*emission, want, back).Int64Slice()
	if err != nil {
		return 0, 0, fmt.Errorf("checking rate limit: %w", err)
	}
	return int(res[0]), time.Duration(res[1]) * time.Microsecond, nil
}

// leaseScript keeps the theoretical arrival time (TAT) of the next event in
// microseconds of the Redis clock. The bucket holds floor((now + tolerance
// - TAT) / emission) tokens; taking g of them moves TAT on by g emission
// intervals, giving b back moves it back by b (never before now).
//
// KEYS[1] the limit's key; ARGV emission µs, tolerance µs (burst × emission),
// want (tokens wanted; 0 to only look; -1 to only give back), back (unspent
// tokens given back first).
// Returns {granted (for a look: 1 if one is there), retry after µs when 0}.
var leaseScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local emission = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local back = tonumber(ARGV[4])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
tat = tat - back * emission
if tat < now then tat = now end
local avail = math.floor((now + tolerance - tat) / emission)
local granted = 0
if avail >= 1 and want > 0 then
  granted = math.min(want, math.max(1, math.floor(avail / 2)))
elseif avail >= 1 and want == 0 then
  return {1, 0}
end
if granted > 0 or back > 0 then
  tat = tat + granted * emission
  if tat > now then
    redis.call('SET', KEYS[1], string.format('%d', tat), 'PX', math.ceil((tat - now) / 1000))
  else
    redis.call('DEL', KEYS[1])
  end
end
if granted > 0 or want < 0 then
  return {granted, 0}
end
return {0, tat + emission - tolerance - now}
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
