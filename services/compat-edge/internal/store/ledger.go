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
}

// Anonymous is the subject of requests without a bearer credential
// (website sessions).
const Anonymous = "anonymous"

// ledgerKey holds one subject's uses as a hash with three fields per
// route: first|<route>, last|<route> (Unix milliseconds) and
// count|<route>. One key per subject keeps each merge in one slot.
func ledgerKey(subject string) string { return "pc:edge:legacy:{" + subject + "}" }

// ledgerIndexKey lists the subjects with uses, for the notice scheduler.
const ledgerIndexKey = "pc:edge:legacy:subjects"

// mergeScript folds a batch into a subject's record: the earlier first,
// the later last, the sum of counts. Replicas flush in any order, so
// neither first nor last may simply be overwritten.
var mergeScript = redis.NewScript(`
for i = 1, #ARGV, 4 do
  local r, first, last, n = ARGV[i], tonumber(ARGV[i+1]), tonumber(ARGV[i+2]), ARGV[i+3]
  local f = tonumber(redis.call('HGET', KEYS[1], 'first|' .. r))
  if not f or first < f then redis.call('HSET', KEYS[1], 'first|' .. r, first) end
  local l = tonumber(redis.call('HGET', KEYS[1], 'last|' .. r))
  if not l or last > l then redis.call('HSET', KEYS[1], 'last|' .. r, last) end
  redis.call('HINCRBY', KEYS[1], 'count|' .. r, n)
end
return 1
`)

// AddUses merges uses into the ledger, one script per subject, pipelined.
func (s *Store) AddUses(ctx context.Context, uses []Use) error {
	if len(uses) == 0 {
		return nil
	}
	bySubject := map[string][]any{}
	for _, u := range uses {
		bySubject[u.Subject] = append(bySubject[u.Subject], u.Route, u.First.UnixMilli(), u.Last.UnixMilli(), u.Count)
	}
	// The script is loaded once, then called by its hash in the pipeline.
	if err := mergeScript.Load(ctx, s.rdb).Err(); err != nil {
		return fmt.Errorf("loading the ledger script: %w", err)
	}
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for subject, args := range bySubject {
			mergeScript.EvalSha(ctx, p, []string{ledgerKey(subject)}, args...)
			p.SAdd(ctx, ledgerIndexKey, subject)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("recording legacy use: %w", err)
	}
	return nil
}

// Uses returns a subject's uses, by route.
func (s *Store) Uses(ctx context.Context, subject string) ([]Use, error) {
	rec, err := s.rdb.HGetAll(ctx, ledgerKey(subject)).Result()
	if err != nil {
		return nil, fmt.Errorf("reading legacy use of %s: %w", subject, err)
	}
	byRoute := map[string]*Use{}
	for field, v := range rec {
		kind, route, ok := strings.Cut(field, "|")
		if !ok {
			continue
		}
		u := byRoute[route]
		if u == nil {
			u = &Use{Subject: subject, Route: route}
			byRoute[route] = u
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
