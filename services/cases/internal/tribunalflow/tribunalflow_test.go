package tribunalflow_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/cases/internal/awardkeys"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/events"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
	"github.com/pcourt/pcourt/services/cases/internal/tribunalflow"
)

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time  { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) set(t time.Time) { c.ns.Store(t.UnixNano()) }

type world struct {
	cases       *store.Cases
	credentials *auth.Store
	scheduler   *caseflow.Scheduler
	clock       *clock
}

func newWorld(t *testing.T) *world {
	rdb := redistest.NewClient(t)
	w := &world{cases: newCases(t, rdb), credentials: auth.NewStore(rdb, auth.DefaultStoreConfig()), clock: &clock{}}
	w.clock.set(t0)
	keys, err := awardkeys.Load(context.Background(), rdb, awardkeys.Config{DevEphemeral: true}, t0)
	require.NoError(t, err)
	flow := caseflow.New(w.cases, w.clock.now)
	decision := tribunalflow.New(flow, w.cases, w.credentials, keys, w.clock.now)
	w.scheduler = caseflow.NewScheduler(w.cases, caseflow.DefaultSchedulerConfig(), slog.New(slog.NewTextHandler(io.Discard, nil)), w.clock.now, decision.Ticker())
	return w
}

func (w *world) member(t *testing.T, role auth.Role, partner string) string {
	t.Helper()
	_, cred, err := w.credentials.Mint(context.Background(), auth.MintRequest{Tenant: "t1", Environment: auth.Sandbox, Role: role, PartnerID: partner})
	require.NoError(t, err)
	var cfg []byte
	if role == auth.RoleAdjudicator {
		cfg, err = award.Canonical(award.Configuration{Provider: "rubric", Model: "pcourt-rubric", ModelVersion: "1",
			InstructionsDigest: strings.Repeat("cd", 32), OutputSchemaVersion: award.SchemaProposal, Tools: []string{}})
		require.NoError(t, err)
	}
	require.NoError(t, w.credentials.AddTribunalMember(context.Background(), cred.PublicID, cfg))
	return cred.PublicID
}

// openEvaluation opens an evaluation case: its tribunal is assigned at
// opening, before the record closes.
func (w *world) openEvaluation(t *testing.T, id string) {
	t.Helper()
	out, err := procedure.Open(procedure.Opening{
		EventID: "case-opened:" + id, CaseID: id, ExternalID: "ext-" + id, Tenant: "t1", Environment: "sandbox", PartnerID: "partner-c",
		OpenedAt: t0, Rules: procedure.Rules{Version: "pcourt-rules-2026-11", Hash: strings.Repeat("1", 64)},
		Plan:  procedure.Plan{Profile: procedure.ProfileEvaluation, AnswerRequired: false, EvidenceRounds: 1, FilingsPerSidePerStage: 1, RecordConfirmationRequired: true},
		Mode:  procedure.ModeEvaluation,
		Claim: procedure.Claim{AmountMinor: 1000, Currency: "USD"},
		Evaluation: &procedure.EvaluationDefinition{Question: "Was the API provisioned?", Criteria: []string{"logs"},
			AllowedOutcomes: []string{"provisioned", "not_provisioned"}, ReviewPolicy: "always"},
		Participants: []procedure.Participant{
			{ID: "p-claim", Side: procedure.Claimant, PartnerID: "partner-c", PrincipalID: "alice", JoinedAt: t0},
			{ID: "p-resp", Side: procedure.Respondent, PartnerID: "partner-r", PrincipalID: "acme", JoinedAt: t0},
		},
	})
	require.NoError(t, err)
	enc, err := events.EncodeAll(out.Case, out.Events)
	require.NoError(t, err)
	_, err = w.cases.Open(context.Background(), out.Case, "case-opened:"+id, enc)
	require.NoError(t, err)
}

func (w *world) load(t *testing.T, id string) procedure.Case {
	t.Helper()
	l, err := w.cases.Load(context.Background(), id)
	require.NoError(t, err)
	return l.Case
}

// With nobody eligible in the pool the assignment waits quietly (no
// event, the retry instant stored); once a member joins the pool the
// next scan after the retry assigns.
func TestAnEvaluationIsAssignedAtOpeningOnceThePoolCan(t *testing.T) {
	w := newWorld(t)
	w.openEvaluation(t, "case-eval")
	n, err := w.scheduler.RunOnce(context.Background())
	require.NoError(t, err)
	require.Zero(t, n, "no event while the pool is empty")
	c := w.load(t, "case-eval")
	require.Equal(t, tribunal.StageUnassigned, c.Tribunal.Stage)
	require.Equal(t, t0.Add(time.Minute), c.Tribunal.AssignAfter)

	adjudicator := w.member(t, auth.RoleAdjudicator, "tribunal-ai")
	reviewer := w.member(t, auth.RoleReviewer, "tribunal-rev")
	_, err = w.scheduler.RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, tribunal.StageUnassigned, w.load(t, "case-eval").Tribunal.Stage, "not before the retry")

	w.clock.set(t0.Add(time.Minute))
	n, err = w.scheduler.RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n, "tribunal_assigned")
	c = w.load(t, "case-eval")
	require.Equal(t, tribunal.StageAwaitingRecord, c.Tribunal.Stage, "the run waits for the record")
	require.Equal(t, adjudicator, c.Tribunal.Adjudicator.CredentialID)
	require.Equal(t, reviewer, c.Tribunal.Reviewer.CredentialID)
	require.Equal(t, "rubric", c.Tribunal.Adjudicator.Configuration.Provider)
}

// A member under the partner id a side acts through is never assigned:
// the conflict check (a draft names partner ids freely, so a pool member
// can share one with a side).
func TestTheConflictCheckSkipsASidesPartner(t *testing.T) {
	w := newWorld(t)
	w.openEvaluation(t, "case-conflict")
	w.member(t, auth.RoleReviewer, "partner-r")
	w.member(t, auth.RoleAdjudicator, "partner-c")
	_, err := w.scheduler.RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, tribunal.StageUnassigned, w.load(t, "case-conflict").Tribunal.Stage, "both candidates are conflicted")

	adjudicator := w.member(t, auth.RoleAdjudicator, "tribunal-ai")
	reviewer := w.member(t, auth.RoleReviewer, "tribunal-rev")
	w.clock.set(t0.Add(time.Minute))
	_, err = w.scheduler.RunOnce(context.Background())
	require.NoError(t, err)
	c := w.load(t, "case-conflict")
	require.Equal(t, adjudicator, c.Tribunal.Adjudicator.CredentialID)
	require.Equal(t, reviewer, c.Tribunal.Reviewer.CredentialID)
}

// newCases is the store of cases as the service runs it by default: 16
// shards, no durable-write confirmation.
func newCases(tb testing.TB, rdb redis.UniversalClient) *store.Cases {
	tb.Helper()
	cases, err := store.NewCases(rdb, outbox.DefaultShards, nil)
	require.NoError(tb, err)
	return cases
}
