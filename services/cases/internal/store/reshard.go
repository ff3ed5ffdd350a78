package store

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/reshard"
)

// Reshard moves the cases stored under from shards to to shards
// (libs/reshard; docs/redis.md, "Resharding"). The service must not run:
// Reshard refuses while an outbox stream holds an entry.
//
// A case is its hash case:<id> (the primary key: the case exists while it
// does) and every key under case:<id>: (docket, documents, spent login
// tokens, respondent sessions). Every shard-wide key names its case in
// each member, so each member moves to its case's new shard; the case
// list's "built" marker is deleted and IndexExisting checks the list
// again at the next start (every member is already there: it adds none).
func Reshard(ctx context.Context, rdb redis.UniversalClient, from, to int, opts reshard.Options) (reshard.Report, error) {
	return reshard.Run(ctx, rdb, Layout(), from, to, opts)
}

// Layout is the key layout of cases for libs/reshard.
func Layout() reshard.Layout {
	return reshard.Layout{
		Service: "cases",
		Entity:  caseOfKey,
		ShardKeys: []reshard.ShardKey{
			// case id scored by its next deadline
			{Name: "deadlines", Kind: reshard.SortedSet, Owner: func(m string) (string, bool) { return m, m != "" }},
			// the case-opened event ids applied: "case-opened:<case id>"
			{Name: "opened-applied", Kind: reshard.Set, Owner: caseOfOpenedEvent},
			// <partner key><inverted ms>␟<event id>
			{Name: "export-index", Kind: reshard.SortedSet, Owner: caseOfLastEventID},
			// <partner key><event id>
			{Name: "export-notes", Kind: reshard.Hash, Owner: caseOfLastEventID},
			{Name: "export-receipts", Kind: reshard.Hash, Owner: caseOfLastEventID},
			// <partner key><inverted ms>␟<case id>
			{Name: "case-index", Kind: reshard.SortedSet, Owner: caseOfLastField},
		},
		// The archiver's sweep lease and cursor (archive.go) start afresh:
		// the next sweep of each new shard begins at its index's head.
		Markers: []string{"case-index-built", "case-index-built-2", "archive-sweep", "archive-sweep-cursor"},
	}
}

// caseOfKey names the case a key (after its tag) belongs to: case:<id> is
// its hash, case:<id>:<anything> the rest of it. Case ids hold no colon.
func caseOfKey(rest string) (string, bool, bool) {
	after, ok := strings.CutPrefix(rest, "case:")
	if !ok || after == "" {
		return "", false, false
	}
	id, _, sub := strings.Cut(after, ":")
	return id, !sub, id != ""
}

func caseOfOpenedEvent(member string) (string, bool) {
	id, ok := strings.CutPrefix(member, "case-opened:")
	return id, ok && id != "" && !strings.Contains(id, ":")
}

func caseOfLastField(member string) (string, bool) {
	i := strings.LastIndex(member, sepKey)
	if i < 0 || i == len(member)-1 {
		return "", false
	}
	return member[i+1:], true
}

// caseOfLastEventID names the case of the event id that ends member.
func caseOfLastEventID(member string) (string, bool) {
	i := strings.LastIndex(member, sepKey)
	if i < 0 {
		return "", false
	}
	rest, ok := strings.CutPrefix(member[i+1:], "case-event:")
	if !ok {
		return "", false
	}
	j := strings.LastIndexByte(rest, ':')
	if j <= 0 {
		return "", false
	}
	return rest[:j], true
}
