package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
)

// Attempt statistics of an endpoint, for its health figures: one Redis hash
// per endpoint and clock hour with the attempts, the 2xx among them, the
// summed latency and a latency histogram. A bucket lives a week and an
// hour, so the last 7 days are always readable hour by hour (the
// console's charts) and nothing needs cleaning.

// StatsHours is how many hourly buckets the figures add up: the current
// hour and the 23 before it.
const StatsHours = 24

// HistoryHours is how many hourly buckets are kept, and the longest window
// EndpointHours reads: 7 days.
const HistoryHours = 7 * 24

// LatencyBoundsMs are the upper bounds of the latency histogram, in
// milliseconds; a latency above the last one counts in the last bucket.
var LatencyBoundsMs = []int64{50, 100, 250, 500, 1000, 2500, 5000, 10000}

const statsTTL = (HistoryHours + 1) * time.Hour

func statsKey(s endpoints.Scope, id string, hour int64) string {
	return prefix + partnerTag(s) + ":health:" + id + ":" + strconv.FormatInt(hour, 10)
}

func latencyField(ms int64) string {
	for _, b := range LatencyBoundsMs {
		if ms <= b {
			return "le" + strconv.FormatInt(b, 10)
		}
	}
	return "le" + strconv.FormatInt(LatencyBoundsMs[len(LatencyBoundsMs)-1], 10)
}

// queueStats queues, on pipe, the count of one recorded attempt of d in its
// endpoint's hourly bucket.
func (s *Deliveries) queueStats(ctx context.Context, pipe redis.Pipeliner, d Delivery, a Attempt) {
	key := statsKey(d.Scope(), d.EndpointID, a.StartedAt.Unix()/3600)
	pipe.HIncrBy(ctx, key, "n", 1)
	if a.Outcome == "success" {
		pipe.HIncrBy(ctx, key, "ok", 1)
	}
	pipe.HIncrBy(ctx, key, "ms", a.DurationMs)
	pipe.HIncrBy(ctx, key, latencyField(a.DurationMs), 1)
	pipe.PExpire(ctx, key, statsTTL)
}

// EndpointFigures are an endpoint's attempts over the last StatsHours
// clock hours.
type EndpointFigures struct {
	Since     time.Time // the start of the oldest hour counted
	Attempts  int64
	Successes int64
	// LatencyAvgMs is the mean duration of the attempts; LatencyP95Ms the
	// histogram bound under which 95 % of them finished (0 without attempts).
	LatencyAvgMs int64
	LatencyP95Ms int64
}

// EndpointFigures adds up the hourly buckets of endpoint id of scope up to
// now.
func (s *Deliveries) EndpointFigures(ctx context.Context, scope endpoints.Scope, id string, now time.Time) (EndpointFigures, error) {
	buckets, first, err := s.buckets(ctx, scope, id, now, StatsHours)
	if err != nil {
		return EndpointFigures{}, err
	}
	var all bucket
	for _, b := range buckets {
		all.add(b)
	}
	f := EndpointFigures{Since: first, Attempts: all.attempts, Successes: all.successes}
	if all.attempts > 0 {
		f.LatencyAvgMs = all.totalMs / all.attempts
		f.LatencyP95Ms = all.quantileMs(95)
	}
	return f, nil
}

// HourFigures are an endpoint's attempts in one clock hour.
type HourFigures struct {
	Start     time.Time
	Attempts  int64
	Successes int64
	// LatencyP50Ms and LatencyP95Ms are the histogram bounds under which
	// half and 95 % of the hour's attempts finished (0 without attempts).
	LatencyP50Ms int64
	LatencyP95Ms int64
}

// EndpointHours returns the last hours clock hours (at most HistoryHours)
// of endpoint id of scope up to now, oldest first, an hour without
// attempts included.
func (s *Deliveries) EndpointHours(ctx context.Context, scope endpoints.Scope, id string, now time.Time, hours int) ([]HourFigures, error) {
	if hours < 1 || hours > HistoryHours {
		return nil, fmt.Errorf("reading the hours of endpoint %s: %d hours is not within 1 to %d", id, hours, HistoryHours)
	}
	buckets, first, err := s.buckets(ctx, scope, id, now, hours)
	if err != nil {
		return nil, err
	}
	out := make([]HourFigures, len(buckets))
	for i, b := range buckets {
		out[i] = HourFigures{Start: first.Add(time.Duration(i) * time.Hour), Attempts: b.attempts, Successes: b.successes}
		if b.attempts > 0 {
			out[i].LatencyP50Ms, out[i].LatencyP95Ms = b.quantileMs(50), b.quantileMs(95)
		}
	}
	return out, nil
}

// bucket is one clock hour's hash, read.
type bucket struct {
	attempts, successes, totalMs int64
	hist                         map[string]int64 // by latencyField
}

func (b *bucket) add(o bucket) {
	b.attempts += o.attempts
	b.successes += o.successes
	b.totalMs += o.totalMs
	if b.hist == nil {
		b.hist = make(map[string]int64, len(LatencyBoundsMs))
	}
	for k, n := range o.hist {
		b.hist[k] += n
	}
}

// quantileMs is the histogram bound under which pct % of the attempts
// finished.
func (b bucket) quantileMs(pct int64) int64 {
	var seen int64
	for _, bound := range LatencyBoundsMs {
		seen += b.hist["le"+strconv.FormatInt(bound, 10)]
		if seen*100 >= b.attempts*pct {
			return bound
		}
	}
	return LatencyBoundsMs[len(LatencyBoundsMs)-1]
}

// buckets reads the hours clock hours of endpoint id up to now's, in one
// pipeline, oldest first, with the start of the first.
func (s *Deliveries) buckets(ctx context.Context, scope endpoints.Scope, id string, now time.Time, hours int) ([]bucket, time.Time, error) {
	hour := now.Unix() / 3600
	first := hour - int64(hours) + 1
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, 0, hours)
	for h := first; h <= hour; h++ {
		cmds = append(cmds, pipe.HGetAll(ctx, statsKey(scope, id, h)))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, time.Time{}, fmt.Errorf("reading the health of endpoint %s: %w", id, err)
	}
	out := make([]bucket, len(cmds))
	for i, c := range cmds {
		b := bucket{hist: make(map[string]int64, len(LatencyBoundsMs))}
		for k, v := range c.Val() {
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "n":
				b.attempts = n
			case "ok":
				b.successes = n
			case "ms":
				b.totalMs = n
			default:
				b.hist[k] = n
			}
		}
		out[i] = b
	}
	return out, time.Unix(first*3600, 0).UTC(), nil
}
