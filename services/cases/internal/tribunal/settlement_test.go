package tribunal_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// settledFacts are a case whose sides agreed a settlement at t0, before
// its record closed.
func settledFacts() tribunal.Facts {
	f := facts()
	f.RecordClosed, f.RecordAt, f.SettledAt = false, time.Time{}, t0
	return f
}

// A settled case is decided by nobody: the scan assigns it a reviewer
// from the pool, by the same conflict check, and no adjudicator.
func TestASettledCaseIsAssignedAReviewerAlone(t *testing.T) {
	f := settledFacts()
	at, ok := tribunal.NextDeadline(tribunal.State{}, f)
	require.True(t, ok)
	require.Equal(t, t0, at, "due at once")
	require.True(t, tribunal.NeedsPool(tribunal.State{}, f, t0))

	out := tribunal.Tick(tribunal.State{}, f, pool(), t0)
	requireTickRow(t, tribunal.State{}, out)
	require.Equal(t, []tribunal.EventType{tribunal.EventTribunalAssigned}, types(out.Notes))
	require.Equal(t, tribunal.StageSettlement, out.State.Stage)
	require.Equal(t, "cred-rev-1", out.State.Reviewer.CredentialID)
	require.Nil(t, out.State.Adjudicator, "nobody decides a settlement")
	require.Empty(t, out.State.Runs)
	_, ok = tribunal.NextDeadline(out.State, f)
	require.False(t, ok, "then nothing is due: the reviewer records")
	require.Empty(t, tribunal.Tick(out.State, f, pool(), t0.Add(time.Hour)).Notes)

	// A conflicted reviewer is passed over; with nobody eligible the
	// assignment waits the retry, quietly.
	conflicted := []tribunal.Candidate{{CredentialID: "cred-rev-x", Role: tribunal.Reviewer, PartnerID: "partner-respondent"}}
	waiting := tribunal.Tick(tribunal.State{}, f, conflicted, t0)
	requireTickRow(t, tribunal.State{}, waiting)
	require.True(t, waiting.Quiet)
	require.Nil(t, waiting.State.Reviewer)
	at, _ = tribunal.NextDeadline(waiting.State, f)
	require.Equal(t, t0.Add(time.Minute), at)

	f.Terminated = true
	require.False(t, tribunal.NeedsPool(tribunal.State{}, f, t0))
}

// A settlement ends the decision where it stands: the run not used ends,
// and no decision act is open any more.
func TestASettlementEndsTheRunAndClosesTheDecision(t *testing.T) {
	s := assigned(t)
	ended := tribunal.EndForSettlement(s)
	require.Equal(t, tribunal.StageSettlement, ended.Stage)
	run, _ := ended.CurrentRun()
	require.Equal(t, tribunal.RunEnded, run.Status)
	cur, _ := s.CurrentRun()
	require.Equal(t, tribunal.RunOpen, cur.Status, "the state given is not changed")

	f := facts()
	f.SettledAt = t0
	_, err := tribunal.Decide(ended, f, tribunal.Act{Kind: tribunal.ActFileProposal, MemberID: "cred-ai-1", RunID: run.ID, InputDigest: run.InputDigest, Proposal: proposal()}, t0)
	require.ErrorIs(t, err, &tribunal.RefusalError{Code: tribunal.CodeDecisionStage})
	_, err = tribunal.Decide(ended, f, tribunal.Act{Kind: tribunal.ActSignOff, MemberID: "cred-rev-1"}, t0)
	require.ErrorIs(t, err, &tribunal.RefusalError{Code: tribunal.CodeDecisionStage})
	require.Empty(t, tribunal.Tick(ended, f, pool(), t0.Add(time.Hour)).Notes)

	require.Equal(t, tribunal.State{}, tribunal.EndForSettlement(tribunal.State{}), "an unassigned decision waits for its reviewer")
}

// The consent award is served as the decision's award, told to the sides
// as any award: once to the sides it orders to act, once to the others.
func TestRecordConsentServesTheConsentAward(t *testing.T) {
	s := tribunal.EndForSettlement(assigned(t))
	issued := tribunal.Issued{AwardID: "award:case-1:1", AwardHash: digest("consent"), IssuedAt: t0, Outcome: award.OutcomeSettledByConsent, Ordered: []string{tribunal.Respondent}}
	out := tribunal.RecordConsent(s, issued)
	require.Equal(t, tribunal.StageAwarded, out.State.Stage)
	require.Equal(t, issued, *out.State.Award)
	require.Len(t, out.Notes, 2)
	require.Equal(t, tribunal.ToOrdered, out.Notes[0].Audience)
	require.Equal(t, []string{tribunal.Respondent}, out.Notes[0].Sides)
	require.True(t, out.Notes[0].ActionRequired)
	require.Equal(t, tribunal.ToUnordered, out.Notes[1].Audience)
	require.Equal(t, []string{tribunal.Claimant}, out.Notes[1].Sides)
	require.Nil(t, s.Award, "the state given is not changed")
}

// A settlement's remedies are checked as an award's: their shape, due
// later, and within the claim.
func TestCheckRemediesHoldsTermsToWhatAnAwardMayOrder(t *testing.T) {
	due := "2026-12-27T00:00:00.000Z"
	pay := func(amount int64) award.Remedy {
		return award.Remedy{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: amount, Currency: "USD", DueBy: due}
	}
	f := facts()
	require.NoError(t, tribunal.CheckRemedies(nil, f, t0), "terms without remedies")
	require.NoError(t, tribunal.CheckRemedies([]award.Remedy{pay(42000), {Kind: award.RemedyPerformance, Obligor: "claimant", Description: "return the key", DueBy: due}}, f, t0))
	for name, tc := range map[string]struct {
		remedies []award.Remedy
		code     tribunal.RefusalCode
	}{
		"above the claim":   {[]award.Remedy{pay(30000), pay(12001)}, tribunal.CodeRemedyExceedsClaim},
		"claimant pays":     {[]award.Remedy{{Kind: award.RemedyPayment, Payer: "claimant", Payee: "respondent", AmountMinor: 100, Currency: "USD", DueBy: due}}, tribunal.CodeRemedyExceedsClaim},
		"another currency":  {[]award.Remedy{{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: 100, Currency: "EUR", DueBy: due}}, tribunal.CodeRemedyExceedsClaim},
		"due already":       {[]award.Remedy{{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: 100, Currency: "USD", DueBy: "2026-11-27T10:00:00.000Z"}}, tribunal.CodeInvalidAct},
		"no amount":         {[]award.Remedy{pay(0)}, tribunal.CodeInvalidAct},
		"unknown kind":      {[]award.Remedy{{Kind: "apology", DueBy: due}}, tribunal.CodeInvalidAct},
		"eleven remedies":   {[]award.Remedy{pay(1), pay(1), pay(1), pay(1), pay(1), pay(1), pay(1), pay(1), pay(1), pay(1), pay(1)}, tribunal.CodeInvalidAct},
		"performance blank": {[]award.Remedy{{Kind: award.RemedyPerformance, Obligor: "claimant", DueBy: due}}, tribunal.CodeInvalidAct},
	} {
		t.Run(name, func(t *testing.T) {
			err := tribunal.CheckRemedies(tc.remedies, f, t0)
			require.ErrorIs(t, err, &tribunal.RefusalError{Code: tc.code}, "%v", err)
		})
	}
	f.Evaluation = true
	require.ErrorIs(t, tribunal.CheckRemedies([]award.Remedy{pay(1)}, f, t0), &tribunal.RefusalError{Code: tribunal.CodeRemedyExceedsClaim}, "an evaluation orders no remedies")
	require.NoError(t, tribunal.CheckRemedies(nil, f, t0))
}
