// Package delivery is the pure decision core of webhook delivery: when the
// next attempt of a delivery is due (Schedule), what an attempt's outcome
// means (Classify), whether an endpoint may be called now (Bucket, Breaker)
// and when a continuously failing endpoint is disabled (Health).
//
// Nothing here does I/O or reads a clock: every decision takes the current
// instant and, where it is random, a jitter source, so that the same inputs
// give the same answer in tests and on every replica.
//
// # Retry schedule
//
// Attempt 1 is sent as soon as the event is consumed. Retry n (attempt n+1)
// waits Base·Factor^(n-1), capped at MaxDelay, then scaled by a uniform
// factor in [1-Jitter, 1+Jitter]. With the defaults (Base 30 s, Factor 2,
// MaxDelay 12 h, Jitter 0.2, MaxAttempts 17) the nominal schedule is:
//
//	attempt  wait before it  nominal time after attempt 1
//	      1  0               0
//	      2  30 s            30 s
//	      3  1 min           1 min 30 s
//	      4  2 min           3 min 30 s
//	      5  4 min           7 min 30 s
//	      6  8 min           15 min 30 s
//	      7  16 min          31 min 30 s
//	      8  32 min          1 h 03 min
//	      9  1 h 04 min      2 h 07 min
//	     10  2 h 08 min      4 h 15 min
//	     11  4 h 16 min      8 h 31 min
//	     12  8 h 32 min      17 h 03 min
//	     13  12 h            29 h 03 min
//	     14  12 h            41 h 03 min
//	     15  12 h            53 h 03 min
//	     16  12 h            65 h 03 min
//	     17  12 h            77 h 03 min (about 3.2 days; then failed)
//
// A Retry-After (seconds or HTTP-date) on any failed response is honoured
// when it asks for a longer wait than the schedule, clamped to
// RetryAfterMax; after a timeout or a 429 the wait is at least
// MinAfterThrottle (60 s). Retry-After never shortens the schedule.
package delivery
