package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
)

// A partner's deliveries by outcome, hour by hour: each delivery is
// counted in the clock hour it was created, under the status it has now.
// Its creation adds one to its status; each change of status (scheduled to
// delivered, failed or cancelled) moves the one to the new status. Both
// are written by the Lua step that writes the delivery's record, so a
// count is never lost or doubled: an hour's figures are exactly what
// GET /deliveries?since=&until=&status= lists for that hour.
//
// The counts live beside the records, in the delivery's shard ({d:<n>}),
// one hash per partner, shard and UTC day, with a field per hour and
// status ("<unix hour>.<status>"), kept HistoryHours past the day's end so
// a 7-day window is always whole. A read sums the shards: 16 shards over
// a 7-day window are 128 small hashes in one pipeline.

func outcomesKey(n int, s endpoints.Scope, day int64) string {
	return prefix + shardTag(n) + ":outcomes:" + partnerTag(s)[3:27] + ":" + strconv.FormatInt(day, 10)
}

// outcomeSlot is where a delivery created at created is counted: its
// hash, the prefix of its fields, and the instant (ms) the hash expires.
// The expiry is absolute, so a count written after it (a delivery that
// outlived its day's figures) is deleted at once instead of starting a
// stray hash.
func outcomeSlot(n int, s endpoints.Scope, created time.Time) (key, field string, expireAtMs int64) {
	hour := created.Unix() / 3600
	day := hour / 24
	expire := time.Unix((day+1)*24*3600, 0).Add((HistoryHours + 1) * time.Hour)
	return outcomesKey(n, s, day), strconv.FormatInt(hour, 10) + ".", expire.UnixMilli()
}

// OutcomeCounts counts deliveries by the status each has now.
type OutcomeCounts struct {
	Scheduled int64 // an attempt is due or in flight: pending or retrying
	Delivered int64
	Failed    int64
	Cancelled int64
}

// Total is every delivery counted.
func (h OutcomeCounts) Total() int64 { return h.Scheduled + h.Delivered + h.Failed + h.Cancelled }

func (h *OutcomeCounts) add(status string, n int64) {
	switch status {
	case StatusScheduled:
		h.Scheduled += n
	case StatusDelivered:
		h.Delivered += n
	case StatusFailed:
		h.Failed += n
	case StatusCancelled:
		h.Cancelled += n
	}
}

// OutcomeHour is a partner's deliveries created in one clock hour, by the
// status each has now.
type OutcomeHour struct {
	Start time.Time
	OutcomeCounts
}

// Outcomes returns the last hours clock hours (at most HistoryHours) of
// scope's deliveries up to now, oldest first, an hour without deliveries
// included. Deliveries created before the counts existed are not in them.
func (s *Deliveries) Outcomes(ctx context.Context, scope endpoints.Scope, now time.Time, hours int) ([]OutcomeHour, error) {
	if hours < 1 || hours > HistoryHours {
		return nil, fmt.Errorf("reading delivery outcomes: %d hours is not within 1 to %d", hours, HistoryHours)
	}
	last := now.Unix() / 3600
	first := last - int64(hours) + 1
	pipe := s.rdb.Pipeline()
	var cmds []*redis.MapStringStringCmd
	for n := range s.cfg.Shards {
		for day := first / 24; day <= last/24; day++ {
			cmds = append(cmds, pipe.HGetAll(ctx, outcomesKey(n, scope, day)))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("reading delivery outcomes: %w", err)
	}
	out := make([]OutcomeHour, hours)
	for i := range out {
		out[i].Start = time.Unix((first+int64(i))*3600, 0).UTC()
	}
	for _, c := range cmds {
		for field, v := range c.Val() {
			h, status, ok := strings.Cut(field, ".")
			hour, err := strconv.ParseInt(h, 10, 64)
			if !ok || err != nil || hour < first || hour > last {
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("reading delivery outcomes: field %s is %q", field, v)
			}
			out[hour-first].add(status, n)
		}
	}
	return out, nil
}

// A recovery's replays by outcome: each replay a recovery makes is counted
// under its status in its recovery's counts, by the same Lua steps that
// count it in its partner's hours (createDeliveryScript, completeScript),
// so "how many of the replays were delivered" is exact while they are
// sent. The counts live in each replay's shard, one small hash per shard
// and recovery, and expire with the deliveries; a read sums the shards.

func replaysKey(n int, recoveryID string) string {
	return prefix + shardTag(n) + ":replays:" + recoveryID
}

// RecoveryReplays counts the replays the recovery recoveryID made, by the
// status each has now. Replays made before the counts existed are not in
// them.
func (s *Deliveries) RecoveryReplays(ctx context.Context, recoveryID string) (OutcomeCounts, error) {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, s.cfg.Shards)
	for n := range s.cfg.Shards {
		cmds[n] = pipe.HGetAll(ctx, replaysKey(n, recoveryID))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return OutcomeCounts{}, fmt.Errorf("reading the replays of recovery %s: %w", recoveryID, err)
	}
	var out OutcomeCounts
	for _, c := range cmds {
		for status, v := range c.Val() {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return OutcomeCounts{}, fmt.Errorf("reading the replays of recovery %s: field %s is %q", recoveryID, status, v)
			}
			out.add(status, n)
		}
	}
	return out, nil
}
