package delivery

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Schedule is the retry policy of one delivery. Zero fields are invalid;
// start from DefaultSchedule.
type Schedule struct {
	Base             time.Duration // wait before the first retry
	Factor           float64       // growth of the wait per retry
	MaxDelay         time.Duration // cap on one scheduled wait, before jitter
	Jitter           float64       // relative spread, 0.2 is ±20%
	MaxAttempts      int           // attempts in all, the first included
	RetryAfterMax    time.Duration // the longest Retry-After honoured
	MinAfterThrottle time.Duration // the least wait after a timeout or a 429
}

// DefaultSchedule is the schedule in the package documentation.
func DefaultSchedule() Schedule {
	return Schedule{
		Base:             30 * time.Second,
		Factor:           2,
		MaxDelay:         12 * time.Hour,
		Jitter:           0.2,
		MaxAttempts:      17,
		RetryAfterMax:    6 * time.Hour,
		MinAfterThrottle: 60 * time.Second,
	}
}

// Validate reports every unusable field.
func (s Schedule) Validate() error {
	var errs []error
	if s.Base <= 0 {
		errs = append(errs, errors.New("base delay must be positive"))
	}
	if s.Factor < 1 {
		errs = append(errs, errors.New("backoff factor must be at least 1"))
	}
	if s.MaxDelay < s.Base {
		errs = append(errs, errors.New("max delay must be at least the base delay"))
	}
	if s.Jitter < 0 || s.Jitter >= 1 {
		errs = append(errs, errors.New("jitter must be in [0, 1)"))
	}
	if s.MaxAttempts < 1 {
		errs = append(errs, errors.New("max attempts must be at least 1"))
	}
	if s.RetryAfterMax < 0 || s.MinAfterThrottle < 0 {
		errs = append(errs, errors.New("retry-after bounds must not be negative"))
	}
	return errors.Join(errs...)
}

// Nominal is the wait before attempt n+1 after n attempts have failed
// (n >= 1), without jitter.
func (s Schedule) Nominal(failed int) time.Duration {
	if failed < 1 {
		return 0
	}
	d := float64(s.Base) * math.Pow(s.Factor, float64(failed-1))
	if d >= float64(s.MaxDelay) {
		return s.MaxDelay
	}
	return time.Duration(d)
}

// Horizon is the longest a delivery's attempts can span under the
// schedule alone, from the first attempt to the last: every wait at the
// top of its jitter, or at the longest Retry-After honoured, or at the
// floor after a timeout or 429, whichever is longest.
func (s Schedule) Horizon() time.Duration {
	var total time.Duration
	for n := 1; n < s.MaxAttempts; n++ {
		wait := time.Duration(float64(s.Nominal(n)) * (1 + s.Jitter))
		total += max(wait, s.RetryAfterMax, s.MinAfterThrottle)
	}
	return total
}

// Jitter is a source of uniform numbers in [0, 1), such as rand.Float64.
type Jitter func() float64

// NoJitter returns the middle of the range, so waits are nominal.
func NoJitter() float64 { return 0.5 }

// Next decides what follows attempt number `attempt` (1-based) that ended
// with result r at now: the instant of the next attempt, or ok false when
// the delivery is over (success, gone, or out of attempts).
func (s Schedule) Next(attempt int, r Result, now time.Time, jitter Jitter) (next time.Time, ok bool) {
	if r.Kind != Failure || attempt >= s.MaxAttempts {
		return time.Time{}, false
	}
	nominal := s.Nominal(attempt)
	spread := 1 - s.Jitter + 2*s.Jitter*clampUnit(jitter())
	wait := time.Duration(float64(nominal) * spread)
	if ra := min(r.RetryAfter, s.RetryAfterMax); ra > wait {
		wait = ra
	}
	if (r.Class == ClassTimeout || r.Status == statusTooManyRequests) && wait < s.MinAfterThrottle {
		wait = s.MinAfterThrottle
	}
	return now.Add(wait), true
}

func clampUnit(f float64) float64 {
	switch {
	case f < 0 || math.IsNaN(f):
		return 0
	case f >= 1:
		return math.Nextafter(1, 0)
	}
	return f
}

// ParseRetryAfter reads a Retry-After value (RFC 9110: delay-seconds or an
// HTTP-date) as a wait from now. Missing, malformed or past values are 0.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(n) * time.Second
	}
	for _, layout := range httpDateLayouts {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			if !t.After(now) {
				return 0
			}
			return t.Sub(now)
		}
	}
	return 0
}

// httpDateLayouts are the three forms of an HTTP-date a recipient must
// accept (RFC 9110, section 5.6.7): IMF-fixdate, then the obsolete RFC 850
// and asctime forms.
var httpDateLayouts = []string{
	"Mon, 02 Jan 2006 15:04:05 GMT",
	"Monday, 02-Jan-06 15:04:05 GMT",
	"Mon Jan _2 15:04:05 2006",
}

// String renders the schedule for logs.
func (s Schedule) String() string {
	return fmt.Sprintf("base=%s factor=%g max=%s jitter=±%g%% attempts=%d", s.Base, s.Factor, s.MaxDelay, s.Jitter*100, s.MaxAttempts)
}
