package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/reshard"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/events"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

const digest = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

const caseCount = 40

func opening(id string) procedure.Opening {
	return procedure.Opening{
		EventID: "case-opened:" + id, CaseID: id, ExternalID: "ext-" + id, Tenant: "t1", Environment: "sandbox", PartnerID: "partner-c",
		OpenedAt: t0, Rules: procedure.Rules{Version: "pcourt-rules-2026-11", Hash: digest},
		Plan: procedure.Plan{Profile: procedure.ProfileStandard, AnswerRequired: true, EvidenceRounds: 2, RebuttalRounds: 1, FilingsPerSidePerStage: 2, RecordConfirmationRequired: true},
		Participants: []procedure.Participant{
			{ID: "p-claim", Side: procedure.Claimant, PrincipalID: "alice", JoinedAt: t0},
			{ID: "p-resp", Side: procedure.Respondent, PartnerID: "partner-r", PrincipalID: "acme", JoinedAt: t0},
		},
		Capabilities: map[string]string{procedure.CapabilityRespondentInvite: digest},
	}
}

func newStore(t *testing.T, rdb redis.UniversalClient, shards int) *store.Cases {
	t.Helper()
	cases, err := store.NewCases(rdb, shards, nil)
	require.NoError(t, err)
	return cases
}

// writeCases opens caseCount cases through the service's use-case layer
// and acts on every other one: an answer with its document, so a case has
// its hash, docket and documents, and a deadline.
func writeCases(t *testing.T, cases *store.Cases) {
	t.Helper()
	ctx := context.Background()
	svc := caseflow.New(cases, func() time.Time { return t0.Add(time.Hour) })
	for i := range caseCount {
		id := fmt.Sprintf("case-%03d", i)
		_, applied, err := svc.Open(ctx, opening(id))
		require.NoError(t, err)
		require.True(t, applied)
		if i%2 == 0 {
			_, err := svc.Act(ctx, id, procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: "p-resp", Digest: digest},
				store.Document{Digest: digest, Content: []byte("the answer of " + id)})
			require.NoError(t, err)
		}
		if i%5 == 0 {
			exportReady(t, cases, id, i%10 == 0)
		}
	}
}

var partnerC = procedure.Partner{Tenant: "t1", Environment: "sandbox", PartnerID: "partner-c"}

// exportReady records an evidence_export_ready event for the claimant's
// partner, which indexes its notification, and its receipt if asked.
func exportReady(t *testing.T, cases *store.Cases, id string, receipt bool) {
	t.Helper()
	ctx := context.Background()
	l, err := cases.Load(ctx, id)
	require.NoError(t, err)
	ev, err := events.Encode(l.Case, procedure.Event{Type: procedure.EventEvidenceExportReady, OccurredAt: t0.Add(2 * time.Hour),
		Recipients: []procedure.Partner{partnerC}, ExportSide: procedure.Claimant})
	require.NoError(t, err)
	require.NoError(t, cases.Save(ctx, l.Version, l.Case, []store.Event{ev}))
	if receipt {
		_, first, err := cases.RecordExportReceipt(ctx, partnerC, store.EventID(id, l.Sequence+1), t0.Add(3*time.Hour))
		require.NoError(t, err)
		require.True(t, first)
	}
}

// exports is the claimant partner's export notifications, every page.
func exports(t *testing.T, cases *store.Cases) []store.ExportNotification {
	t.Helper()
	var out []store.ExportNotification
	cursor := ""
	for {
		page, next, err := cases.ExportNotifications(context.Background(), partnerC, cursor, 3)
		require.NoError(t, err)
		out = append(out, page...)
		if next == "" {
			require.Len(t, out, caseCount/5)
			return out
		}
		cursor = next
	}
}

// drain empties every outbox stream, as the relay does once Kafka has the
// entries.
func drain(t *testing.T, rdb redis.UniversalClient, shards int) {
	t.Helper()
	for _, s := range (outbox.Sharding{Service: "cases", Count: shards}).Streams() {
		require.NoError(t, rdb.XTrimMaxLen(context.Background(), s, 0).Err())
	}
}

// caseView is everything the store answers about a case.
type caseView struct {
	Loaded   store.Loaded
	Docket   []string
	Document string
}

func readAll(t *testing.T, cases *store.Cases) map[string]caseView {
	t.Helper()
	out := readSome(t, cases)
	require.Len(t, out, caseCount)
	return out
}

// readSome reads the cases the store finds.
func readSome(t *testing.T, cases *store.Cases) map[string]caseView {
	t.Helper()
	ctx := context.Background()
	out := map[string]caseView{}
	for i := range caseCount {
		id := fmt.Sprintf("case-%03d", i)
		l, err := cases.Load(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		require.NoError(t, err, id)
		raw, err := cases.Docket(ctx, id, 1, 1000)
		require.NoError(t, err)
		v := caseView{Loaded: l}
		for _, r := range raw {
			v.Docket = append(v.Docket, string(r))
		}
		doc, ok, err := cases.Document(ctx, id, digest)
		require.NoError(t, err)
		require.Equal(t, i%2 == 0, ok, "%s has its answer's document", id)
		v.Document = string(doc)
		out[id] = v
	}
	return out
}

// listed is the case list of both partners, every page.
func listed(t *testing.T, cases *store.Cases) []store.CaseRef {
	t.Helper()
	var out []store.CaseRef
	for _, p := range []string{"partner-c", "partner-r"} {
		cursor := ""
		for {
			page, next, err := cases.Cases(context.Background(), store.CaseQuery{Partner: procedure.Partner{Tenant: "t1", Environment: "sandbox", PartnerID: p}, Cursor: cursor, Limit: 7})
			require.NoError(t, err)
			out = append(out, page...)
			if next == "" {
				return append(out, store.CaseRef{CaseID: "end of " + p})
			}
			cursor = next
		}
	}
	return out
}

// snapshot is every key of cases with its type and content.
func snapshot(t *testing.T, rdb *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, "pc:cases:*").Result()
	require.NoError(t, err)
	out := map[string]string{}
	for _, k := range keys {
		typ, err := rdb.Type(ctx, k).Result()
		require.NoError(t, err)
		var v any
		switch typ {
		case "string":
			v, err = rdb.Get(ctx, k).Result()
		case "hash":
			v, err = rdb.HGetAll(ctx, k).Result()
		case "list":
			v, err = rdb.LRange(ctx, k, 0, -1).Result()
		case "set":
			var m []string
			m, err = rdb.SMembers(ctx, k).Result()
			slices.Sort(m)
			v = m
		case "zset":
			v, err = rdb.ZRangeWithScores(ctx, k, 0, -1).Result()
		case "stream":
			v, err = rdb.XLen(ctx, k).Result()
		}
		require.NoError(t, err)
		out[k] = fmt.Sprintf("%s %v", typ, v)
	}
	return out
}

// misplaced lists the keys of a case under another tag than count gives it.
func misplaced(t *testing.T, rdb *redis.Client, count int) []string {
	t.Helper()
	sharding := outbox.Sharding{Service: "cases", Count: count}
	keys, err := rdb.Keys(context.Background(), "pc:cases:*:case:*").Result()
	require.NoError(t, err)
	var out []string
	for _, k := range keys {
		tag, rest, _ := strings.Cut(strings.TrimPrefix(k, "pc:cases:"), ":case:")
		id, _, _ := strings.Cut(rest, ":")
		if sharding.Tag(id) != tag {
			out = append(out, k)
		}
	}
	return out
}

func TestReshardRefusesWhileAnOutboxHoldsEntries(t *testing.T) {
	rdb := redistest.NewClient(t)
	writeCases(t, newStore(t, rdb, 16))
	before := snapshot(t, rdb)

	_, err := store.Reshard(context.Background(), rdb, 16, 64, reshard.Options{})
	require.ErrorIs(t, err, reshard.ErrOutboxNotEmpty)
	require.Contains(t, err.Error(), "stop the service's writers")
	require.Equal(t, before, snapshot(t, rdb), "nothing moved")
}

func TestReshardMovesEveryCaseToTheNewCountAndBack(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	at16 := newStore(t, rdb, 16)
	writeCases(t, at16)
	drain(t, rdb, 16)
	want, wantList, wantExports := readAll(t, at16), listed(t, at16), exports(t, at16)
	require.NotNil(t, wantExports[0].Receipt)
	before := snapshot(t, rdb)

	var log bytes.Buffer
	dry, err := store.Reshard(ctx, rdb, 16, 64, reshard.Options{DryRun: true, Log: &log})
	require.NoError(t, err)
	require.Equal(t, before, snapshot(t, rdb), "a dry run changes nothing")
	require.Equal(t, caseCount, dry.Entities)
	require.Positive(t, dry.EntitiesMoved)
	require.Less(t, dry.EntitiesMoved, caseCount, "a case whose tag is the same under both counts stays")
	require.Contains(t, log.String(), "would move")

	rep, err := store.Reshard(ctx, rdb, 16, 64, reshard.Options{})
	require.NoError(t, err)
	require.True(t, rep.Complete)
	require.Equal(t, dry.EntitiesMoved, rep.EntitiesMoved, "the dry run said what moves")
	require.Equal(t, dry.MembersMoved, rep.MembersMoved)
	require.Zero(t, rep.Unowned)
	require.Empty(t, misplaced(t, rdb, 64))

	at64 := newStore(t, rdb, 64)
	require.Empty(t, cmp.Diff(want, readAll(t, at64)), "every case reads back equal with 64 shards")
	require.NoError(t, at64.IndexExisting(ctx))
	require.Equal(t, wantList, listed(t, at64), "the case list is the same")
	require.Equal(t, wantExports, exports(t, at64), "the export notifications and their receipts are the same")
	scheduled := 0
	for _, tag := range at64.Tags() {
		ids, err := rdb.ZRange(ctx, "pc:cases:"+tag+":deadlines", 0, -1).Result()
		require.NoError(t, err)
		for _, id := range ids {
			require.Equal(t, tag, (outbox.Sharding{Service: "cases", Count: 64}).Tag(id), "%s's deadline is in its new shard", id)
		}
		scheduled += len(ids)
	}
	require.Equal(t, caseCount, scheduled, "every case's deadline moved")

	// Back to 16: every key as it was before the first move.
	_, err = store.Reshard(ctx, rdb, 64, 16, reshard.Options{})
	require.NoError(t, err)
	require.Empty(t, misplaced(t, rdb, 16))
	require.Equal(t, before, snapshot(t, rdb))
	require.Empty(t, cmp.Diff(want, readAll(t, at16)), "every case reads back equal with 16 shards again")
	require.Equal(t, wantList, listed(t, at16))
	require.Equal(t, wantExports, exports(t, at16))
}

// A run stopped after some cases (its limit, or a crash), and a crash in
// the middle of a case, leave every case readable, and a rerun finishes.
func TestAnInterruptedReshardFinishesWhenRunAgain(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	at16 := newStore(t, rdb, 16)
	writeCases(t, at16)
	drain(t, rdb, 16)
	want := readAll(t, at16)
	to64 := outbox.Sharding{Service: "cases", Count: 64}

	rep, err := store.Reshard(ctx, rdb, 16, 64, reshard.Options{Limit: 5})
	require.NoError(t, err)
	require.False(t, rep.Complete)
	require.Equal(t, 5, rep.EntitiesMoved)

	// A crash between copying a case and deleting its old keys: the case
	// is under both tags.
	var torn string
	for i := range caseCount {
		id := fmt.Sprintf("case-%03d", i)
		old := (outbox.Sharding{Service: "cases", Count: 16}).Tag(id)
		if n, _ := rdb.Exists(ctx, "pc:cases:"+old+":case:"+id).Result(); n == 1 && to64.Tag(id) != old && i%2 == 0 {
			torn = id
			for _, suffix := range []string{"", ":docket", ":docs"} {
				dump, err := rdb.Dump(ctx, "pc:cases:"+old+":case:"+id+suffix).Result()
				require.NoError(t, err)
				require.NoError(t, rdb.RestoreReplace(ctx, "pc:cases:"+to64.Tag(id)+":case:"+id+suffix, 0, dump).Err())
			}
			// and a crash in the middle of moving its deadline: in both shards
			score, err := rdb.ZScore(ctx, "pc:cases:"+old+":deadlines", id).Result()
			require.NoError(t, err)
			require.NoError(t, rdb.ZAdd(ctx, "pc:cases:"+to64.Tag(id)+":deadlines", redis.Z{Score: score, Member: id}).Err())
			break
		}
	}
	require.NotEmpty(t, torn)
	// Every case reads whole under one count or the other: the five moved
	// with 64 shards, every other (the torn one among them) with 16.
	at64 := newStore(t, rdb, 64)
	from16, from64 := readSome(t, at16), readSome(t, at64)
	require.Len(t, from16, caseCount-5, "only the five moved are gone from their old tags")
	for id, v := range want {
		got, ok := from16[id]
		if !ok {
			got = from64[id]
		}
		require.Empty(t, cmp.Diff(v, got), id)
	}

	rep, err = store.Reshard(ctx, rdb, 16, 64, reshard.Options{})
	require.NoError(t, err)
	require.True(t, rep.Complete)
	require.Equal(t, caseCount, rep.Entities, "the torn case counts once")
	require.Empty(t, misplaced(t, rdb, 64))
	require.Empty(t, cmp.Diff(want, readAll(t, newStore(t, rdb, 64))), "every case reads back equal with 64 shards")
	for _, tag := range (outbox.Sharding{Service: "cases", Count: 16}).Tags() {
		ids, err := rdb.ZRange(ctx, "pc:cases:"+tag+":deadlines", 0, -1).Result()
		require.NoError(t, err)
		require.NotContains(t, ids, torn, "the torn case's deadline left its old shard")
	}

	again, err := store.Reshard(ctx, rdb, 16, 64, reshard.Options{})
	require.NoError(t, err)
	require.Zero(t, again.EntitiesMoved+again.MembersMoved, "a finished move has nothing left to do")
}

// On a Redis Cluster a case's old and new tags are in different slots,
// mostly on different primaries.
func TestReshardMovesCasesOnACluster(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.StartCluster(t).Client(t)
	at16 := newStore(t, rdb, 16)
	writeCases(t, at16)
	drain(t, rdb, 16)
	want, wantExports := readAll(t, at16), exports(t, at16)

	rep, err := store.Reshard(ctx, rdb, 16, 64, reshard.Options{Limit: 7})
	require.NoError(t, err)
	require.False(t, rep.Complete)
	rep, err = store.Reshard(ctx, rdb, 16, 64, reshard.Options{})
	require.NoError(t, err)
	require.True(t, rep.Complete)
	at64 := newStore(t, rdb, 64)
	require.Empty(t, cmp.Diff(want, readAll(t, at64)))
	require.Equal(t, wantExports, exports(t, at64))
}
