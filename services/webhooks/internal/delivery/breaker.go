package delivery

import (
	"errors"
	"time"
)

// Bucket is a token bucket's state for one endpoint. The zero value is a
// full bucket.
type Bucket struct {
	Tokens float64
	At     time.Time // when Tokens was last computed; zero means full
}

// Rate is a token bucket's configuration: PerSecond tokens refill each
// second up to Burst.
type Rate struct {
	PerSecond float64
	Burst     float64
}

// Validate reports an unusable rate.
func (r Rate) Validate() error {
	if r.PerSecond <= 0 || r.Burst < 1 {
		return errors.New("rate must be positive and burst at least 1")
	}
	return nil
}

// Take spends one token at now. It returns the new state and, when no token
// is left, how long until one is.
func (r Rate) Take(b Bucket, now time.Time) (Bucket, time.Duration) {
	tokens := r.Burst
	if !b.At.IsZero() {
		tokens = min(r.Burst, b.Tokens+now.Sub(b.At).Seconds()*r.PerSecond)
	}
	if tokens >= 1 {
		return Bucket{Tokens: tokens - 1, At: now}, 0
	}
	wait := time.Duration((1 - tokens) / r.PerSecond * float64(time.Second))
	return Bucket{Tokens: tokens, At: now}, max(wait, time.Millisecond)
}

// BreakerState is where an endpoint's circuit breaker stands.
type BreakerState string

// The breaker states.
const (
	Closed   BreakerState = "closed"    // attempts flow
	Open     BreakerState = "open"      // attempts wait until OpenUntil
	HalfOpen BreakerState = "half_open" // one probe is in flight
)

// Breaker is one endpoint's circuit breaker state. The zero value is closed.
type Breaker struct {
	State     BreakerState
	Failures  int       // consecutive failures while closed
	Trips     int       // consecutive openings without a success between
	OpenUntil time.Time // while open: when a probe may go
	ProbeAt   time.Time // while half open: when the probe was let through
}

// BreakerPolicy configures the breakers.
type BreakerPolicy struct {
	FailureThreshold int           // consecutive failures that open the breaker
	Cooldown         time.Duration // the first open period; doubles per trip
	MaxCooldown      time.Duration
	ProbeTimeout     time.Duration // a probe with no result by then is lost; another may go
}

// DefaultBreakerPolicy opens after 5 consecutive failures for 30 s, doubling
// up to 10 min.
func DefaultBreakerPolicy() BreakerPolicy {
	return BreakerPolicy{FailureThreshold: 5, Cooldown: 30 * time.Second, MaxCooldown: 10 * time.Minute, ProbeTimeout: 30 * time.Second}
}

// Validate reports unusable settings.
func (p BreakerPolicy) Validate() error {
	if p.FailureThreshold < 1 || p.Cooldown <= 0 || p.MaxCooldown < p.Cooldown || p.ProbeTimeout <= 0 {
		return errors.New("breaker: threshold at least 1, cooldowns positive and ordered, probe timeout positive")
	}
	return nil
}

// Allow decides whether an attempt may go at now. When it may not, wait is
// how long until asking again makes sense.
func (p BreakerPolicy) Allow(b Breaker, now time.Time) (Breaker, bool, time.Duration) {
	switch b.State {
	case Open:
		if now.Before(b.OpenUntil) {
			return b, false, b.OpenUntil.Sub(now)
		}
		b.State, b.ProbeAt = HalfOpen, now
		return b, true, 0
	case HalfOpen:
		if now.Sub(b.ProbeAt) < p.ProbeTimeout {
			return b, false, p.ProbeTimeout - now.Sub(b.ProbeAt)
		}
		b.ProbeAt = now
		return b, true, 0
	}
	return b, true, 0
}

// Record updates the breaker with an attempt's kind at now. Gone counts as a
// failure here; disabling the endpoint is Health's and the caller's part.
func (p BreakerPolicy) Record(b Breaker, k Kind, now time.Time) Breaker {
	if k == Success {
		return Breaker{State: Closed}
	}
	switch b.State {
	case HalfOpen, Open:
		return p.trip(b, now)
	}
	b.State = Closed
	b.Failures++
	if b.Failures >= p.FailureThreshold {
		return p.trip(b, now)
	}
	return b
}

func (p BreakerPolicy) trip(b Breaker, now time.Time) Breaker {
	cool := p.Cooldown
	for i := 0; i < b.Trips && cool < p.MaxCooldown; i++ {
		cool *= 2
	}
	cool = min(cool, p.MaxCooldown)
	return Breaker{State: Open, Trips: b.Trips + 1, OpenUntil: now.Add(cool)}
}
