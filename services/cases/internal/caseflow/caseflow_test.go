package caseflow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/events"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

const (
	day    = 24 * time.Hour
	digest = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
)

// clock is a settable clock, safe for concurrent use.
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock { c := &clock{}; c.set(t); return c }
func (c *clock) now() time.Time   { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) set(t time.Time)  { c.ns.Store(t.UnixNano()) }

func opening(id string, respondentJoined bool) procedure.Opening {
	resp := procedure.Participant{ID: "p-resp", Side: procedure.Respondent, PartnerID: "partner-r", PrincipalID: "acme"}
	if respondentJoined {
		resp.JoinedAt = t0
	}
	return procedure.Opening{
		EventID: "case-opened:" + id, CaseID: id, ExternalID: "ext-" + id, Tenant: "t1", Environment: "sandbox", PartnerID: "partner-c",
		OpenedAt: t0, Rules: procedure.Rules{Version: "pcourt-rules-2026-11", Hash: digest},
		Plan: procedure.Plan{Profile: procedure.ProfileStandard, AnswerRequired: true, EvidenceRounds: 2, RebuttalRounds: 1, FilingsPerSidePerStage: 2, RecordConfirmationRequired: true},
		Participants: []procedure.Participant{
			{ID: "p-claim", Side: procedure.Claimant, PrincipalID: "alice", JoinedAt: t0}, resp,
		},
		Capabilities: map[string]string{procedure.CapabilityRespondentInvite: digest},
	}
}

func openCase(t testing.TB, cases *store.Cases, id string, respondentJoined bool) procedure.Case {
	t.Helper()
	out, err := procedure.Open(opening(id, respondentJoined))
	require.NoError(t, err)
	enc, err := events.EncodeAll(out.Case, out.Events)
	require.NoError(t, err)
	applied, err := cases.Open(context.Background(), out.Case, "case-opened:"+id, enc)
	require.NoError(t, err)
	require.True(t, applied)
	return out.Case
}

type docketEntry struct {
	EventID  string `json:"eventId"`
	Sequence int64  `json:"sequence"`
	Type     string `json:"type"`
}

func docket(t testing.TB, cases *store.Cases, id string) []docketEntry {
	t.Helper()
	raw, err := cases.Docket(context.Background(), id, 1, 10_000)
	require.NoError(t, err)
	out := make([]docketEntry, len(raw))
	for i, r := range raw {
		require.NoError(t, json.Unmarshal(r, &out[i]))
	}
	return out
}

// outboxEvents reads every envelope in the outbox streams (no relay runs).
func outboxEvents(t testing.TB, rdb redis.UniversalClient) []docketEntry {
	t.Helper()
	var out []docketEntry
	for _, s := range testSharding.Streams() {
		msgs, err := rdb.XRange(context.Background(), s, "-", "+").Result()
		require.NoError(t, err)
		for _, m := range msgs {
			var env events.Envelope
			require.NoError(t, json.Unmarshal([]byte(m.Values["payload"].(string)), &env))
			var e docketEntry
			require.NoError(t, json.Unmarshal(env.Event, &e))
			require.Equal(t, e.EventID, m.Values["id"], "the outbox entry's id is the body's")
			out = append(out, e)
		}
	}
	return out
}

func TestLoadReturnsTheSavedCase(t *testing.T) {
	rdb := redistest.NewClient(t)
	cases := newCases(t, rdb)
	c := openCase(t, cases, "case-rt", true)
	l, err := cases.Load(context.Background(), "case-rt")
	require.NoError(t, err)
	require.Empty(t, cmp.Diff(c, l.Case))
	require.Equal(t, int64(1), l.Version)
	require.Equal(t, int64(2), l.Sequence)

	svc := caseflow.New(cases, func() time.Time { return t0.Add(time.Hour) })
	res, err := svc.Act(context.Background(), "case-rt", procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: "p-resp", Digest: digest})
	require.NoError(t, err)
	require.Equal(t, int64(3), res.FirstSequence)
	res, err = svc.Act(context.Background(), "case-rt", procedure.Act{Kind: procedure.ActRequestTermination, ParticipantID: "p-resp", TerminationID: "term-1"})
	require.NoError(t, err)
	l, err = cases.Load(context.Background(), "case-rt")
	require.NoError(t, err)
	require.Empty(t, cmp.Diff(res.Case, l.Case), "every field survives the record")

	_, err = cases.Load(context.Background(), "nope")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = svc.Act(context.Background(), "case-rt", procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: "p-resp", Digest: digest})
	require.ErrorIs(t, err, procedure.ErrStageClosed)
	require.Len(t, docket(t, cases, "case-rt"), 5, "a refusal records nothing")
}

func TestOpeningTwiceRecordsOnce(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		cases := newCases(t, rdb)
		c := openCase(t, cases, "case-dup", false)
		out, err := procedure.Open(opening("case-dup", false))
		require.NoError(t, err)
		enc, err := events.EncodeAll(out.Case, out.Events)
		require.NoError(t, err)
		applied, err := cases.Open(context.Background(), out.Case, "case-opened:case-dup", enc)
		require.NoError(t, err)
		require.False(t, applied)
		applied, err = cases.Open(context.Background(), out.Case, "case-opened:other-event", enc)
		require.NoError(t, err)
		require.False(t, applied, "an existing case is never replaced")
		require.Len(t, docket(t, cases, c.ID), 1)
		require.Len(t, outboxEvents(t, rdb), 1)
	})
}

// Acts racing on one case each get their own sequences, with no gap and no
// repeat, and each accepted act has exactly one event on the docket and in
// the outbox.
func TestConcurrentActsGetGapFreeSequences(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		cases := newCases(t, rdb)
		openCase(t, cases, "case-race", true) // opened, stage_opened: sequences 1, 2
		svc := caseflow.New(cases, func() time.Time { return t0.Add(time.Hour) })

		const acts = 32
		var wg sync.WaitGroup
		firsts := make(chan int64, acts)
		for i := range acts {
			who := "p-claim"
			if i%2 == 1 {
				who = "p-resp"
			}
			wg.Go(func() {
				res, err := svc.Act(context.Background(), "case-race", procedure.Act{Kind: procedure.ActPostMessage, ParticipantID: who, MessageID: fmt.Sprintf("m-%d", i), Digest: digest})
				if err != nil {
					t.Errorf("act %d: %v", i, err)
					return
				}
				firsts <- res.FirstSequence
			})
		}
		wg.Wait()
		close(firsts)

		seen := map[int64]bool{}
		for s := range firsts {
			require.False(t, seen[s], "sequence %d given twice", s)
			seen[s] = true
		}
		require.Len(t, seen, acts)

		d := docket(t, cases, "case-race")
		require.Len(t, d, 2+acts)
		ids := map[string]bool{}
		for i, e := range d {
			require.Equal(t, int64(i+1), e.Sequence, "gap-free from 1")
			require.False(t, ids[e.EventID])
			ids[e.EventID] = true
			if i >= 2 {
				require.Equal(t, "message_posted", e.Type)
				require.True(t, seen[e.Sequence], "every message event belongs to an accepted act")
			}
		}
		require.ElementsMatch(t, d, outboxEvents(t, rdb), "the outbox holds exactly the docket")
		l, err := cases.Load(context.Background(), "case-race")
		require.NoError(t, err)
		require.Len(t, l.Case.Messages, acts)
	})
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Two scheduler replicas over one Redis, restarted, with an injected clock:
// each deadline event is recorded once.
func TestSchedulerEmitsEachDeadlineEventOnce(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	cases := newCases(t, rdb)
	const n = 12
	for i := range n {
		openCase(t, cases, fmt.Sprintf("case-%02d", i), i%2 == 0)
	}
	clk := newClock(t0)
	cfg := caseflow.DefaultSchedulerConfig()
	replica := func() *caseflow.Scheduler {
		return caseflow.NewScheduler(newCases(t, srv.Client(t)), cfg, discard(), clk.now)
	}
	a, b := replica(), replica()

	runBoth := func() int {
		var wg sync.WaitGroup
		var total atomic.Int64
		for _, s := range []*caseflow.Scheduler{a, b} {
			wg.Go(func() {
				got, err := s.RunOnce(context.Background())
				if err != nil {
					t.Errorf("scheduler: %v", err)
				}
				total.Add(int64(got))
			})
		}
		wg.Wait()
		return int(total.Load())
	}

	require.Equal(t, 0, runBoth(), "nothing is due at the opening")
	clk.set(t0.Add(12 * day))
	require.Equal(t, n, runBoth(), "one deadline_approaching per case")
	require.Equal(t, 0, runBoth())
	a = replica() // a restart: the schedule lives in Redis
	clk.set(t0.Add(14 * day))
	require.Equal(t, 2*n, runBoth(), "deadline_missed and stage_opened per case")
	require.Equal(t, 0, runBoth())

	for i := range n {
		id := fmt.Sprintf("case-%02d", i)
		d := docket(t, cases, id)
		var got []string
		for _, e := range d {
			got = append(got, e.Type)
		}
		opening := []string{"opened"}
		if i%2 == 0 {
			opening = append(opening, "stage_opened")
		}
		require.Equal(t, append(opening, "deadline_approaching", "deadline_missed", "stage_opened"), got, id)
		l, err := cases.Load(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, procedure.StatusEvidence, l.Case.Status())
		require.Equal(t, t0.Add(24*day), l.Case.Stage.DeadlineAt)
	}
	require.Len(t, outboxEvents(t, rdb), n+n/2+3*n)
}

// A scheduler that claimed a case but did not finish leaves it due again
// once the lease ends; a case acted on meanwhile is rescheduled by the act.
func TestSchedulerClaimIsALease(t *testing.T) {
	rdb := redistest.NewClient(t)
	cases := newCases(t, rdb)
	openCase(t, cases, "case-lease", true)
	tag := testSharding.Tag("case-lease")
	due, err := cases.ClaimDue(context.Background(), tag, t0.Add(12*day), time.Minute, 10)
	require.NoError(t, err)
	require.Len(t, due, 1, "the answer warning is due")
	require.Equal(t, "case-lease", due[0].CaseID)
	require.False(t, due[0].At.After(t0.Add(12*day)), "it fell due before the scan")
	due, err = cases.ClaimDue(context.Background(), tag, t0.Add(12*day), time.Minute, 10)
	require.NoError(t, err)
	require.Empty(t, due, "claimed: hidden from other replicas")

	s := caseflow.NewScheduler(cases, caseflow.DefaultSchedulerConfig(), discard(), func() time.Time { return t0.Add(12*day + 2*time.Minute) })
	got, err := s.RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, got, "the lease ran out and the warning is recorded")
}

// Open is the case-opened use case: the procedure's opening stored with
// its events once, whatever the number of deliveries of the fact; an
// opening the procedure refuses stores nothing.
func TestOpenAppliesAFactOnce(t *testing.T) {
	rdb := redistest.NewClient(t)
	cases := newCases(t, rdb)
	svc := caseflow.New(cases, nil)
	for i, wantApplied := range []bool{true, false} {
		c, applied, err := svc.Open(context.Background(), opening("case-open", false))
		require.NoError(t, err, "delivery %d", i)
		require.Equal(t, wantApplied, applied, "delivery %d", i)
		require.Equal(t, "case-open", c.ID)
	}
	require.Equal(t, []docketEntry{{EventID: "case-event:case-open:1", Sequence: 1, Type: "opened"}}, docket(t, cases, "case-open"))
	require.Len(t, outboxEvents(t, rdb), 1)

	bad := opening("case-bad", false)
	bad.Rules.Version = "no-such-rules"
	_, applied, err := svc.Open(context.Background(), bad)
	require.ErrorIs(t, err, procedure.ErrInvalidOpening)
	require.False(t, applied)
	_, err = cases.Load(context.Background(), "case-bad")
	require.ErrorIs(t, err, store.ErrNotFound)
}

// Change is the seam a subdomain's decision plugs into: whatever it
// decides is stored in the case's one step with its events on the docket
// and the outbox; a refusal stores nothing; ErrNothingToStore stores
// nothing and is no error.
func TestChangeStoresAnyDecisionInTheCasesOneStep(t *testing.T) {
	rdb := redistest.NewClient(t)
	cases := newCases(t, rdb)
	openCase(t, cases, "case-seam", true)
	svc := caseflow.New(cases, nil)
	at := t0.Add(time.Hour)

	refusal := &procedure.RefusalError{Code: procedure.CodeStageClosed, Detail: "not now"}
	_, err := svc.Change(context.Background(), "case-seam", func(procedure.Case) (procedure.Outcome, error) { return procedure.Outcome{}, refusal })
	require.ErrorIs(t, err, procedure.ErrStageClosed)
	res, err := svc.Change(context.Background(), "case-seam", func(c procedure.Case) (procedure.Outcome, error) {
		return procedure.Outcome{Case: c}, caseflow.ErrNothingToStore
	})
	require.NoError(t, err)
	require.Empty(t, res.Events)
	require.Len(t, docket(t, cases, "case-seam"), 2, "neither stored anything")

	res, err = svc.Change(context.Background(), "case-seam", func(c procedure.Case) (procedure.Outcome, error) {
		return procedure.Decide(c, procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: "p-resp", Digest: digest}, at)
	}, store.Document{Digest: digest, Content: []byte("the answer")})
	require.NoError(t, err)
	require.Equal(t, int64(3), res.FirstSequence)
	got := docket(t, cases, "case-seam")
	require.Equal(t, "answer_filed", got[2].Type)
	require.Equal(t, got, outboxEvents(t, rdb), "the docket and the outbox hold the same events")
	content, ok, err := cases.Document(context.Background(), "case-seam", digest)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "the answer", string(content))
}

// newCases is the store of cases as the service runs it by default: 16
// shards, no durable-write confirmation.
func newCases(tb testing.TB, rdb redis.UniversalClient) *store.Cases {
	tb.Helper()
	cases, err := store.NewCases(rdb, outbox.DefaultShards, nil)
	require.NoError(tb, err)
	return cases
}

// testSharding is the layout newCases gives the store.
var testSharding = outbox.Sharding{Service: "cases", Count: outbox.DefaultShards}

// With durable writes on (production), a case's opening and every act on
// it are on the replica when they are answered; with the replica away the
// act still stands and is answered, its shortfall logged (docs/redis.md).
func TestOpeningAndActsAreOnTheReplicaWhenAnswered(t *testing.T) {
	ctx := context.Background()
	primary := redistest.Start(t)
	replica := redistest.StartReplica(t, primary)
	var log bytes.Buffer
	durable := redisclient.NewDurable(redisclient.DurableConfig{Mode: redisclient.DurableWait, Replicas: 1, Timeout: 200 * time.Millisecond},
		slog.New(slog.NewJSONHandler(&log, nil)))
	cases, err := store.NewCases(primary.Client(t), outbox.DefaultShards, durable)
	require.NoError(t, err)
	onReplica := newCases(t, replica.Client(t))

	c := openCase(t, cases, "case-durable", true)
	l, err := onReplica.Load(ctx, "case-durable")
	require.NoError(t, err, "the replica has the opened case")
	require.Empty(t, cmp.Diff(c, l.Case))

	svc := caseflow.New(cases, func() time.Time { return t0.Add(time.Hour) })
	_, err = svc.Act(ctx, "case-durable", procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: "p-resp", Digest: digest})
	require.NoError(t, err)
	l, err = onReplica.Load(ctx, "case-durable")
	require.NoError(t, err)
	require.Equal(t, int64(2), l.Version, "the replica has the act")
	require.Empty(t, log.String())

	replica.Stop()
	_, err = svc.Act(ctx, "case-durable", procedure.Act{Kind: procedure.ActRequestTermination, ParticipantID: "p-resp", TerminationID: "term-1"})
	require.NoError(t, err, "the act happened; a missing replica is logged, not refused")
	l, err = cases.Load(ctx, "case-durable")
	require.NoError(t, err)
	require.Equal(t, int64(3), l.Version)
	require.Contains(t, log.String(), `"msg":"durable write short"`)
}

// The shard count is the store's, passed in (CASES_SHARDS): with 64 the
// case's keys, its outbox entries and the scheduler's sweep all use the
// 64 tags, on a standalone server and a cluster alike; a count outside
// 1..1024 is refused.
func TestTheStoreUsesTheShardCountItIsGiven(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		cases, err := store.NewCases(rdb, 64, nil)
		require.NoError(t, err)
		require.Len(t, cases.Tags(), 64)
		require.Equal(t, "{cases.63}", cases.Tags()[63])

		var ids []string
		for i := range 40 {
			id := fmt.Sprintf("case-64-%d", i)
			openCase(t, cases, id, true)
			ids = append(ids, id)
		}
		var onWide int
		for _, id := range ids {
			tag := cases.Sharding().Tag(id)
			n, err := rdb.Exists(ctx, "pc:cases:"+tag+":case:"+id).Result()
			require.NoError(t, err)
			require.Equal(t, int64(1), n, "case %s under %s", id, tag)
			var shard int
			_, err = fmt.Sscanf(tag, "{cases.%d}", &shard)
			require.NoError(t, err)
			if shard >= 16 {
				onWide++
			}
		}
		require.Positive(t, onWide, "some cases live on the shards 16 to 63")
		var entries int64
		for _, s := range cases.Sharding().Streams() {
			n, err := rdb.XLen(ctx, s).Result()
			require.NoError(t, err)
			entries += n
		}
		require.Equal(t, int64(80), entries, "two opening events a case, in the 64 shards' outboxes")
	})
	for _, n := range []int{0, 1025} {
		_, err := store.NewCases(redistest.NewClient(t), n, nil)
		require.Error(t, err, "%d shards", n)
	}
}
