package ratelimit_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/redistest"
)

// replicas returns n limiters sharing one real redis-server, as n replicas
// of a service do.
func replicas(tb testing.TB, n int) []*ratelimit.Limiter {
	tb.Helper()
	srv := redistest.Start(tb)
	ls := make([]*ratelimit.Limiter, n)
	for i := range ls {
		ls[i] = ratelimit.New(srv.Client(tb), "test:rl")
	}
	return ls
}

// drive runs workers goroutines on each limiter, each calling Allow until
// stop says so, and returns how many events were admitted.
func drive(t *testing.T, ls []*ratelimit.Limiter, workers int, rule ratelimit.Rule, stop func(refused bool) bool) int64 {
	t.Helper()
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for _, l := range ls {
		for range workers {
			wg.Go(func() {
				for {
					d, err := l.Allow(context.Background(), "k", rule)
					if err != nil {
						t.Error(err)
						return
					}
					if d.Allowed {
						admitted.Add(1)
					}
					if stop(!d.Allowed) {
						return
					}
				}
			})
		}
	}
	wg.Wait()
	return admitted.Load()
}

func TestReplicasSpendTheSharedBurstExactlyOnce(t *testing.T) {
	// Nothing refills during the test: the burst is all there is. Every
	// token the shared bucket gave is spent once, so the replicas together
	// admit exactly the burst, never more (a token spent twice) and never
	// fewer (an event charged twice, or a lease dropped in a refill race).
	const burst = 2000
	rule := ratelimit.Rule{Rate: 1, Period: time.Hour, Burst: burst}
	ls := replicas(t, 4)
	admitted := drive(t, ls, 8, rule, func(refused bool) bool { return refused })
	require.Equal(t, int64(burst), admitted)
}

func TestReleaseGivesUnspentTokensBack(t *testing.T) {
	ctx := context.Background()
	rule := ratelimit.Rule{Rate: 1, Period: time.Hour, Burst: 160} // batch 10
	ls := replicas(t, 2)
	d, err := ls[0].Allow(ctx, "k", rule)
	require.NoError(t, err)
	require.True(t, d.Allowed)
	// The first replica holds 9 unspent tokens; once released, the second
	// can spend the whole burst but the one event admitted.
	require.NoError(t, ls[0].Release(ctx))
	admitted := drive(t, ls[1:], 4, rule, func(refused bool) bool { return refused })
	require.Equal(t, int64(159), admitted)
}

func TestReplicasStayWithinTheDocumentedBound(t *testing.T) {
	// Three replicas, each flooding one key for a while with the bucket
	// refilling: the events admitted are within Burst + T×Rate/Period +
	// N×Batch, and not far below what the rule allows.
	const n = 3
	rule := ratelimit.Rule{Rate: 2000, Period: time.Second, Burst: 400} // batch 25
	ls := replicas(t, n)
	window := 1500 * time.Millisecond
	start := time.Now()
	deadline := start.Add(window)
	admitted := drive(t, ls, 4, rule, func(bool) bool { return time.Now().After(deadline) })
	elapsed := time.Since(start)

	allowed := float64(rule.Burst) + elapsed.Seconds()*float64(rule.Rate)
	bound := allowed + float64(n*ratelimit.Batch(rule))
	t.Logf("admitted %d in %s; rule allows %.0f, bound %.0f", admitted, elapsed, allowed, bound)
	require.LessOrEqual(t, float64(admitted), bound)
	// The floor is loose: the box is shared and slow, and a replica that was
	// refused waits out Retry-After before asking again.
	require.GreaterOrEqual(t, float64(admitted), 0.5*float64(rule.Burst)+0.5*window.Seconds()*float64(rule.Rate))
}

func TestOneReplicaLeavesTheOthersTheirShare(t *testing.T) {
	// A nearly empty shared bucket gives half of what is left, not a whole
	// batch: the second replica still gets through.
	ctx := context.Background()
	rule := ratelimit.Rule{Rate: 1, Period: time.Hour, Burst: 64} // batch 4
	ls := replicas(t, 2)
	for range 62 {
		d, err := ls[0].Allow(ctx, "k", rule)
		require.NoError(t, err)
		require.True(t, d.Allowed)
	}
	// 62 spent, 2 left in the shared bucket, ls[0] holds at most 2 more.
	d, err := ls[1].Allow(ctx, "k", rule)
	require.NoError(t, err)
	require.True(t, d.Allowed, "the other replica gets a share of the last tokens")
}

func TestRefusalIsRememberedWithAnHonestRetryAfter(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	l := ratelimit.New(rdb, "test:rl")
	rule := ratelimit.Rule{Rate: 1, Period: time.Hour, Burst: 1}
	d, err := l.Allow(ctx, "k", rule)
	require.NoError(t, err)
	require.True(t, d.Allowed)
	first, err := l.Allow(ctx, "k", rule)
	require.NoError(t, err)
	require.False(t, first.Allowed)
	// Redis gone: the remembered refusal still answers, with less to wait.
	srv.Stop()
	again, err := l.Allow(ctx, "k", rule)
	require.NoError(t, err)
	require.False(t, again.Allowed)
	require.LessOrEqual(t, again.RetryAfter, first.RetryAfter)
	require.Greater(t, again.RetryAfter, 59*time.Minute)
}

func TestRaisedBudgetsAreSpentInProcess(t *testing.T) {
	// A rule of ten million a second, as load tests raise the budgets to:
	// its batch is earned back in 26 µs, yet a lease is spent until it runs
	// out (or 100 ms pass), not refilled for every event.
	ctx := context.Background()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	var trips atomic.Int64
	rdb.AddHook(countingHook{&trips})
	l := ratelimit.New(rdb, "test:rl")
	rule := ratelimit.Rule{Rate: 10_000_000, Period: time.Second, Burst: 10_000_000}
	const events = 2560
	start := time.Now()
	for range events {
		d, err := l.Allow(ctx, "k", rule)
		require.NoError(t, err)
		require.True(t, d.Allowed)
	}
	// A round trip per batch, one more for the script's first load
	// (NOSCRIPT, then EVAL), and one per 100 ms, which may lapse a lease
	// before its last token.
	most := int64(events/ratelimit.Batch(rule)) + 1 + int64(time.Since(start)/(100*time.Millisecond)) + 1
	require.LessOrEqual(t, trips.Load(), most, "round trips for %d events", events)
}

// countingHook counts the script calls a client sends (the connection's
// own HELLO and CLIENT SETINFO are not the limiter's).
type countingHook struct{ n *atomic.Int64 }

func (h countingHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
