package store

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Use is one subject's use of one earlier route: when it was first and
// last seen, and how often.
type Use struct {
	// Subject is a credential's public id, or Anonymous.
	Subject string
	// Route is the inventory pattern, such as /api/v2/cases/{caseId}.
	Route string
	First time.Time
	Last  time.Time
	Count int64
	// Sample is the request id of a call: on a write, the batch's latest;
	// read back, the latest call's recorded.
	Sample string
	// Hours are the batch's calls by Unix hour (written; nil on reads).
	Hours map[int64]int64
	// Last24h and Last30d are read back: the calls in the current clock
	// hour and the 23 before it, and in the current UTC day and the 29
	// before it.
	Last24h int64
	Last30d int64
	// Days are read back too: the calls of each of those 30 UTC days,
	// oldest first, a day without calls included.
	Days []DayCalls
}

// DayCalls are the calls of one UTC day.
type DayCalls struct {
	Day   time.Time // its start
	Calls int64
}

// Anonymous is the subject of requests without a bearer credential
// (website sessions).
const Anonymous = "anonymous"

// ledgerKey holds one subject's uses as a hash with three fields per
// route: first|<route>, last|<route> (Unix milliseconds) and
// count|<route>. One key per subject keeps each merge in one slot.
func ledgerKey(subject string) string { return "pc:edge:legacy:{" + subject + "}" }

// hourKey and dayKey count a subject's calls per route in one clock hour
// (kept 25 hours) and one UTC day (kept 31 days); they share the subject's
// hash tag.
func hourKey(subject string, hour int64) string {
	return "pc:edge:legacy:{" + subject + "}:h:" + strconv.FormatInt(hour, 10)
}
func dayKey(subject string, day int64) string {
	return "pc:edge:legacy:{" + subject + "}:d:" + strconv.FormatInt(day, 10)
}

// ledgerIndexKey lists the subjects with uses, for the notice scheduler.
const ledgerIndexKey = "pc:edge:legacy:subjects"

// mergeScript folds a batch into a subject's record: the earlier first,
// the later last, the sum of counts. Replicas flush in any order, so
// neither first nor last may simply be overwritten.
var mergeScript = redis.NewScript(`
for i = 1, #ARGV, 5 do
  local r, first, last, n, sample = ARGV[i], tonumber(ARGV[i+1]), tonumber(ARGV[i+2]), ARGV[i+3], ARGV[i+4]
  local f = tonumber(redis.call('HGET', KEYS[1], 'first|' .. r))
  if not f or first < f then redis.call('HSET', KEYS[1], 'first|' .. r, first) end
  local l = tonumber(redis.call('HGET', KEYS[1], 'last|' .. r))
  if not l or last >= l then
    redis.call('HSET', KEYS[1], 'last|' .. r, last)
    if sample ~= '' then redis.call('HSET', KEYS[1], 'sample|' .. r, sample) end
  end
  redis.call('HINCRBY', KEYS[1], 'count|' .. r, n)
end
return 1
`)

// AddUses merges uses into the ledger. A subject's record and its hour
// and day counts change in one transaction (MULTI/EXEC: its keys share the
// subject's hash tag, so one slot on a cluster too), so a reader sees a
// batch whole or not at all: never a route whose recent counts lag its
// record.
func (s *Store) AddUses(ctx context.Context, uses []Use) error {
	if len(uses) == 0 {
		return nil
	}
	bySubject := map[string][]any{}
	for _, u := range uses {
		bySubject[u.Subject] = append(bySubject[u.Subject], u.Route, u.First.UnixMilli(), u.Last.UnixMilli(), u.Count, u.Sample)
	}
	// The script is loaded once, then called by its hash in the pipeline.
	if err := mergeScript.Load(ctx, s.rdb).Err(); err != nil {
		return fmt.Errorf("loading the ledger script: %w", err)
	}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for subject, args := range bySubject {
			mergeScript.EvalSha(ctx, p, []string{ledgerKey(subject)}, args...)
			p.SAdd(ctx, ledgerIndexKey, subject)
		}
		for _, u := range uses {
			for hour, n := range u.Hours {
				p.HIncrBy(ctx, hourKey(u.Subject, hour), u.Route, n)
				p.Expire(ctx, hourKey(u.Subject, hour), 25*time.Hour)
				p.HIncrBy(ctx, dayKey(u.Subject, hour/24), u.Route, n)
				p.Expire(ctx, dayKey(u.Subject, hour/24), 31*24*time.Hour)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("recording legacy use: %w", err)
	}
	return nil
}

// Uses returns a subject's uses, by route, with the recent counts as of
// now.
func (s *Store) Uses(ctx context.Context, subject string) ([]Use, error) {
	return s.UsesAt(ctx, subject, time.Now())
}

// UsesAt is Uses with the recent counts as of at. The record and the
// counts are read in one transaction, the counterpart of AddUses's.
func (s *Store) UsesAt(ctx context.Context, subject string, at time.Time) ([]Use, error) {
	hour := at.Unix() / 3600
	var hours, days []*redis.MapStringStringCmd
	var record *redis.MapStringStringCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for h := hour - 23; h <= hour; h++ {
			hours = append(hours, p.HGetAll(ctx, hourKey(subject, h)))
		}
		for d := hour/24 - 29; d <= hour/24; d++ {
			days = append(days, p.HGetAll(ctx, dayKey(subject, d)))
		}
		record = p.HGetAll(ctx, ledgerKey(subject))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading legacy use of %s: %w", subject, err)
	}
	recent := func(cmds []*redis.MapStringStringCmd) map[string]int64 {
		out := map[string]int64{}
		for _, c := range cmds {
			for route, v := range c.Val() {
				n, _ := strconv.ParseInt(v, 10, 64)
				out[route] += n
			}
		}
		return out
	}
	last24h, last30d := recent(hours), recent(days)
	firstDay := hour/24 - 29
	daily := func(route string) []DayCalls {
		out := make([]DayCalls, len(days))
		for i, c := range days {
			n, _ := strconv.ParseInt(c.Val()[route], 10, 64)
			out[i] = DayCalls{Day: time.Unix((firstDay+int64(i))*86400, 0).UTC(), Calls: n}
		}
		return out
	}
	byRoute := map[string]*Use{}
	for field, v := range record.Val() {
		kind, route, ok := strings.Cut(field, "|")
		if !ok {
			continue
		}
		u := byRoute[route]
		if u == nil {
			u = &Use{Subject: subject, Route: route, Last24h: last24h[route], Last30d: last30d[route], Days: daily(route)}
			byRoute[route] = u
		}
		if kind == "sample" {
			u.Sample = v
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("legacy use of %s, %s: %w", subject, field, err)
		}
		switch kind {
		case "first":
			u.First = time.UnixMilli(n).UTC()
		case "last":
			u.Last = time.UnixMilli(n).UTC()
		case "count":
			u.Count = n
		}
	}
	out := make([]Use, 0, len(byRoute))
	for _, u := range byRoute {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Route < out[j].Route })
	return out, nil
}

// Subjects returns every subject with recorded use, sorted.
func (s *Store) Subjects(ctx context.Context) ([]string, error) {
	subjects, err := s.rdb.SMembers(ctx, ledgerIndexKey).Result()
	if err != nil {
		return nil, fmt.Errorf("listing legacy users: %w", err)
	}
	sort.Strings(subjects)
	return subjects, nil
}
