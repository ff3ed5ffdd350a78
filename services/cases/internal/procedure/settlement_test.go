package procedure_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/settlement"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// settle applies a settlement act to c as the flow does.
func settle(t testing.TB, c procedure.Case, a settlement.Act, at time.Time) procedure.Outcome {
	t.Helper()
	out, err := settlement.Decide(c.Settlement, c.SettlementFacts(), a, at)
	require.NoError(t, err)
	next := c.WithSettlement(out, at)
	require.NoError(t, next.Case.Validate())
	return next
}

func textTerms() award.Terms {
	return award.Terms{Text: "The claimant withdraws its claim; each side bears its own costs."}
}

// An agreement in the middle of the evidence settles the case: its status
// says so, its stages and deadlines stop, a pending termination lapses,
// and nothing but the tribunal's assignment of a reviewer is due.
func TestAnAgreementSettlesTheCaseAtAnyStage(t *testing.T) {
	c := decide(t, open(t, standardPlan(), true), procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: "p-resp", Digest: digestA}, t0).Case
	require.Equal(t, procedure.StatusEvidence, c.Status())
	c = decide(t, c, procedure.Act{Kind: procedure.ActRequestTermination, ParticipantID: "p-claim", TerminationID: "term-1"}, t0).Case

	proposed := settle(t, c, settlement.Act{Kind: settlement.ActPropose, Side: "respondent", ParticipantID: "p-resp", Terms: textTerms()}, t0.Add(time.Hour))
	require.Equal(t, []procedure.EventType{"settlement_proposed"}, types(proposed.Events))
	require.Equal(t, []procedure.Partner{claimantPartner}, proposed.Events[0].Recipients, "the terms stay between the sides: the other side is told")
	require.True(t, proposed.Events[0].ActionRequired)
	require.Equal(t, procedure.StatusEvidence, proposed.Case.Status(), "a proposal settles nothing")

	p, _ := proposed.Case.Settlement.Pending()
	at := t0.Add(2 * time.Hour)
	agreed := settle(t, proposed.Case, settlement.Act{Kind: settlement.ActAccept, Side: "claimant", ParticipantID: "p-claim", TermsDigest: p.TermsDigest}, at)
	c = agreed.Case
	require.Equal(t, []procedure.EventType{"settlement_agreed", procedure.EventTerminationLapsed}, types(agreed.Events), "no tribunal yet: the sides are told")
	require.ElementsMatch(t, []procedure.Partner{claimantPartner, respondentPartner}, agreed.Events[0].Recipients)
	require.Equal(t, procedure.StatusSettled, c.Status())
	require.False(t, c.Status().Open())
	require.Nil(t, c.Termination)

	next, ok := procedure.NextDeadline(c)
	require.True(t, ok)
	require.Equal(t, at, next, "the reviewer's assignment is due; no stage deadline is")
	require.Empty(t, procedure.Tick(c, c.Stage.DeadlineAt.Add(time.Hour)).Events, "no stage closes or warns any more")
	_, err := procedure.Decide(c, procedure.Act{Kind: procedure.ActFileSubmission, ParticipantID: "p-claim", SubmissionID: "sub-1", Digest: digestB}, at)
	require.ErrorIs(t, err, procedure.ErrStageClosed)
	_, err = procedure.Decide(c, procedure.Act{Kind: procedure.ActRequestTermination, ParticipantID: "p-claim", TerminationID: "term-2"}, at)
	require.ErrorIs(t, err, procedure.ErrStageClosed, "a settled case is not terminated")
	require.Equal(t, at, c.TribunalFacts().SettledAt)
	require.Equal(t, procedure.StatusSettled, procedure.Statuses[7])
}

// The record serves the consent award as the case's award, told to the
// sides it orders and final at once.
func TestTheRecordServesAFinalConsentAward(t *testing.T) {
	c := open(t, standardPlan(), true)
	c = settle(t, c, settlement.Act{Kind: settlement.ActPropose, Side: "claimant", ParticipantID: "p-claim", Terms: textTerms()}, t0).Case
	p, _ := c.Settlement.Pending()
	c = settle(t, c, settlement.Act{Kind: settlement.ActAccept, Side: "respondent", ParticipantID: "p-resp", TermsDigest: p.TermsDigest}, t0).Case
	// The scan assigns a reviewer alone.
	assigned := tribunal.Tick(c.Tribunal, c.TribunalFacts(), []tribunal.Candidate{{CredentialID: "cred-rev", Role: tribunal.Reviewer, PartnerID: "tribunal-rev"}}, t0)
	c = c.WithTribunal(assigned, t0).Case
	require.Equal(t, tribunal.StageSettlement, c.Tribunal.Stage)

	at := t0.Add(time.Hour)
	recorded := settle(t, c, settlement.Act{Kind: settlement.ActRecord, MemberID: "cred-rev", TermsDigest: p.TermsDigest}, at)
	c = recorded.Case
	require.Equal(t, []procedure.EventType{"award_issued", "award_final"}, types(recorded.Events))
	require.ElementsMatch(t, []procedure.Partner{claimantPartner, respondentPartner}, recorded.Events[0].Recipients, "an award ordering nothing goes to both sides")
	require.Contains(t, recorded.Events[1].Recipients, procedure.Partner{Tenant: "t1", Environment: "sandbox", PartnerID: "tribunal-rev"}, "award_final to the tribunal too")
	require.Equal(t, procedure.StatusSettled, c.Status(), "the case ended by settlement")
	require.True(t, c.Tribunal.Awarded())
	require.Equal(t, tribunal.StageAwarded, c.Tribunal.Stage)
	require.Equal(t, c.Settlement.AwardHash, c.Tribunal.Award.AwardHash)
	require.True(t, c.AfterAward.Final())
	require.Equal(t, "consent", c.AfterAward.FinalBy)
	_, ok := procedure.NextDeadline(c)
	require.False(t, ok, "nothing is due")
	require.Equal(t, c.Tribunal.Award, c.AfterAwardFacts().Award, "the consent award is the served award executions carry out")
}
