package store

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// The case list (GET /api/disputes): each partner's cases, newest first.
//
// Like the export notifications, the list spans every case, so each shard
// keeps its own index of its cases, written by the open and save scripts
// in the step that changes the case, so a case is listed from the moment
// it exists and for every partner that comes to hold it (a respondent's
// partner at joining, a tribunal member's at assignment):
//
//	case-index   sorted set, every score 0, ordered by member:
//	             <tenant>␟<environment>␟<partner>␟<inverted opened ms>␟<case id>
//
// The members of a case never change once written (its opening instant is
// fixed), so writing them again on every save is idempotent. A partner is
// never removed: whether a listed case is still the caller's to see is
// decided at read time by the same check that guards the case's own
// routes.
//
// A page reads at most limit+1 members per shard after its cursor and
// merges them. Filters on the opening date are ranges of the index; the
// status filter reads each candidate's status field (one HMGET) and skips
// the others, reading at most ScanLimit candidates per page: a page may
// hold fewer cases than asked, and its cursor goes on after the last
// candidate read.

// ScanLimit bounds the candidates one page of the case list reads.
const ScanLimit = 1000

// CaseQuery selects a partner's cases.
type CaseQuery struct {
	Partner procedure.Partner
	// Status keeps the cases with this status ("" keeps all).
	Status procedure.Status
	// OpenedAfter and OpenedBefore keep the cases opened at or after, and
	// strictly before, these instants (zero: no bound).
	OpenedAfter, OpenedBefore time.Time
	// Cursor is the nextCursor of the previous page ("" for the first).
	Cursor string
	Limit  int
}

// CaseRef is a listed case.
type CaseRef struct {
	CaseID   string
	OpenedAt time.Time
}

// caseIndexMembers are the index members of c: one per partner that holds
// it (its filing partner, each participant's partner, each tribunal
// member's) and one per account that takes part (AccountHolder), joined
// with sepEntry for the scripts.
func caseIndexMembers(c procedure.Case) string {
	partners := []string{c.PartnerID}
	for _, p := range c.Participants {
		partners = append(partners, p.PartnerID)
		if p.AccountID != "" {
			partners = append(partners, AccountHolder(p.AccountID))
		}
	}
	partners = append(partners, memberPartner(c, true), memberPartner(c, false))
	slices.Sort(partners)
	partners = slices.Compact(partners)
	inv := invertedMillis(c.OpenedAt)
	var out []string
	for _, p := range partners {
		if p == "" {
			continue
		}
		out = append(out, partnerKey(procedure.Partner{Tenant: c.Tenant, Environment: c.Environment, PartnerID: p})+inv+sepKey+c.ID)
	}
	return strings.Join(out, sepEntry)
}

func memberPartner(c procedure.Case, adjudicator bool) string {
	m := c.Tribunal.Reviewer
	if adjudicator {
		m = c.Tribunal.Adjudicator
	}
	if m == nil {
		return ""
	}
	return m.PartnerID
}

// Cases returns up to q.Limit of the partner's cases matching q, newest
// first, and the cursor of the next page ("" when none is left).
func (s *Cases) Cases(ctx context.Context, q CaseQuery) ([]CaseRef, string, error) {
	pk := partnerKey(q.Partner)
	from, to := "["+pk, "["+pk+"\xff"
	if !q.OpenedBefore.IsZero() {
		// Newer cases sort first; every member of the bound's own
		// millisecond sorts before "<bound>␟\xff", so starting after it
		// keeps only the cases opened strictly before.
		from = "(" + pk + invertedMillis(q.OpenedBefore) + sepKey + "\xff"
	}
	if !q.OpenedAfter.IsZero() {
		to = "[" + pk + invertedMillis(q.OpenedAfter) + sepKey + "\xff"
	}
	if q.Cursor != "" {
		tail, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		if err != nil || !validCaseTail(string(tail)) {
			return nil, "", ErrBadCursor
		}
		if after := "(" + pk + string(tail); after[1:] > from[1:] {
			from = after
		}
	}
	var out []CaseRef
	scanned, last := 0, ""
	for {
		tails, more, err := s.caseTails(ctx, pk, from, to, min(q.Limit-len(out), ScanLimit-scanned))
		if err != nil {
			return nil, "", err
		}
		for _, tail := range tails {
			scanned++
			last = tail
			ref, err := caseRef(tail)
			if err != nil {
				return nil, "", err
			}
			if q.Status != "" {
				status, err := s.rdb.HGet(ctx, s.keysFor(ref.CaseID).caseKey, "status").Result()
				if err != nil && err != redis.Nil {
					return nil, "", fmt.Errorf("reading the status of case %s: %w", ref.CaseID, err)
				}
				if procedure.Status(status) != q.Status {
					continue
				}
			}
			out = append(out, ref)
		}
		if !more {
			return out, "", nil
		}
		if len(out) == q.Limit || scanned >= ScanLimit {
			return out, base64.RawURLEncoding.EncodeToString([]byte(last)), nil
		}
		from = "(" + pk + last
	}
}

// caseTails returns the first n members of the partner's index between
// from and to over every shard, without the partner prefix, in order, and
// whether more follow.
func (s *Cases) caseTails(ctx context.Context, pk, from, to string, n int) ([]string, bool, error) {
	var tails []string
	for _, tag := range s.Tags() {
		members, err := s.rdb.ZRangeByLex(ctx, shardKeys(tag).caseIndex, &redis.ZRangeBy{Min: from, Max: to, Count: int64(n + 1)}).Result()
		if err != nil {
			return nil, false, fmt.Errorf("listing cases: %w", err)
		}
		for _, m := range members {
			tails = append(tails, strings.TrimPrefix(m, pk))
		}
	}
	slices.Sort(tails)
	if len(tails) > n {
		return tails[:n], true, nil
	}
	return tails, false, nil
}

func invertedMillis(t time.Time) string { return fmt.Sprintf("%013d", invertBase-t.UnixMilli()) }

// caseRef reads a member's tail: inverted opening ms, separator, case id.
func caseRef(tail string) (CaseRef, error) {
	if !validCaseTail(tail) {
		return CaseRef{}, fmt.Errorf("case index: malformed member %q", tail)
	}
	var inv int64
	for _, d := range tail[:13] {
		inv = inv*10 + int64(d-'0')
	}
	return CaseRef{CaseID: tail[14:], OpenedAt: time.UnixMilli(invertBase - inv).UTC()}, nil
}

func validCaseTail(tail string) bool {
	if len(tail) < 15 || tail[13:14] != sepKey || strings.Contains(tail[14:], sepKey) {
		return false
	}
	for _, d := range tail[:13] {
		if d < '0' || d > '9' {
			return false
		}
	}
	return true
}

// AccountHolder is the index's holder name for an account that takes part
// in cases, where a partner's is its partner id: "@" is not of the
// alphabet of partner ids, so no partner's cases are an account's.
func AccountHolder(accountID string) string { return "@" + accountID }

// IndexExisting adds to the case index the cases stored before it
// existed, and the accounts' entries to the cases stored before accounts
// were indexed: once per shard, marked done by the shard's
// case-index-built-2 key (case-index-built marked the first pass), so a later start reads nothing. It reads every case hash of the
// shard (SCAN, on each primary of a cluster) and writes the same members
// the save script would; writing one twice changes nothing, so replicas
// starting together need no lock.
func (s *Cases) IndexExisting(ctx context.Context) error {
	for _, tag := range s.Tags() {
		done := "pc:cases:" + tag + ":case-index-built-2"
		n, err := s.rdb.Exists(ctx, done).Result()
		if err != nil {
			return fmt.Errorf("indexing cases: %w", err)
		}
		if n == 1 {
			continue
		}
		ids, err := s.caseIDs(ctx, "pc:cases:"+tag+":case:*")
		if err != nil {
			return fmt.Errorf("indexing cases: %w", err)
		}
		for _, id := range ids {
			l, err := s.Load(ctx, id)
			if err != nil {
				return fmt.Errorf("indexing cases: %w", err)
			}
			for m := range strings.SplitSeq(caseIndexMembers(l.Case), sepEntry) {
				if m == "" {
					continue
				}
				if err := s.rdb.ZAdd(ctx, shardKeys(tag).caseIndex, redis.Z{Member: m}).Err(); err != nil {
					return fmt.Errorf("indexing case %s: %w", id, err)
				}
			}
		}
		if err := s.rdb.Set(ctx, done, time.Now().UTC().Format(time.RFC3339), 0).Err(); err != nil {
			return fmt.Errorf("indexing cases: %w", err)
		}
	}
	return nil
}

// caseIDs scans for the case hashes matching pattern, on every primary of
// a cluster, and returns their ids: the keys with nothing after the id
// (a case's docket, documents and sessions have a suffix).
func (s *Cases) caseIDs(ctx context.Context, pattern string) ([]string, error) {
	var mu sync.Mutex
	var ids []string
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			key := iter.Val()
			_, id, _ := strings.Cut(key, ":case:")
			if id != "" && !strings.Contains(id, ":") {
				mu.Lock() // ForEachMaster visits the nodes concurrently
				ids = append(ids, id)
				mu.Unlock()
			}
		}
		return iter.Err()
	}
	if cluster, ok := s.rdb.(*redis.ClusterClient); ok {
		return ids, cluster.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return scan(ctx, node) })
	}
	return ids, scan(ctx, s.rdb)
}
