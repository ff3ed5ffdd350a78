package procedure_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

const (
	day     = 24 * time.Hour
	rules   = "pcourt-rules-2026-11"
	digestA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

var (
	claimantPartner   = procedure.Partner{Tenant: "t1", Environment: "sandbox", PartnerID: "partner-c"}
	respondentPartner = procedure.Partner{Tenant: "t1", Environment: "sandbox", PartnerID: "partner-r"}
)

func standardPlan() procedure.Plan {
	return procedure.Plan{Profile: procedure.ProfileStandard, AnswerRequired: true, EvidenceRounds: 2, RebuttalRounds: 1, FilingsPerSidePerStage: 2, RecordConfirmationRequired: true}
}

// opening is a claimant-initiated case whose respondent has not joined.
func opening(plan procedure.Plan, respondentJoined bool) procedure.Opening {
	resp := procedure.Participant{ID: "p-resp", Side: procedure.Respondent, PartnerID: "partner-r", PrincipalID: "acme"}
	if respondentJoined {
		resp.JoinedAt = t0
	}
	return procedure.Opening{
		EventID: "case-opened:case-1", CaseID: "case-1", ExternalID: "ext-1", Tenant: "t1", Environment: "sandbox", PartnerID: "partner-c",
		OpenedAt: t0, Rules: procedure.Rules{Version: rules, Hash: digestA}, Plan: plan, FeeID: "fee-1", FeeStatus: "paid",
		Participants: []procedure.Participant{
			{ID: "p-claim", Side: procedure.Claimant, PrincipalID: "alice", JoinedAt: t0},
			resp,
		},
		Capabilities: map[string]string{procedure.CapabilityRespondentInvite: digestA},
	}
}

func open(t testing.TB, plan procedure.Plan, respondentJoined bool) procedure.Case {
	t.Helper()
	out, err := procedure.Open(opening(plan, respondentJoined))
	require.NoError(t, err)
	return out.Case
}

func decide(t testing.TB, c procedure.Case, a procedure.Act, at time.Time) procedure.Outcome {
	t.Helper()
	out, err := procedure.Decide(c, a, at)
	require.NoError(t, err, "act %s by %s", a.Kind, a.ParticipantID)
	return out
}

func types(evs []procedure.Event) []procedure.EventType {
	var out []procedure.EventType
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func TestOpenAwaitsTheRespondent(t *testing.T) {
	out, err := procedure.Open(opening(standardPlan(), false))
	require.NoError(t, err)
	c := out.Case
	require.Equal(t, procedure.StatusAwaitingRespondent, c.Status())
	require.Equal(t, t0.Add(14*day), c.Stage.DeadlineAt)
	require.Equal(t, []procedure.EventType{procedure.EventOpened}, types(out.Events))
	opened := out.Events[0]
	require.Equal(t, []procedure.Partner{claimantPartner, respondentPartner}, opened.Recipients)
	require.False(t, opened.ActionRequired)
	require.Equal(t, t0.Add(14*day), opened.DeadlineAt)
	// The filing partner stands in for a participant that names none.
	require.Equal(t, "partner-c", c.Participants[0].PartnerID)
}

// An account files through no partner: its participant keeps no partner,
// no partner is told about its side, and only an account may file so.
func TestAnAccountFilesACaseThroughNoPartner(t *testing.T) {
	in := opening(standardPlan(), false)
	in.PartnerID = ""
	in.Participants[0].AccountID = "acct_CLAIMS01"
	out, err := procedure.Open(in)
	require.NoError(t, err)
	require.Empty(t, out.Case.Participants[0].PartnerID, "an account acts through no partner")
	require.Equal(t, []procedure.Partner{respondentPartner}, out.Events[0].Recipients)

	in.Participants[0].AccountID = ""
	_, err = procedure.Open(in)
	require.ErrorIs(t, err, procedure.ErrInvalidOpening, "without a filing partner, only an account files")
}

func TestOpenWithAJoinedRespondentStartsTheAnswer(t *testing.T) {
	out, err := procedure.Open(opening(standardPlan(), true))
	require.NoError(t, err)
	require.Equal(t, procedure.StatusAwaitingAnswer, out.Case.Status())
	require.Equal(t, []procedure.EventType{procedure.EventOpened, procedure.EventStageOpened}, types(out.Events))
	stage := out.Events[1]
	require.True(t, stage.ActionRequired)
	require.Equal(t, []procedure.Partner{respondentPartner}, stage.Recipients, "the answer stage concerns the respondent")
	require.Equal(t, t0.Add(14*day), stage.DeadlineAt)
}

func TestOpenRefusesUnknownRulesAndBadPlans(t *testing.T) {
	in := opening(standardPlan(), false)
	in.Rules.Version = "pcourt-rules-1999-01"
	_, err := procedure.Open(in)
	require.ErrorIs(t, err, procedure.ErrUnknownRules)
	require.ErrorIs(t, err, procedure.ErrInvalidOpening)

	in = opening(standardPlan(), false)
	in.Plan.EvidenceRounds = 4
	_, err = procedure.Open(in)
	require.ErrorIs(t, err, procedure.ErrInvalidOpening)

	in = opening(standardPlan(), false)
	in.Participants = in.Participants[1:]
	_, err = procedure.Open(in)
	require.ErrorIs(t, err, procedure.ErrInvalidOpening, "a case needs a joined claimant")
}

func TestFastProfileHasShorterWindows(t *testing.T) {
	plan := procedure.Plan{Profile: procedure.ProfileFast, EvidenceRounds: 1, FilingsPerSidePerStage: 1, RecordConfirmationRequired: true}
	c := open(t, plan, true)
	require.Equal(t, procedure.StatusEvidence, c.Status(), "no answer stage in the fast plan")
	require.Equal(t, t0.Add(3*day), c.Stage.DeadlineAt)
}

// TestStandardWalk takes a case through every stage of the standard plan.
func TestStandardWalk(t *testing.T) {
	c := open(t, standardPlan(), false)
	at := t0.Add(time.Hour)
	step := func(a procedure.Act, want procedure.Status, wantEvents ...procedure.EventType) procedure.Outcome {
		t.Helper()
		at = at.Add(time.Hour)
		out := decide(t, c, a, at)
		require.Equal(t, want, out.Case.Status(), "after %s", a.Kind)
		require.Equal(t, wantEvents, types(out.Events), "after %s", a.Kind)
		c = out.Case
		return out
	}
	claim := func(k procedure.ActKind) procedure.Act { return procedure.Act{Kind: k, ParticipantID: "p-claim"} }
	resp := func(k procedure.ActKind) procedure.Act { return procedure.Act{Kind: k, ParticipantID: "p-resp"} }
	file := func(a procedure.Act, id string) procedure.Act { a.SubmissionID, a.Digest = id, digestA; return a }

	invite := claim(procedure.ActInviteRespondent)
	invite.InvitationHash = digestB
	out := step(invite, procedure.StatusAwaitingRespondent, procedure.EventRespondentInvited)
	require.Equal(t, c.Stage.DeadlineAt, out.Events[0].DeadlineAt)
	require.Equal(t, []procedure.Partner{claimantPartner}, out.Events[0].Recipients)

	join := resp(procedure.ActJoin)
	join.InvitationHash = digestA
	_, err := procedure.Decide(c, join, at)
	require.ErrorIs(t, err, procedure.ErrInvitationMismatch, "the rotated secret no longer works")
	join.InvitationHash = digestB
	step(join, procedure.StatusAwaitingAnswer, procedure.EventRespondentJoined, procedure.EventStageOpened)

	answer := resp(procedure.ActFileAnswer)
	answer.Digest = digestA
	step(answer, procedure.StatusEvidence, procedure.EventAnswerFiled, procedure.EventStageOpened)
	require.Equal(t, 1, c.Stage.Round)

	msg := claim(procedure.ActPostMessage)
	msg.MessageID, msg.Digest = "m1", digestA
	out = step(msg, procedure.StatusEvidence, procedure.EventMessagePosted)
	require.Equal(t, []procedure.Partner{respondentPartner}, out.Events[0].Recipients)
	require.Equal(t, []procedure.Message{{ID: "m1", ParticipantID: "p-claim", Side: procedure.Claimant, Digest: digestA, PostedAt: at}}, c.Messages)

	// Marking read records the side's position, emits nothing, and never
	// moves back.
	read := resp(procedure.ActMarkMessagesRead)
	read.MessageID = "m1"
	out, err = procedure.Decide(c, read, at)
	require.NoError(t, err)
	require.Empty(t, out.Events, "nobody is called back about a read receipt")
	require.Equal(t, 1, out.Case.MessagesRead[procedure.Respondent])
	require.Zero(t, out.Case.MessagesRead[procedure.Claimant])
	require.Zero(t, c.MessagesRead[procedure.Respondent], "the case decided on is not changed")
	c = out.Case

	step(file(claim(procedure.ActFileSubmission), "s1"), procedure.StatusEvidence, procedure.EventSubmissionFiled)
	step(file(claim(procedure.ActFileSubmission), "s2"), procedure.StatusEvidence, procedure.EventSubmissionFiled)
	_, err = procedure.Decide(c, file(claim(procedure.ActFileSubmission), "s3"), at)
	require.ErrorIs(t, err, procedure.ErrFilingLimitReached)
	amend := file(claim(procedure.ActAmendSubmission), "s1")
	amend.Digest = digestB
	step(amend, procedure.StatusEvidence, procedure.EventSubmissionAmended)
	step(file(resp(procedure.ActFileSubmission), "s4"), procedure.StatusEvidence, procedure.EventSubmissionFiled)
	// The last filing of the quota closes the round early.
	step(file(resp(procedure.ActFileSubmission), "s5"), procedure.StatusEvidence, procedure.EventSubmissionFiled, procedure.EventStageOpened)
	require.Equal(t, 2, c.Stage.Round)
	_, err = procedure.Decide(c, amend, at)
	require.ErrorIs(t, err, procedure.ErrStageClosed, "a submission of a closed round cannot be amended")

	// Round 2 and the rebuttal end at their deadlines.
	tick := procedure.Tick(c, c.Stage.DeadlineAt)
	require.Equal(t, []procedure.EventType{procedure.EventStageOpened}, types(tick.Events))
	require.Equal(t, procedure.StatusRebuttal, tick.Case.Status())
	at = c.Stage.DeadlineAt
	c = tick.Case
	require.Equal(t, at.Add(7*day), c.Stage.DeadlineAt)
	tick = procedure.Tick(c, c.Stage.DeadlineAt)
	require.Equal(t, []procedure.EventType{procedure.EventRecordConfirmationRequested}, types(tick.Events))
	require.True(t, tick.Events[0].ActionRequired)
	at, c = c.Stage.DeadlineAt, tick.Case

	out = step(claim(procedure.ActConfirmRecord), procedure.StatusAwaitingRecordConfirmation, procedure.EventRecordConfirmationGiven)
	require.Equal(t, []procedure.Partner{respondentPartner}, out.Events[0].Recipients)
	require.True(t, out.Events[0].ActionRequired)
	step(resp(procedure.ActConfirmRecord), procedure.StatusRecordConfirmed, procedure.EventRecordConfirmed, procedure.EventEvidenceExportReady, procedure.EventEvidenceExportReady)
	due, ok := procedure.NextDeadline(c)
	require.True(t, ok, "once the record is confirmed, the tribunal's assignment is due")
	require.Equal(t, c.ClosedAt, due)
}

func TestRefusalsLeaveTheCaseUnchanged(t *testing.T) {
	awaiting := open(t, standardPlan(), false)
	answering := open(t, standardPlan(), true)
	evidence := decide(t, answering, procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: "p-resp", Digest: digestA}, t0).Case
	pending := decide(t, evidence, procedure.Act{Kind: procedure.ActRequestTermination, ParticipantID: "p-claim", TerminationID: "term-1"}, t0).Case
	terminated := decide(t, pending, procedure.Act{Kind: procedure.ActConfirmTermination, ParticipantID: "p-resp", TerminationID: "term-1"}, t0).Case
	require.Equal(t, procedure.StatusTerminated, terminated.Status())

	tests := []struct {
		name string
		c    procedure.Case
		act  procedure.Act
		at   time.Time
		want error
	}{
		{"unknown act", evidence, procedure.Act{Kind: "dance", ParticipantID: "p-claim"}, t0, procedure.ErrInvalidAct},
		{"message without digest", evidence, procedure.Act{Kind: procedure.ActPostMessage, ParticipantID: "p-claim", MessageID: "m1"}, t0, procedure.ErrInvalidAct},
		{"message without id", evidence, procedure.Act{Kind: procedure.ActPostMessage, ParticipantID: "p-claim", Digest: digestA}, t0, procedure.ErrInvalidAct},
		{"mark read without a message", evidence, procedure.Act{Kind: procedure.ActMarkMessagesRead, ParticipantID: "p-claim"}, t0, procedure.ErrInvalidAct},
		{"mark read an unknown message", evidence, procedure.Act{Kind: procedure.ActMarkMessagesRead, ParticipantID: "p-claim", MessageID: "m404"}, t0, procedure.ErrMessageNotFound},
		{"message on a terminated case", terminated, procedure.Act{Kind: procedure.ActPostMessage, ParticipantID: "p-claim", MessageID: "m1", Digest: digestA}, t0, procedure.ErrCaseClosed},
		{"invite without hash", awaiting, procedure.Act{Kind: procedure.ActInviteRespondent, ParticipantID: "p-claim"}, t0, procedure.ErrInvalidAct},
		{"stranger", evidence, procedure.Act{Kind: procedure.ActPostMessage, ParticipantID: "p-x", MessageID: "m1", Digest: digestA}, t0, procedure.ErrNotAParticipant},
		{"respondent before joining", awaiting, procedure.Act{Kind: procedure.ActPostMessage, ParticipantID: "p-resp", MessageID: "m1", Digest: digestA}, t0, procedure.ErrNotAParticipant},
		{"act on terminated case", terminated, procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: "p-claim", Digest: digestA}, t0, procedure.ErrCaseClosed},
		{"claimant answers", answering, procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: "p-claim", Digest: digestA}, t0, procedure.ErrWrongSide},
		{"respondent invites", evidence, procedure.Act{Kind: procedure.ActInviteRespondent, ParticipantID: "p-resp", InvitationHash: digestA}, t0, procedure.ErrWrongSide},
		{"answer in evidence", evidence, procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: "p-resp", Digest: digestA}, t0, procedure.ErrStageClosed},
		{"submission before evidence", answering, procedure.Act{Kind: procedure.ActFileSubmission, ParticipantID: "p-claim", SubmissionID: "s1", Digest: digestA}, t0, procedure.ErrStageClosed},
		{"record confirmation in evidence", evidence, procedure.Act{Kind: procedure.ActConfirmRecord, ParticipantID: "p-claim"}, t0, procedure.ErrStageClosed},
		{"answer after its deadline", answering, procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: "p-resp", Digest: digestA}, t0.Add(14 * day), procedure.ErrDeadlinePassed},
		{"submission after the round", evidence, procedure.Act{Kind: procedure.ActFileSubmission, ParticipantID: "p-claim", SubmissionID: "s1", Digest: digestA}, t0.Add(10 * day), procedure.ErrDeadlinePassed},
		{"join twice", answering, procedure.Act{Kind: procedure.ActJoin, ParticipantID: "p-resp"}, t0, procedure.ErrAlreadyJoined},
		{"invite after join", answering, procedure.Act{Kind: procedure.ActInviteRespondent, ParticipantID: "p-claim", InvitationHash: digestA}, t0, procedure.ErrAlreadyJoined},
		{"join with old invitation", awaiting, procedure.Act{Kind: procedure.ActJoin, ParticipantID: "p-resp", InvitationHash: digestB}, t0, procedure.ErrInvitationMismatch},
		{"amend unknown", evidence, procedure.Act{Kind: procedure.ActAmendSubmission, ParticipantID: "p-claim", SubmissionID: "nope", Digest: digestA}, t0, procedure.ErrSubmissionNotFound},
		{"second termination request", pending, procedure.Act{Kind: procedure.ActRequestTermination, ParticipantID: "p-resp", TerminationID: "term-2"}, t0, procedure.ErrTerminationPending},
		{"confirm unknown termination", pending, procedure.Act{Kind: procedure.ActConfirmTermination, ParticipantID: "p-resp", TerminationID: "term-9"}, t0, procedure.ErrTerminationRequestUnknown},
		{"confirm own termination", pending, procedure.Act{Kind: procedure.ActConfirmTermination, ParticipantID: "p-claim", TerminationID: "term-1"}, t0, procedure.ErrWrongSide},
		{"confirm lapsed termination", pending, procedure.Act{Kind: procedure.ActConfirmTermination, ParticipantID: "p-resp", TerminationID: "term-1"}, t0.Add(7 * day), procedure.ErrDeadlinePassed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := procedure.Decide(tt.c, tt.act, tt.at)
			require.ErrorIs(t, err, tt.want)
			var refusal *procedure.RefusalError
			require.True(t, errors.As(err, &refusal))
			require.NotEmpty(t, refusal.Detail)
			require.Empty(t, cmp.Diff(tt.c, out.Case), "a refusal hands the case back unchanged")
			require.Empty(t, out.Events)
		})
	}
}

func TestASecondRespondentJoinsWithoutMovingTheCase(t *testing.T) {
	in := opening(standardPlan(), true)
	in.Participants = append(in.Participants, procedure.Participant{ID: "p-resp2", Side: procedure.Respondent, PrincipalID: "acme-2"})
	out, err := procedure.Open(in)
	require.NoError(t, err)
	joined := decide(t, out.Case, procedure.Act{Kind: procedure.ActJoin, ParticipantID: "p-resp2"}, t0.Add(time.Hour))
	require.Equal(t, procedure.StatusAwaitingAnswer, joined.Case.Status())
	require.Equal(t, []procedure.EventType{procedure.EventRespondentJoined}, types(joined.Events))
	require.Equal(t, out.Case.Stage, joined.Case.Stage, "the answer window does not restart")
}

func TestDeadlines(t *testing.T) {
	t.Run("respondent never joins: the case goes on in default", func(t *testing.T) {
		c := open(t, standardPlan(), false)
		warn := procedure.Tick(c, t0.Add(12*day))
		require.Equal(t, []procedure.EventType{procedure.EventDeadlineApproaching}, types(warn.Events))
		require.Equal(t, []procedure.Partner{respondentPartner}, warn.Events[0].Recipients)
		require.Empty(t, procedure.Tick(warn.Case, t0.Add(13*day)).Events, "one warning per stage")

		out := procedure.Tick(warn.Case, t0.Add(15*day))
		require.Equal(t, []procedure.EventType{procedure.EventDeadlineMissed, procedure.EventStageOpened}, types(out.Events))
		require.Equal(t, procedure.StatusEvidence, out.Case.Status(), "no answer without a respondent")
		require.Equal(t, t0.Add(25*day), out.Case.Stage.DeadlineAt, "windows run from the transition")
		require.Empty(t, procedure.Tick(out.Case, t0.Add(15*day)).Events, "a second tick at the same instant does nothing")

		// Joining late is allowed and reopens nothing.
		late := decide(t, out.Case, procedure.Act{Kind: procedure.ActJoin, ParticipantID: "p-resp", InvitationHash: digestA}, t0.Add(16*day))
		require.Equal(t, procedure.StatusEvidence, late.Case.Status())
		require.Equal(t, []procedure.EventType{procedure.EventRespondentJoined}, types(late.Events))
	})
	t.Run("answer missed", func(t *testing.T) {
		c := open(t, standardPlan(), true)
		at, ok := procedure.NextDeadline(c)
		require.True(t, ok)
		require.Equal(t, t0.Add(12*day), at, "the warning comes first")
		out := procedure.Tick(c, t0.Add(14*day))
		require.Equal(t, []procedure.EventType{procedure.EventDeadlineMissed, procedure.EventStageOpened}, types(out.Events))
		require.True(t, out.Case.AnswerMissed)
	})
	t.Run("record deemed confirmed", func(t *testing.T) {
		plan := procedure.Plan{Profile: procedure.ProfileCustomBounded, EvidenceRounds: 1, FilingsPerSidePerStage: 1, RecordConfirmationRequired: true}
		c := open(t, plan, true)
		c = procedure.Tick(c, c.Stage.DeadlineAt).Case
		require.Equal(t, procedure.StatusAwaitingRecordConfirmation, c.Status())
		c = decide(t, c, procedure.Act{Kind: procedure.ActConfirmRecord, ParticipantID: "p-claim"}, c.Stage.OpenedAt).Case
		out := procedure.Tick(c, c.Stage.DeadlineAt)
		require.Equal(t, []procedure.EventType{procedure.EventDeadlineMissed, procedure.EventRecordConfirmed,
			procedure.EventEvidenceExportReady, procedure.EventEvidenceExportReady}, types(out.Events))
		require.Equal(t, procedure.StatusRecordConfirmed, out.Case.Status())
		// Each side's export goes to that side's partners only.
		for i, side := range []procedure.Side{procedure.Claimant, procedure.Respondent} {
			ev := out.Events[2+i]
			require.Equal(t, side, ev.ExportSide)
			require.Equal(t, out.Case.Recipients[side], ev.Recipients)
		}
		require.True(t, out.Case.RecordDeemed)
	})
	t.Run("termination lapses", func(t *testing.T) {
		c := open(t, standardPlan(), true)
		c = decide(t, c, procedure.Act{Kind: procedure.ActRequestTermination, ParticipantID: "p-resp", TerminationID: "term-1"}, t0).Case
		at, _ := procedure.NextDeadline(c)
		require.Equal(t, t0.Add(7*day), at)
		out := procedure.Tick(c, at)
		require.Equal(t, []procedure.EventType{procedure.EventTerminationLapsed}, types(out.Events))
		require.Nil(t, out.Case.Termination)
		require.Equal(t, procedure.StatusAwaitingAnswer, out.Case.Status())
	})
	t.Run("claimant withdraws before any respondent joined", func(t *testing.T) {
		c := open(t, standardPlan(), false)
		out := decide(t, c, procedure.Act{Kind: procedure.ActRequestTermination, ParticipantID: "p-claim", TerminationID: "term-1"}, t0)
		require.Equal(t, procedure.StatusTerminated, out.Case.Status())
		require.Equal(t, []procedure.EventType{procedure.EventTerminated}, types(out.Events))
		_, ok := procedure.NextDeadline(out.Case)
		require.False(t, ok)
	})
}

func TestTablesAreConsistent(t *testing.T) {
	emitted := map[procedure.EventType]bool{procedure.EventOpened: true}
	for _, r := range procedure.Table {
		for _, e := range r.Emits {
			emitted[e] = true
		}
		require.NotEmpty(t, r.From)
		require.NotEmpty(t, r.Records)
	}
	for _, s := range procedure.Stages {
		if s.Entry != "" {
			emitted[s.Entry] = true
		}
	}
	for _, spec := range procedure.EventSpecs {
		require.True(t, emitted[spec.Type], "event %s is never emitted", spec.Type)
		delete(emitted, spec.Type)
	}
	require.Empty(t, emitted, "emitted events without a spec")
	for _, row := range procedure.DeadlineTable {
		require.NoError(t, row.Windows.Validate())
		for _, w := range row.Profiles {
			require.NoError(t, w.Validate())
		}
	}
	require.True(t, strings.HasPrefix(procedure.Timestamp(t0.Add(5*time.Microsecond)), "2026-11-20T10:00:00.000Z"))
}

// The award decides the dispute: a termination request still pending when
// it is issued lapses with it, so nothing waits on it any more.
func TestAnAwardLapsesAPendingTermination(t *testing.T) {
	c := open(t, standardPlan(), true)
	out, err := procedure.Decide(c, procedure.Act{Kind: procedure.ActRequestTermination, ParticipantID: "p-claim", TerminationID: "term-1"}, c.OpenedAt)
	require.NoError(t, err)
	c = out.Case
	require.NotNil(t, c.Termination)
	awarded := tribunal.Outcome{State: tribunal.State{Stage: tribunal.StageAwarded, Award: &tribunal.Issued{AwardID: "award:x:1"}}}
	next := c.WithTribunal(awarded, c.OpenedAt.Add(time.Hour))
	require.Nil(t, next.Case.Termination)
	require.Equal(t, []procedure.EventType{procedure.EventTerminationLapsed}, types(next.Events))
}
