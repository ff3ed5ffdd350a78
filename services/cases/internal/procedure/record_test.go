package procedure_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// awaitingConfirmation walks a fast, one-round case to the record
// confirmation: each side filed one submission (sub-c, sub-r).
func awaitingConfirmation(t *testing.T) (procedure.Case, time.Time) {
	t.Helper()
	plan := procedure.Plan{Profile: procedure.ProfileFast, EvidenceRounds: 1, FilingsPerSidePerStage: 1, RecordConfirmationRequired: true}
	c := open(t, plan, true)
	at := t0.Add(time.Hour)
	c = decide(t, c, procedure.Act{Kind: procedure.ActFileSubmission, ParticipantID: "p-claim", SubmissionID: "sub-c", Digest: digestA}, at).Case
	c = decide(t, c, procedure.Act{Kind: procedure.ActFileSubmission, ParticipantID: "p-resp", SubmissionID: "sub-r", Digest: digestB}, at).Case
	require.Equal(t, procedure.StatusAwaitingRecordConfirmation, c.Status())
	return c, at.Add(time.Hour)
}

func correct(pid, entry, id string) procedure.Act {
	return procedure.Act{Kind: procedure.ActCorrectRecord, ParticipantID: pid, EntryID: entry, CorrectionID: id, Digest: digestB}
}

// A side corrects its own entry before it confirms: the summary digest
// changes, and a confirmation the other side gave of the old summary is
// withdrawn, so both are asked (again) to confirm the new one.
func TestACorrectionWithdrawsTheOtherSidesConfirmation(t *testing.T) {
	c, at := awaitingConfirmation(t)
	before := c.RecordDigest()
	require.Len(t, before, 64)
	require.Equal(t, before, c.RecordDigest(), "the digest is a function of the record")

	c = decide(t, c, procedure.Act{Kind: procedure.ActConfirmRecord, ParticipantID: "p-resp", SummaryDigest: before}, at).Case
	require.Contains(t, c.RecordConfirms, procedure.Respondent)
	require.Equal(t, before, c.RecordDigest(), "a confirmation is not part of the summary")

	out := decide(t, c, correct("p-claim", "sub-c", "cor-1"), at)
	require.Equal(t, []procedure.EventType{procedure.EventRecordCorrected}, types(out.Events))
	ev := out.Events[0]
	require.True(t, ev.ActionRequired)
	require.Equal(t, c.Stage.DeadlineAt, ev.DeadlineAt)
	require.Equal(t, []procedure.Partner{claimantPartner, respondentPartner}, ev.Recipients)
	c = out.Case
	require.NotContains(t, c.RecordConfirms, procedure.Respondent, "it confirmed another summary")
	require.Equal(t, procedure.StatusAwaitingRecordConfirmation, c.Status())
	require.Equal(t, []procedure.RecordCorrection{{ID: "cor-1", Side: procedure.Claimant, ParticipantID: "p-claim", EntryID: "sub-c", Digest: digestB, CorrectedAt: at}}, c.Corrections)
	after := c.RecordDigest()
	require.NotEqual(t, before, after)

	_, err := procedure.Decide(c, procedure.Act{Kind: procedure.ActConfirmRecord, ParticipantID: "p-resp", SummaryDigest: before}, at)
	require.ErrorIs(t, err, procedure.ErrRecordDigestMismatch, "the old summary is not the record")
	c = decide(t, c, procedure.Act{Kind: procedure.ActConfirmRecord, ParticipantID: "p-resp", SummaryDigest: after}, at).Case
	out = decide(t, c, procedure.Act{Kind: procedure.ActConfirmRecord, ParticipantID: "p-claim"}, at)
	require.Equal(t, procedure.StatusRecordConfirmed, out.Case.Status(), "no digest given: the side confirms the record as it is")
}

// Each refusal of a correction, in Decide's order, leaves the case as it was.
func TestCorrectionRefusals(t *testing.T) {
	c, at := awaitingConfirmation(t)
	confirmed := decide(t, c, procedure.Act{Kind: procedure.ActConfirmRecord, ParticipantID: "p-claim"}, at).Case
	corrected := decide(t, c, correct("p-claim", "sub-c", "cor-1"), at).Case
	early := open(t, standardPlan(), true)
	for name, tc := range map[string]struct {
		c    procedure.Case
		act  procedure.Act
		at   time.Time
		want *procedure.RefusalError
	}{
		"no entry id":                 {c, correct("p-claim", "", "cor-1"), at, procedure.ErrInvalidAct},
		"no text digest":              {c, procedure.Act{Kind: procedure.ActCorrectRecord, ParticipantID: "p-claim", EntryID: "sub-c", CorrectionID: "cor-1"}, at, procedure.ErrInvalidAct},
		"a malformed summary digest":  {c, procedure.Act{Kind: procedure.ActConfirmRecord, ParticipantID: "p-claim", SummaryDigest: "abc"}, at, procedure.ErrInvalidAct},
		"before the record stage":     {early, correct("p-resp", "answer", "cor-1"), at, procedure.ErrStageClosed},
		"after the deadline":          {c, correct("p-claim", "sub-c", "cor-1"), c.Stage.DeadlineAt, procedure.ErrDeadlinePassed},
		"an entry the record lacks":   {c, correct("p-claim", "sub-x", "cor-1"), at, procedure.ErrEntryNotFound},
		"the other side's submission": {c, correct("p-claim", "sub-r", "cor-1"), at, procedure.ErrEntryNotFound},
		"an answer nobody filed":      {c, correct("p-resp", "answer", "cor-1"), at, procedure.ErrEntryNotFound},
		"a correction id reused":      {corrected, correct("p-claim", "sub-c", "cor-1"), at, procedure.ErrInvalidAct},
		"after confirming":            {confirmed, correct("p-claim", "sub-c", "cor-1"), at, procedure.ErrRecordAlreadyConfirmed},
		"a stale summary digest":      {corrected, procedure.Act{Kind: procedure.ActConfirmRecord, ParticipantID: "p-resp", SummaryDigest: c.RecordDigest()}, at, procedure.ErrRecordDigestMismatch},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := procedure.Decide(tc.c, tc.act, tc.at)
			require.ErrorIs(t, err, tc.want)
			require.Equal(t, tc.c.RecordDigest(), out.Case.RecordDigest())
			require.Equal(t, tc.c.RecordConfirms, out.Case.RecordConfirms)
			require.Empty(t, out.Events)
		})
	}
}
