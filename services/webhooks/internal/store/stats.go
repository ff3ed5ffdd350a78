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
// summed latency and a latency histogram. A bucket lives a day and an hour,
// so the last 24 hours are always readable and nothing needs cleaning.

// StatsHours is how many hourly buckets the figures add up: the current
// hour and the 23 before it.
const StatsHours = 24

// LatencyBoundsMs are the upper bounds of the latency histogram, in
// milliseconds; a latency above the last one counts in the last bucket.
var LatencyBoundsMs = []int64{50, 100, 250, 500, 1000, 2500, 5000, 10000}

const statsTTL = (StatsHours + 1) * time.Hour

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
	hour := now.Unix() / 3600
	first := hour - StatsHours + 1
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, 0, StatsHours)
	for h := first; h <= hour; h++ {
		cmds = append(cmds, pipe.HGetAll(ctx, statsKey(scope, id, h)))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return EndpointFigures{}, fmt.Errorf("reading the health of endpoint %s: %w", id, err)
	}
	f := EndpointFigures{Since: time.Unix(first*3600, 0).UTC()}
	var totalMs int64
	hist := make(map[string]int64, len(LatencyBoundsMs))
	for _, c := range cmds {
		for k, v := range c.Val() {
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "n":
				f.Attempts += n
			case "ok":
				f.Successes += n
			case "ms":
				totalMs += n
			default:
				hist[k] += n
			}
		}
	}
	if f.Attempts == 0 {
		return f, nil
	}
	f.LatencyAvgMs = totalMs / f.Attempts
	var seen int64
	for _, b := range LatencyBoundsMs {
		seen += hist["le"+strconv.FormatInt(b, 10)]
		if seen*100 >= f.Attempts*95 {
			f.LatencyP95Ms = b
			break
		}
	}
	return f, nil
}
