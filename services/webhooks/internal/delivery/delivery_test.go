package delivery_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func fixed(f float64) delivery.Jitter { return func() float64 { return f } }

func TestNominalScheduleMatchesTheDocumentedTable(t *testing.T) {
	s := delivery.DefaultSchedule()
	require.NoError(t, s.Validate())
	want := []time.Duration{
		30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute,
		32 * time.Minute, 64 * time.Minute, 128 * time.Minute, 256 * time.Minute, 512 * time.Minute,
		12 * time.Hour, 12 * time.Hour, 12 * time.Hour, 12 * time.Hour, 12 * time.Hour,
	}
	require.Len(t, want, s.MaxAttempts-1)
	var total time.Duration
	for i, w := range want {
		assert.Equal(t, w, s.Nominal(i+1), "wait after failed attempt %d", i+1)
		total += w
	}
	assert.Equal(t, 77*time.Hour+3*time.Minute+30*time.Second, total, "the last attempt is about three days after the first")
}

func TestNextAppliesJitterWithinTwentyPercent(t *testing.T) {
	s := delivery.DefaultSchedule()
	fail := delivery.Result{Kind: delivery.Failure, Class: delivery.ClassHTTP5xx, Status: 500}
	for _, tc := range []struct {
		jitter float64
		want   time.Duration
	}{
		{0, 51*time.Minute + 12*time.Second},        // × 0.8 (attempt 8 failed: nominal 64 min)
		{0.5, 64 * time.Minute},                     // nominal
		{0.999999, 76*time.Minute + 48*time.Second}, // just under ×1.2
	} {
		next, ok := s.Next(8, fail, t0, fixed(tc.jitter))
		require.True(t, ok)
		assert.InDelta(t, float64(tc.want), float64(next.Sub(t0)), float64(time.Second), "jitter %v", tc.jitter)
	}
	// The random source is sampled: many draws stay inside the band.
	for i := range 200 {
		next, ok := s.Next(3, fail, t0, fixed(float64(i)/200))
		require.True(t, ok)
		d := next.Sub(t0)
		assert.GreaterOrEqual(t, d, time.Duration(float64(2*time.Minute)*0.8))
		assert.LessOrEqual(t, d, time.Duration(float64(2*time.Minute)*1.2))
	}
}

func TestNextDecisions(t *testing.T) {
	s := delivery.DefaultSchedule()
	tests := []struct {
		name     string
		attempt  int
		result   delivery.Result
		wantNext bool
		wantWait time.Duration
	}{
		{"success ends the delivery", 1, delivery.Result{Kind: delivery.Success, Status: 204}, false, 0},
		{"gone ends the delivery", 1, delivery.Result{Kind: delivery.Gone, Status: 410, Class: delivery.ClassGone}, false, 0},
		{"last attempt failed: give up", 17, delivery.Result{Kind: delivery.Failure, Status: 500}, false, 0},
		{"first failure waits 30 s", 1, delivery.Result{Kind: delivery.Failure, Status: 500}, true, 30 * time.Second},
		{"timeout waits at least 60 s", 1, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassTimeout}, true, 60 * time.Second},
		{"429 waits at least 60 s", 1, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassThrottled, Status: 429}, true, 60 * time.Second},
		{"429 later in the schedule keeps the schedule", 5, delivery.Result{Kind: delivery.Failure, Status: 429}, true, 8 * time.Minute},
		{"Retry-After longer than the schedule is honoured", 1, delivery.Result{Kind: delivery.Failure, Status: 503, RetryAfter: 10 * time.Minute}, true, 10 * time.Minute},
		{"Retry-After shorter than the schedule does not shorten it", 6, delivery.Result{Kind: delivery.Failure, Status: 503, RetryAfter: time.Second}, true, 16 * time.Minute},
		{"Retry-After is clamped", 1, delivery.Result{Kind: delivery.Failure, Status: 429, RetryAfter: 48 * time.Hour}, true, 6 * time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			next, ok := s.Next(tc.attempt, tc.result, t0, delivery.NoJitter)
			require.Equal(t, tc.wantNext, ok)
			if ok {
				assert.Equal(t, tc.wantWait, next.Sub(t0))
			}
		})
	}
}

func TestScheduleValidate(t *testing.T) {
	bad := delivery.DefaultSchedule()
	bad.Jitter, bad.MaxAttempts, bad.Factor = 1, 0, 0.5
	err := bad.Validate()
	require.Error(t, err)
	for _, part := range []string{"jitter", "attempts", "factor"} {
		assert.Contains(t, err.Error(), part)
	}
}

func TestParseRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0}, {"120", 2 * time.Minute}, {" 5 ", 5 * time.Second}, {"-1", 0}, {"soon", 0},
		{t0.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{t0.Add(-time.Hour).Format(http.TimeFormat), 0},
		{t0.UTC().Add(90 * time.Second).Format("Monday, 02-Jan-06 15:04:05 GMT"), 90 * time.Second},
		{t0.UTC().Add(90 * time.Second).Format(time.ANSIC), 90 * time.Second},
		{"Mon, 02 Jan 2006 15:04:05 PST", 0},
	} {
		assert.Equal(t, tc.want, delivery.ParseRetryAfter(tc.in, t0), "%q", tc.in)
	}
}

type forbiddenErr struct{}

func (forbiddenErr) Error() string          { return "address forbidden" }
func (forbiddenErr) AddressForbidden() bool { return true }

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassify(t *testing.T) {
	urlErr := func(err error) error { return &url.Error{Op: "Post", URL: "https://partner.example/hook", Err: err} }
	tests := []struct {
		name string
		in   delivery.Outcome
		want delivery.Result
	}{
		{"200", delivery.Outcome{Status: 200}, delivery.Result{Kind: delivery.Success, Status: 200}},
		{"204", delivery.Outcome{Status: 204}, delivery.Result{Kind: delivery.Success, Status: 204}},
		{"299", delivery.Outcome{Status: 299}, delivery.Result{Kind: delivery.Success, Status: 299}},
		{"301 is a failure", delivery.Outcome{Status: 301}, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassRedirect, Status: 301}},
		{"304 is a failure", delivery.Outcome{Status: 304}, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassRedirect, Status: 304}},
		{"100 is a failure", delivery.Outcome{Status: 100}, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassHTTP4xx, Status: 100}},
		{"400", delivery.Outcome{Status: 400}, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassHTTP4xx, Status: 400}},
		{"410 disables", delivery.Outcome{Status: 410}, delivery.Result{Kind: delivery.Gone, Class: delivery.ClassGone, Status: 410}},
		{"429 with Retry-After", delivery.Outcome{Status: 429, RetryAfter: "30"}, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassThrottled, Status: 429, RetryAfter: 30 * time.Second}},
		{"503 with Retry-After", delivery.Outcome{Status: 503, RetryAfter: "7"}, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassHTTP5xx, Status: 503, RetryAfter: 7 * time.Second}},
		{"timeout", delivery.Outcome{Err: urlErr(timeoutErr{})}, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassTimeout}},
		{"deadline", delivery.Outcome{Err: urlErr(context.DeadlineExceeded)}, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassTimeout}},
		{"dns", delivery.Outcome{Err: urlErr(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "nope.example", IsNotFound: true}})}, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassDNS}},
		{"tls", delivery.Outcome{Err: urlErr(x509.UnknownAuthorityError{})}, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassTLS}},
		{"tls hostname", delivery.Outcome{Err: urlErr(x509.HostnameError{Host: "a"})}, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassTLS}},
		{"refused", delivery.Outcome{Err: urlErr(&net.OpError{Op: "dial", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}})}, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassRefused}},
		{"redirect", delivery.Outcome{Err: urlErr(fmt.Errorf("to https://x: %w", delivery.ErrRedirect))}, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassRedirect}},
		{"forbidden address", delivery.Outcome{Err: urlErr(&net.OpError{Op: "dial", Err: forbiddenErr{}})}, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassForbidden}},
		{"other", delivery.Outcome{Err: urlErr(errors.New("connection reset"))}, delivery.Result{Kind: delivery.Failure, Class: delivery.ClassNetwork}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, delivery.Classify(tc.in, t0))
		})
	}
}

func TestClassifyRealRefusedDial(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	_, err = (&http.Client{Timeout: 2 * time.Second}).Get("http://" + addr + "/")
	require.Error(t, err)
	assert.Equal(t, delivery.ClassRefused, delivery.Classify(delivery.Outcome{Err: err}, t0).Class)
}

func TestTokenBucket(t *testing.T) {
	r := delivery.Rate{PerSecond: 2, Burst: 3}
	require.NoError(t, r.Validate())
	var b delivery.Bucket
	var wait time.Duration
	for i := range 3 {
		b, wait = r.Take(b, t0)
		require.Zero(t, wait, "burst token %d", i)
	}
	b, wait = r.Take(b, t0)
	assert.Equal(t, 500*time.Millisecond, wait, "empty: one token in half a second")
	b, wait = r.Take(b, t0.Add(500*time.Millisecond))
	assert.Zero(t, wait)
	_, wait = r.Take(b, t0.Add(time.Hour))
	assert.Zero(t, wait, "refills up to the burst")
	assert.Error(t, delivery.Rate{}.Validate())
}

func TestBreaker(t *testing.T) {
	p := delivery.DefaultBreakerPolicy()
	require.NoError(t, p.Validate())
	var b delivery.Breaker
	now := t0
	for i := range 4 {
		b = p.Record(b, delivery.Failure, now)
		_, ok, _ := p.Allow(b, now)
		require.True(t, ok, "still closed after %d failures", i+1)
	}
	b = p.Record(b, delivery.Failure, now)
	require.Equal(t, delivery.Open, b.State)
	_, ok, wait := p.Allow(b, now.Add(10*time.Second))
	assert.False(t, ok)
	assert.Equal(t, 20*time.Second, wait)

	now = now.Add(30 * time.Second)
	b, ok, _ = p.Allow(b, now)
	require.True(t, ok, "a probe goes after the cooldown")
	assert.Equal(t, delivery.HalfOpen, b.State)
	_, ok, _ = p.Allow(b, now.Add(time.Second))
	assert.False(t, ok, "only one probe at a time")

	b = p.Record(b, delivery.Failure, now)
	assert.Equal(t, delivery.Open, b.State)
	assert.Equal(t, now.Add(time.Minute), b.OpenUntil, "second trip doubles the cooldown")

	now = b.OpenUntil
	b, ok, _ = p.Allow(b, now)
	require.True(t, ok)
	_, ok, _ = p.Allow(b, now.Add(p.ProbeTimeout))
	assert.True(t, ok, "a lost probe lets another go after the probe timeout")
	b = p.Record(b, delivery.Success, now)
	assert.Equal(t, delivery.Breaker{State: delivery.Closed}, b)

	for range 20 {
		b = p.Record(b, delivery.Failure, now)
	}
	assert.LessOrEqual(t, b.OpenUntil.Sub(now), p.MaxCooldown, "cooldown is capped")
}

func TestHealthDisablesAfterContinuousFailureWithHysteresis(t *testing.T) {
	p := delivery.DefaultHealthPolicy()
	require.NoError(t, p.Validate())
	fail := func(h delivery.Health, at time.Time) (delivery.Health, delivery.HealthVerdict) {
		return p.Record(h, delivery.Failure, at)
	}

	t.Run("five days of failures disable", func(t *testing.T) {
		var h delivery.Health
		var v delivery.HealthVerdict
		for i := range 12 {
			h, v = fail(h, t0.Add(time.Duration(i)*10*time.Hour))
			require.Equal(t, delivery.KeepEnabled, v, "failure %d at %dh", i+1, i*10)
		}
		_, v = fail(h, t0.Add(5*24*time.Hour))
		assert.Equal(t, delivery.DisableForFailures, v)
	})
	t.Run("old streak with few failures stays enabled", func(t *testing.T) {
		h, _ := fail(delivery.Health{}, t0)
		_, v := fail(h, t0.Add(6*24*time.Hour))
		assert.Equal(t, delivery.KeepEnabled, v)
	})
	t.Run("an occasional success does not end the streak", func(t *testing.T) {
		var h delivery.Health
		for i := range 12 {
			at := t0.Add(time.Duration(i) * 10 * time.Hour)
			h, _ = fail(h, at)
			h, _ = p.Record(h, delivery.Success, at.Add(time.Minute))
		}
		assert.Equal(t, t0, h.FailingSince)
		_, v := fail(h, t0.Add(5*24*time.Hour))
		assert.Equal(t, delivery.DisableForFailures, v)
	})
	t.Run("enough successes in a row end the streak", func(t *testing.T) {
		h, _ := fail(delivery.Health{}, t0)
		for range 3 {
			h, _ = p.Record(h, delivery.Success, t0.Add(time.Hour))
		}
		assert.False(t, h.Failing())
	})
	t.Run("410 disables at once", func(t *testing.T) {
		_, v := p.Record(delivery.Health{}, delivery.Gone, t0)
		assert.Equal(t, delivery.DisableGone, v)
	})
}

// The horizon of the default schedule: the first ten waits at the 6 h
// Retry-After clamp (each is shorter than that even at +20%), the 11th at
// 512 min +20%, the last five at 12 h +20%.
func TestHorizonOfTheDefaultSchedule(t *testing.T) {
	s := delivery.DefaultSchedule()
	want := 10*6*time.Hour + time.Duration(float64(512*time.Minute)*1.2) + 5*time.Duration(float64(12*time.Hour)*1.2)
	require.Equal(t, want, s.Horizon())
	require.Equal(t, 142*time.Hour+14*time.Minute+24*time.Second, s.Horizon())
	s.MaxAttempts = 1
	require.Zero(t, s.Horizon(), "no retries, no horizon")
}
