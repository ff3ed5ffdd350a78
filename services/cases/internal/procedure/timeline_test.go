package procedure_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/settlement"
)

// entry is a stage of a timeline as the test spells it.
type entry struct {
	Kind                     procedure.StageKind
	Round                    int
	State                    procedure.TimelineState
	Opened, Deadline, Closed time.Time
	IfJoined                 bool
}

func timeline(c procedure.Case) []entry {
	var out []entry
	for _, s := range c.Timeline() {
		out = append(out, entry{s.Kind, s.Round, s.State, s.OpenedAt, s.DeadlineAt, s.ClosedAt, s.IfJoined})
	}
	return out
}

// opens collects, from events, the deadline each stage's entry carried:
// the case's own deadlines as its partners were told them.
func opens(evs []procedure.Event) []time.Time {
	var out []time.Time
	for _, e := range evs {
		switch e.Type {
		case procedure.EventOpened, procedure.EventStageOpened, procedure.EventRecordConfirmationRequested:
			out = append(out, e.DeadlineAt)
		}
	}
	return out
}

// A case's timeline walks the standard plan: the stages it left with the
// deadlines they had and when they closed, the one open with its deadline,
// and the rest projected window after window from that deadline (the
// answer only if the respondent joins). Each stage's deadline is the one
// its entry event carried.
func TestTheTimelineIsTheCasesStagesAndDeadlines(t *testing.T) {
	const (
		p, o, c = procedure.TimelinePast, procedure.TimelineOpen, procedure.TimelineToCome
		ev, rb  = procedure.StageEvidence, procedure.StageRebuttal
	)
	none := time.Time{}
	out, err := procedure.Open(opening(standardPlan(), false))
	require.NoError(t, err)
	cs, told := out.Case, opens(out.Events)
	join := t0.Add(14 * day)
	require.Empty(t, cmp.Diff([]entry{
		{procedure.StageRespondentJoining, 0, o, t0, join, none, false},
		{procedure.StageAnswer, 0, c, join, join.Add(14 * day), none, true},
		{ev, 1, c, join.Add(14 * day), join.Add(24 * day), none, false},
		{ev, 2, c, join.Add(24 * day), join.Add(34 * day), none, false},
		{rb, 1, c, join.Add(34 * day), join.Add(41 * day), none, false},
		{procedure.StageRecordConfirmation, 0, c, join.Add(41 * day), join.Add(46 * day), none, false},
	}, timeline(cs)), "awaiting the respondent")

	joined := t0.Add(2 * day)
	out = decide(t, cs, procedure.Act{Kind: procedure.ActJoin, ParticipantID: "p-resp", InvitationHash: digestA}, joined)
	cs, told = out.Case, append(told, opens(out.Events)...)
	answered := joined.Add(3 * day)
	out = decide(t, cs, procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: "p-resp", Digest: digestA}, answered)
	cs, told = out.Case, append(told, opens(out.Events)...)
	round1 := answered.Add(10 * day)
	require.Empty(t, cmp.Diff([]entry{
		{procedure.StageRespondentJoining, 0, p, t0, join, joined, false},
		{procedure.StageAnswer, 0, p, joined, joined.Add(14 * day), answered, false},
		{ev, 1, o, answered, round1, none, false},
		{ev, 2, c, round1, round1.Add(10 * day), none, false},
		{rb, 1, c, round1.Add(10 * day), round1.Add(17 * day), none, false},
		{procedure.StageRecordConfirmation, 0, c, round1.Add(17 * day), round1.Add(22 * day), none, false},
	}, timeline(cs)), "in the first evidence round")

	// The rounds and the rebuttal run to their deadlines; both sides
	// confirm the record a day into its window.
	for range 3 {
		tick := procedure.Tick(cs, cs.Stage.DeadlineAt)
		cs, told = tick.Case, append(told, opens(tick.Events)...)
	}
	require.Equal(t, procedure.StatusAwaitingRecordConfirmation, cs.Status())
	confirmed := cs.Stage.OpenedAt.Add(day)
	cs = decide(t, cs, procedure.Act{Kind: procedure.ActConfirmRecord, ParticipantID: "p-claim"}, confirmed).Case
	cs = decide(t, cs, procedure.Act{Kind: procedure.ActConfirmRecord, ParticipantID: "p-resp"}, confirmed).Case
	require.Equal(t, procedure.StatusRecordConfirmed, cs.Status())
	got := timeline(cs)
	require.Len(t, got, 6, "every stage past, none open or to come")
	var deadlines []time.Time
	for i, s := range got {
		require.Equal(t, p, s.State, i)
		deadlines = append(deadlines, s.Deadline)
		if i > 0 {
			require.Equal(t, got[i-1].Closed, s.Opened, "each stage opens as the one before closes")
		}
	}
	require.Equal(t, told, deadlines, "each stage's deadline is the one its entry event carried")
	require.Equal(t, confirmed, got[5].Closed)
	require.Equal(t, cs.ClosedAt, got[5].Closed, "the record closed with the last stage")
}

// A respondent that confirmed the draft never waits to join: its case's
// timeline starts at the answer. A case in default goes on without one.
// A termination and a settlement stop the open stage where they found it.
func TestTheTimelineOfCasesThatJoinedSkippedOrStopped(t *testing.T) {
	joined := open(t, standardPlan(), true)
	first := joined.Timeline()[0]
	require.Equal(t, procedure.StageAnswer, first.Kind, "no joining stage ran")
	require.Equal(t, t0, first.OpenedAt)
	require.Empty(t, joined.PastStages)

	inDefault := procedure.Tick(open(t, standardPlan(), false), t0.Add(14*day)).Case
	var kinds []procedure.StageKind
	for _, s := range inDefault.Timeline() {
		kinds = append(kinds, s.Kind)
	}
	require.Equal(t, []procedure.StageKind{procedure.StageRespondentJoining, procedure.StageEvidence, procedure.StageEvidence,
		procedure.StageRebuttal, procedure.StageRecordConfirmation}, kinds, "nobody to answer: no answer stage opens")
	require.Equal(t, t0.Add(14*day), inDefault.Timeline()[0].ClosedAt, "the joining stage closed at its deadline")

	evidence := decide(t, joined, procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: "p-resp", Digest: digestA}, t0.Add(day)).Case
	asked := decide(t, evidence, procedure.Act{Kind: procedure.ActRequestTermination, ParticipantID: "p-claim", TerminationID: "term-1"}, t0.Add(2*day)).Case
	ended := decide(t, asked, procedure.Act{Kind: procedure.ActConfirmTermination, ParticipantID: "p-resp", TerminationID: "term-1"}, t0.Add(3*day)).Case
	last := ended.Timeline()[len(ended.Timeline())-1]
	require.Equal(t, procedure.StageEvidence, last.Kind)
	require.Equal(t, procedure.TimelinePast, last.State)
	require.Equal(t, t0.Add(3*day), last.ClosedAt, "the termination closed the round")
	require.Len(t, ended.Timeline(), 2, "nothing to come")

	proposed := settle(t, evidence, settlement.Act{Kind: settlement.ActPropose, Side: "respondent", ParticipantID: "p-resp", Terms: textTerms()}, t0.Add(2*day)).Case
	pending, _ := proposed.Settlement.Pending()
	settled := settle(t, proposed, settlement.Act{Kind: settlement.ActAccept, Side: "claimant", ParticipantID: "p-claim", TermsDigest: pending.TermsDigest}, t0.Add(4*day)).Case
	stopped := settled.Timeline()
	require.Len(t, stopped, 2, "the answer, and the round the agreement stopped; nothing to come")
	require.Equal(t, procedure.TimelinePast, stopped[1].State)
	require.Equal(t, t0.Add(4*day), stopped[1].ClosedAt)
	require.Equal(t, evidence.Stage.DeadlineAt, stopped[1].DeadlineAt, "the deadline it had")
}

// A past stage of an unknown kind, or one that ends before it opens, is a
// corrupt case.
func TestPastStagesAreValidated(t *testing.T) {
	c := decide(t, open(t, standardPlan(), true), procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: "p-resp", Digest: digestA}, t0.Add(day)).Case
	require.NoError(t, c.Validate())
	bad := c
	bad.PastStages = []procedure.PastStage{{Kind: "hearing", OpenedAt: t0, DeadlineAt: t0, ClosedAt: t0}}
	require.ErrorIs(t, bad.Validate(), procedure.ErrCorruptCase)
	bad.PastStages = []procedure.PastStage{{Kind: procedure.StageAnswer, OpenedAt: t0, DeadlineAt: t0.Add(day), ClosedAt: t0.Add(-time.Hour)}}
	require.ErrorIs(t, bad.Validate(), procedure.ErrCorruptCase)
}
