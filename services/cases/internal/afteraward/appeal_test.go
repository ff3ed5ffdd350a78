package afteraward_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// appealFacts are facts() where an appeal filed now goes to cred-app and
// its fee is collected with x402 (or as collection says).
func appealFacts(collection afteraward.FeeCollection) afteraward.Facts {
	f := facts()
	f.AppellateReviewer = &tribunal.Member{CredentialID: "cred-app", Role: tribunal.Reviewer, PartnerID: "tribunal-app"}
	f.AppealFeeCollection = collection
	f.AppealFees = afteraward.AppealFeesByRules["pcourt-rules-2026-11"]
	return f
}

func appeal(side string) afteraward.Act {
	return afteraward.Act{Kind: afteraward.ActFileAppeal, Side: side, ParticipantID: "p-" + side[:1],
		Grounds: []afteraward.Ground{{Kind: afteraward.GroundErroneousFact, Text: "The delivery was proven."}}}
}

func appellate(kind afteraward.ActKind, member string) afteraward.Act {
	return afteraward.Act{Kind: kind, MemberID: member, AppealID: "apl_1"}
}

// paid files the respondent's appeal at day 1 and pays its fee at day 2.
func paid(t *testing.T, f afteraward.Facts) afteraward.State {
	t.Helper()
	s := decide(t, afteraward.State{}, f, appeal("respondent"), t0.Add(day)).State
	s = decide(t, s, f, afteraward.Act{Kind: afteraward.ActHoldFee, Side: "respondent", AppealID: "apl_1", PaymentID: "pay-1"}, t0.Add(2*day)).State
	out := decide(t, s, f, afteraward.Act{Kind: afteraward.ActPayFee, AppealID: "apl_1", PaymentID: "pay-1",
		FeePayment: &afteraward.FeePayment{Network: "eip155:84532", Payer: "0xabc", Transaction: "0xtx"}}, t0.Add(2*day))
	require.Equal(t, []afteraward.EventType{afteraward.EventAppealBriefingOpened}, types(out.Notes))
	return out.State
}

func TestAnAppealIsFiledWithinItsWindowAndItsFeeIsQuoted(t *testing.T) {
	f := appealFacts(afteraward.CollectX402)
	out := decide(t, afteraward.State{}, f, appeal("respondent"), t0.Add(day))
	require.Equal(t, []afteraward.EventType{afteraward.EventAppealFiled}, types(out.Notes))
	ap := out.State.Appeals[0]
	require.Equal(t, afteraward.AppealAwaitingFee, ap.Status)
	require.Equal(t, "cred-app", ap.Reviewer.CredentialID)
	// 3 % of the 50.00 USD claim is 1.50; the floor is 50.00.
	require.Equal(t, int64(5_000), ap.Fee.AmountMinor)
	require.Equal(t, t0.Add(8*day), ap.Fee.DueAt)
	require.True(t, out.State.HearsAppeal("cred-app"))

	refused(t, out.State, f, appeal("claimant"), t0.Add(day), afteraward.CodeAppealPending)
	refused(t, afteraward.State{}, f, appeal("claimant"), t0.Add(14*day), afteraward.CodeAppealWindowClosed)
	none := f
	none.AppellateReviewer = nil
	refused(t, afteraward.State{}, none, appeal("claimant"), t0.Add(day), afteraward.CodeNoAppellateReviewer)
	closed := f
	closed.Windows.Appeals = 0
	refused(t, afteraward.State{}, closed, appeal("claimant"), t0.Add(day), afteraward.CodeAppealNotAllowed)
	refused(t, afteraward.State{}, f, afteraward.Act{Kind: afteraward.ActFileAppeal, Side: "claimant", ParticipantID: "p-c"}, t0.Add(day), afteraward.CodeInvalidAct)
}

func TestAnInvoicedFeeOpensTheBriefingAtOnce(t *testing.T) {
	f := appealFacts(afteraward.CollectInvoice)
	out := decide(t, afteraward.State{}, f, appeal("claimant"), t0.Add(day))
	require.Equal(t, []afteraward.EventType{afteraward.EventAppealFiled, afteraward.EventAppealBriefingOpened}, types(out.Notes))
	require.Equal(t, afteraward.AppealBriefing, out.State.Appeals[0].Status)
	require.Equal(t, afteraward.FeeInvoiced, out.State.Appeals[0].Fee.Status)
	require.Equal(t, t0.Add(15*day), out.State.Appeals[0].AnswerDeadline)
}

func TestTheBriefingWaitsForTheFee(t *testing.T) {
	f := appealFacts(afteraward.CollectX402)
	s := decide(t, afteraward.State{}, f, appeal("respondent"), t0.Add(day)).State
	answer := afteraward.Act{Kind: afteraward.ActAnswerAppeal, Side: "claimant", ParticipantID: "p-c", AppealID: "apl_1", Text: "The award is right."}
	refused(t, s, f, answer, t0.Add(day), afteraward.CodeAppealFeeUnpaid)
	refused(t, s, f, appellate(afteraward.ActCloseBriefing, "cred-app"), t0.Add(day), afteraward.CodeAppealFeeUnpaid)
	// Only the appellant pays, and one payment holds the fee at a time.
	refused(t, s, f, afteraward.Act{Kind: afteraward.ActHoldFee, Side: "claimant", AppealID: "apl_1", PaymentID: "pay-1"}, t0.Add(day), afteraward.CodeNotAppellant)
	held := decide(t, s, f, afteraward.Act{Kind: afteraward.ActHoldFee, Side: "respondent", AppealID: "apl_1", PaymentID: "pay-1"}, t0.Add(day)).State
	refused(t, held, f, afteraward.Act{Kind: afteraward.ActHoldFee, Side: "respondent", AppealID: "apl_1", PaymentID: "pay-2"}, t0.Add(day), afteraward.CodeAppealFeeHeld)
	// A payment that moved nothing is replaced by naming it.
	decide(t, held, f, afteraward.Act{Kind: afteraward.ActHoldFee, Side: "respondent", AppealID: "apl_1", PaymentID: "pay-2", Replaces: "pay-1"}, t0.Add(day))

	s = paid(t, f)
	again := afteraward.Act{Kind: afteraward.ActPayFee, AppealID: "apl_1", PaymentID: "pay-1", FeePayment: &afteraward.FeePayment{Network: "eip155:84532", Payer: "0xabc", Transaction: "0xtx"}}
	require.Empty(t, decide(t, s, f, again, t0.Add(3*day)).Notes, "the same settlement recorded twice records nothing")
	refused(t, s, f, afteraward.Act{Kind: afteraward.ActHoldFee, Side: "respondent", AppealID: "apl_1", PaymentID: "pay-9"}, t0.Add(3*day), afteraward.CodeAppealFeePaid)
}

func TestAnUnpaidFeeLapsesTheAppealAndTheAwardBecomesFinal(t *testing.T) {
	f := appealFacts(afteraward.CollectX402)
	s := decide(t, afteraward.State{}, f, appeal("respondent"), t0.Add(day)).State
	at, ok := afteraward.NextDeadline(s, f)
	require.True(t, ok)
	require.Equal(t, t0.Add(8*day), at)
	out := afteraward.Tick(s, f, at)
	require.Equal(t, []afteraward.EventType{afteraward.EventAppealLapsed}, types(out.Notes))
	require.Equal(t, afteraward.AppealLapsed, out.State.Appeals[0].Status)

	at, ok = afteraward.NextDeadline(out.State, f)
	require.True(t, ok)
	require.Equal(t, t0.Add(14*day), at)
	require.Equal(t, []afteraward.EventType{afteraward.EventAwardFinal}, types(afteraward.Tick(out.State, f, at).Notes))

	// A payment held before the due date gets its grace to settle.
	held := decide(t, s, f, afteraward.Act{Kind: afteraward.ActHoldFee, Side: "respondent", AppealID: "apl_1", PaymentID: "pay-1"}, t0.Add(8*day-time.Minute)).State
	require.Empty(t, afteraward.Tick(held, f, t0.Add(8*day)).Notes)
	refused(t, s, f, afteraward.Act{Kind: afteraward.ActHoldFee, Side: "respondent", AppealID: "apl_1", PaymentID: "pay-1"}, t0.Add(8*day), afteraward.CodeAppealFeeNotPayable)
}

func TestAnOpenAppealHoldsFinalityAndRequests(t *testing.T) {
	f := appealFacts(afteraward.CollectX402)
	s := paid(t, f)
	require.Empty(t, afteraward.Tick(s, f, t0.Add(30*day)).Notes)
	_, ok := afteraward.NextDeadline(s, f)
	require.False(t, ok, "an appeal in briefing waits for the appellate reviewer")
	refused(t, s, f, afteraward.Act{Kind: afteraward.ActFileRequest, Side: "claimant", ParticipantID: "p-c", RequestKind: afteraward.Correction, Text: "typo"}, t0.Add(3*day), afteraward.CodeAppealPending)
	s = decide(t, s, f, waive("claimant"), t0.Add(3*day)).State
	s = decide(t, s, f, waive("respondent"), t0.Add(3*day)).State
	require.False(t, s.Final(), "waivers do not end an open appeal")
}

func TestTheAppellateReviewerDecidesAfterTheBriefing(t *testing.T) {
	f := appealFacts(afteraward.CollectX402)
	s := paid(t, f)
	answer := afteraward.Act{Kind: afteraward.ActAnswerAppeal, Side: "respondent", ParticipantID: "p-r", AppealID: "apl_1", Text: "x"}
	refused(t, s, f, answer, t0.Add(3*day), afteraward.CodeNotAppellee)
	refused(t, s, f, appellate(afteraward.ActCloseBriefing, "cred-rev"), t0.Add(3*day), afteraward.CodeNotAppellateReviewer)
	refused(t, s, f, appellate(afteraward.ActCloseBriefing, "cred-app"), t0.Add(3*day), afteraward.CodeAnswerWindowOpen)
	decide(t, s, f, appellate(afteraward.ActCloseBriefing, "cred-app"), t0.Add(16*day))

	answer.Side, answer.ParticipantID, answer.Text = "claimant", "p-c", "The award is right."
	out := decide(t, s, f, answer, t0.Add(3*day))
	require.Equal(t, []afteraward.EventType{afteraward.EventAppealAnswered}, types(out.Notes))
	refused(t, out.State, f, answer, t0.Add(3*day), afteraward.CodeAppealAnswered)
	s = out.State

	decision := afteraward.Act{Kind: afteraward.ActDecideAppeal, MemberID: "cred-app", AppealID: "apl_1", Decision: award.AppealSetAside,
		Outcome: award.OutcomeClaimDismissed, Reasons: "Delivery was proven by the carrier's record."}
	refused(t, s, f, decision, t0.Add(4*day), afteraward.CodeBriefingOpen)
	s = decide(t, s, f, appellate(afteraward.ActCloseBriefing, "cred-app"), t0.Add(4*day)).State
	refused(t, s, f, answer, t0.Add(4*day), afteraward.CodeBriefingClosed)

	wrong := decision
	wrong.Outcome = award.OutcomeClaimPartiallyUpheld
	refused(t, s, f, wrong, t0.Add(5*day), afteraward.CodeInvalidAct)
	out = decide(t, s, f, decision, t0.Add(5*day))
	require.Equal(t, []afteraward.EventType{afteraward.EventAppealDecided, afteraward.EventAwardFinal}, types(out.Notes))
	require.Equal(t, award.OutcomeClaimDismissed, out.Award.Outcome)
	require.Empty(t, out.Award.Remedies)
	require.Equal(t, f.Award.AwardHash, out.Award.Corrects)
	require.Equal(t, &award.Appeal{AppealID: "apl_1", Appellant: "respondent", Decision: award.AppealSetAside, Reviewer: award.Member{MemberID: "cred-app", Kind: "individual"}}, out.Award.Appeal)
	require.Equal(t, "award:case-1:2", out.Award.AwardID)
	require.True(t, out.State.Final())
	require.Equal(t, "appeal_decided", out.State.FinalBy)
	require.Equal(t, out.Issued.AwardHash, out.State.Appeals[0].IssuedAwardHash)
	require.Equal(t, []tribunal.Issued{*f.Award}, out.State.Superseded)
}

func TestAModifiedAwardKeepsItsOutcomeWithinTheClaim(t *testing.T) {
	f := appealFacts(afteraward.CollectInvoice)
	s := decide(t, afteraward.State{}, f, appeal("claimant"), t0.Add(day)).State
	s = decide(t, s, f, appellate(afteraward.ActCloseBriefing, "cred-app"), t0.Add(16*day)).State
	more := []award.Remedy{{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: 9_000, Currency: "USD", DueBy: "2027-01-27T10:00:00.000Z"}}
	modify := afteraward.Act{Kind: afteraward.ActDecideAppeal, MemberID: "cred-app", AppealID: "apl_1", Decision: award.AppealModified, Remedies: more, Reasons: "More."}
	refused(t, s, f, modify, t0.Add(17*day), afteraward.CodeRemedyExceeds)
	modify.Remedies[0].AmountMinor = 5_000
	out := decide(t, s, f, modify, t0.Add(17*day))
	require.Equal(t, award.OutcomeClaimPartiallyUpheld, out.Award.Outcome)
	require.Equal(t, int64(5_000), out.Award.Remedies[0].AmountMinor)

	affirm := afteraward.Act{Kind: afteraward.ActDecideAppeal, MemberID: "cred-app", AppealID: "apl_1", Decision: award.AppealAffirmed, Reasons: "No error."}
	out = decide(t, s, f, affirm, t0.Add(17*day))
	require.Equal(t, f.Served.Remedies, out.Award.Remedies)
	require.Contains(t, out.Award.Reasons, "Appeal apl_1 (affirmed): No error.")
	refused(t, out.State, f, affirm, t0.Add(17*day), afteraward.CodeAppealClosed)
}
