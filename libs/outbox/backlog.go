package outbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// backlogTimeout bounds one scrape's reads, so a Redis that hangs never
// holds up the metrics endpoint.
const backlogTimeout = 2 * time.Second

// ObserveBacklog exports, per shard, what the relay has yet to publish:
// pcourt_outbox_backlog (entries in the stream) and
// pcourt_outbox_oldest_entry_age_seconds (how long ago the oldest was
// appended, 0 when the stream is empty). Both are read at scrape time,
// two cheap commands per shard in one pipeline: XLEN, and XRANGE for the
// first entry, whose id is the millisecond it was appended (outbox_append
// adds with '*'). The relay deletes what it has published, so the stream
// holds exactly the backlog. Every replica reports the same streams;
// alerts take the max.
func ObserveBacklog(rdb redis.UniversalClient, sharding Sharding, mp metric.MeterProvider) error {
	if err := sharding.Validate(); err != nil {
		return err
	}
	m := mp.Meter("github.com/pcourt/pcourt/libs/outbox")
	backlog, err := m.Int64ObservableGauge("pcourt.outbox.backlog",
		metric.WithUnit("{entry}"),
		metric.WithDescription("Outbox entries not yet published to Kafka, per shard."))
	if err != nil {
		return err
	}
	age, err := m.Float64ObservableGauge("pcourt.outbox.oldest_entry_age",
		metric.WithUnit("s"),
		metric.WithDescription("Age of the oldest outbox entry not yet published, per shard; 0 when none waits."))
	if err != nil {
		return err
	}
	streams := sharding.Streams()
	tags := sharding.Tags()
	_, err = m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, backlogTimeout)
		defer cancel()
		lens := make([]*redis.IntCmd, len(streams))
		firsts := make([]*redis.XMessageSliceCmd, len(streams))
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, s := range streams {
				lens[i] = p.XLen(ctx, s)
				firsts[i] = p.XRangeN(ctx, s, "-", "+", 1)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("reading outbox backlog: %w", err)
		}
		now := time.Now()
		for i := range streams {
			attrs := metric.WithAttributes(attribute.String("outbox", sharding.Service), attribute.String("shard", tags[i]))
			o.ObserveInt64(backlog, lens[i].Val(), attrs)
			o.ObserveFloat64(age, oldestAge(firsts[i].Val(), now), attrs)
		}
		return nil
	}, backlog, age)
	return err
}

// oldestAge is how long ago the first of entries was appended, from its
// stream id's millisecond part.
func oldestAge(entries []redis.XMessage, now time.Time) float64 {
	if len(entries) == 0 {
		return 0
	}
	ms, err := entryMillis(entries[0].ID)
	if err != nil {
		return 0
	}
	return max(0, now.Sub(time.UnixMilli(ms)).Seconds())
}

func entryMillis(id string) (int64, error) {
	head, _, ok := strings.Cut(id, "-")
	if !ok {
		return 0, errors.New("stream id without a sequence")
	}
	return strconv.ParseInt(head, 10, 64)
}
