package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/redistest"
)

func TestAllowHonoursBurstThenRefuses(t *testing.T) {
	ctx := context.Background()
	l := ratelimit.New(redistest.NewClient(t), "test:rl")
	// One event per hour after the burst: nothing refills during the test.
	rule := ratelimit.Rule{Rate: 1, Period: time.Hour, Burst: 3}
	for i := range 3 {
		d, err := l.Allow(ctx, "cred_a", rule)
		require.NoError(t, err)
		require.True(t, d.Allowed, "event %d is within the burst", i)
	}
	d, err := l.Allow(ctx, "cred_a", rule)
	require.NoError(t, err)
	require.False(t, d.Allowed)
	require.Greater(t, d.RetryAfter, 50*time.Minute)
	require.LessOrEqual(t, d.RetryAfter, time.Hour)
	require.Equal(t, int(d.RetryAfter/time.Second)+1, d.RetryAfterSeconds())

	// Another key has its own budget.
	d, err = l.Allow(ctx, "cred_b", rule)
	require.NoError(t, err)
	require.True(t, d.Allowed)
}

func TestPeekDoesNotCount(t *testing.T) {
	ctx := context.Background()
	l := ratelimit.New(redistest.NewClient(t), "test:rl")
	rule := ratelimit.Rule{Rate: 2, Period: time.Hour, Burst: 2}
	for range 10 {
		d, err := l.Peek(ctx, "addr", rule)
		require.NoError(t, err)
		require.True(t, d.Allowed)
	}
	for range 2 {
		d, err := l.Allow(ctx, "addr", rule)
		require.NoError(t, err)
		require.True(t, d.Allowed)
	}
	d, err := l.Peek(ctx, "addr", rule)
	require.NoError(t, err)
	require.False(t, d.Allowed)
}

func TestRefillsAtTheRate(t *testing.T) {
	ctx := context.Background()
	l := ratelimit.New(redistest.NewClient(t), "test:rl")
	rule := ratelimit.Rule{Rate: 20, Period: time.Second, Burst: 1} // one per 50 ms
	d, err := l.Allow(ctx, "k", rule)
	require.NoError(t, err)
	require.True(t, d.Allowed)
	d, err = l.Allow(ctx, "k", rule)
	require.NoError(t, err)
	require.False(t, d.Allowed)
	require.LessOrEqual(t, d.RetryAfter, 50*time.Millisecond)
	require.Eventually(t, func() bool {
		d, err := l.Allow(ctx, "k", rule)
		return err == nil && d.Allowed
	}, 5*time.Second, 10*time.Millisecond)
}

func TestOffNeverLimitsAndNeedsNoRedis(t *testing.T) {
	l := ratelimit.New(nil, "test:rl")
	for range 1000 {
		d, err := l.Allow(context.Background(), "k", ratelimit.Off)
		require.NoError(t, err)
		require.True(t, d.Allowed)
	}
}

func TestRuleValidate(t *testing.T) {
	require.NoError(t, ratelimit.Off.Validate())
	require.NoError(t, ratelimit.Rule{Rate: 50, Period: time.Second, Burst: 100}.Validate())
	require.Error(t, ratelimit.Rule{Rate: 50, Burst: 100}.Validate())
	require.Error(t, ratelimit.Rule{Rate: 50, Period: time.Second}.Validate())
}
