package delivery

import (
	"errors"
	"time"
)

// Health is an endpoint's failure streak, kept to disable an endpoint that
// has failed continuously for too long. The zero value is healthy.
//
// The streak has hysteresis: it starts at a failure and ends only after
// RecoverAfter consecutive successes, so an endpoint that answers 2xx now and
// then while mostly failing is still failing; and it disables only when the
// streak is both old enough and has enough failures, so one failure followed
// by days of silence does not disable anything.
type Health struct {
	FailingSince time.Time // first failure of the streak; zero when healthy
	Failures     int       // failures in the streak
	Successes    int       // consecutive successes inside the streak
}

// Failing reports whether a streak is open.
func (h Health) Failing() bool { return !h.FailingSince.IsZero() }

// HealthPolicy configures when an endpoint is disabled.
type HealthPolicy struct {
	DisableAfter time.Duration // streak age that disables (default 5 days)
	MinFailures  int           // and at least this many failures in it
	RecoverAfter int           // consecutive successes that end a streak
}

// DefaultHealthPolicy disables after 5 days and 10 failures; 3 successes in
// a row end a streak.
func DefaultHealthPolicy() HealthPolicy {
	return HealthPolicy{DisableAfter: 5 * 24 * time.Hour, MinFailures: 10, RecoverAfter: 3}
}

// Validate reports unusable settings.
func (p HealthPolicy) Validate() error {
	if p.DisableAfter <= 0 || p.MinFailures < 1 || p.RecoverAfter < 1 {
		return errors.New("health: disable-after positive, min failures and recover-after at least 1")
	}
	return nil
}

// HealthVerdict is what to do with the endpoint after an attempt.
type HealthVerdict string

// The verdicts.
const (
	KeepEnabled        HealthVerdict = "keep"
	DisableForFailures HealthVerdict = "disabled_after_failures"
	DisableGone        HealthVerdict = "disabled_gone"
)

// Record updates the streak with an attempt's kind at now and says whether
// the endpoint must be disabled.
func (p HealthPolicy) Record(h Health, k Kind, now time.Time) (Health, HealthVerdict) {
	switch k {
	case Gone:
		return h, DisableGone
	case Success:
		if !h.Failing() {
			return Health{}, KeepEnabled
		}
		h.Successes++
		if h.Successes >= p.RecoverAfter {
			return Health{}, KeepEnabled
		}
		return h, KeepEnabled
	}
	if !h.Failing() {
		h.FailingSince = now
	}
	h.Failures++
	h.Successes = 0
	if now.Sub(h.FailingSince) >= p.DisableAfter && h.Failures >= p.MinFailures {
		return h, DisableForFailures
	}
	return h, KeepEnabled
}
