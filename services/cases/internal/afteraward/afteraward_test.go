package afteraward_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

const day = 24 * time.Hour

// served is an award of 30.00 USD from the respondent to the claimant
// and a performance by the respondent, issued at t0.
func served() (award.Document, *tribunal.Issued) {
	doc := award.Document{
		SchemaVersion: award.SchemaAward, AwardID: "award:case-1:1", CaseID: "case-1", ExternalCaseID: "ext-1",
		Environment: "sandbox", CaseMode: "proceeding",
		Rules:    award.Rules{Version: "pcourt-rules-2026-11", Hash: strings.Repeat("1", 64)},
		Parties:  []award.Party{{Side: "claimant", ParticipantID: "p-c", PrincipalID: "org-a"}, {Side: "respondent", ParticipantID: "p-r", PrincipalID: "org-b"}},
		Outcome:  award.OutcomeClaimPartiallyUpheld,
		Remedies: []award.Remedy{{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: 3000, Currency: "USD", DueBy: "2026-12-27T10:00:00.000Z"}},
		Reasons:  "The goods were not delivered.", Citations: []award.Citation{},
		Tribunal: award.Tribunal{Adjudicator: award.Member{MemberID: "cred-ai", Kind: "autonomous_agent"}, Reviewer: award.Member{MemberID: "cred-rev", Kind: "individual"},
			ReviewerOpinion: "agree", Runs: []award.Run{}, Configuration: award.Configuration{Tools: []string{}}},
		IssuedAt: "2026-11-27T10:00:00.000Z",
	}
	b, err := doc.Bytes()
	if err != nil {
		panic(err)
	}
	return doc, &tribunal.Issued{AwardID: doc.AwardID, AwardHash: award.Hash(b), IssuedAt: t0, Outcome: doc.Outcome, Ordered: []string{"respondent"}}
}

func facts() afteraward.Facts {
	doc, issued := served()
	return afteraward.Facts{
		CaseID: "case-1", Environment: "sandbox", Award: issued, Served: &doc, ReviewerID: "cred-rev",
		Sides: []string{"claimant", "respondent"}, Windows: afteraward.WindowsByRules["pcourt-rules-2026-11"],
		Decision: tribunal.Facts{CaseID: "case-1", ClaimMinor: 5000, ClaimCurrency: "USD"},
		Modes:    []afteraward.Mode{afteraward.ModeX402rRefund, afteraward.ModePartyReported},
	}
}

func decide(t *testing.T, s afteraward.State, f afteraward.Facts, a afteraward.Act, at time.Time) afteraward.Outcome {
	t.Helper()
	out, err := afteraward.Decide(s, f, a, at)
	require.NoError(t, err)
	return out
}

func refused(t *testing.T, s afteraward.State, f afteraward.Facts, a afteraward.Act, at time.Time, code afteraward.RefusalCode) {
	t.Helper()
	out, err := afteraward.Decide(s, f, a, at)
	require.ErrorIs(t, err, &afteraward.RefusalError{Code: code})
	require.Equal(t, s, out.State, "a refused act changes nothing")
}

func types(notes []afteraward.Note) []afteraward.EventType {
	var out []afteraward.EventType
	for _, n := range notes {
		out = append(out, n.Type)
	}
	return out
}

func waive(side string) afteraward.Act {
	return afteraward.Act{Kind: afteraward.ActWaive, Side: side, ParticipantID: "p-" + side[:1]}
}

func TestTheAwardIsFinalWhenItsRequestWindowLapsesWithNothingPending(t *testing.T) {
	f := facts()
	s := afteraward.State{}
	at, ok := afteraward.NextDeadline(s, f)
	require.True(t, ok)
	require.Equal(t, t0.Add(14*day), at)
	require.Empty(t, afteraward.Tick(s, f, at.Add(-time.Millisecond)).Notes)

	out := afteraward.Tick(s, f, at)
	require.Equal(t, []afteraward.EventType{afteraward.EventAwardFinal}, types(out.Notes))
	require.Equal(t, "window_lapsed", out.State.FinalBy)
	_, ok = afteraward.NextDeadline(out.State, f)
	require.False(t, ok)
}

func TestAPendingRequestHoldsFinality(t *testing.T) {
	f := facts()
	s := decide(t, afteraward.State{}, f, afteraward.Act{Kind: afteraward.ActFileRequest, Side: "claimant", ParticipantID: "p-c",
		RequestKind: afteraward.Interpretation, Text: "What does delivered mean?"}, t0.Add(day)).State
	require.Empty(t, afteraward.Tick(s, f, t0.Add(20*day)).Notes)

	s = decide(t, s, f, afteraward.Act{Kind: afteraward.ActDecideRequest, MemberID: "cred-rev", RequestID: "par_1", Reasons: "Clear as written."}, t0.Add(21*day)).State
	require.Equal(t, afteraward.RequestDenied, s.Requests[0].Status)
	require.Equal(t, []afteraward.EventType{afteraward.EventAwardFinal}, types(afteraward.Tick(s, f, t0.Add(21*day)).Notes))
}

func TestBothSidesWaivingMakesTheAwardFinalAtOnce(t *testing.T) {
	f := facts()
	out := decide(t, afteraward.State{}, f, waive("claimant"), t0.Add(time.Hour))
	require.Equal(t, []afteraward.EventType{afteraward.EventRecourseWaived}, types(out.Notes))
	refused(t, out.State, f, waive("claimant"), t0.Add(time.Hour), afteraward.CodeRecourseWaived)
	refused(t, out.State, f, afteraward.Act{Kind: afteraward.ActFileRequest, Side: "claimant", ParticipantID: "p-c", RequestKind: afteraward.Correction, Text: "typo"}, t0.Add(time.Hour), afteraward.CodeRecourseWaived)

	out = decide(t, out.State, f, waive("respondent"), t0.Add(2*time.Hour))
	require.Equal(t, []afteraward.EventType{afteraward.EventRecourseWaived, afteraward.EventAwardFinal}, types(out.Notes))
	require.Equal(t, "waiver", out.State.FinalBy)
	refused(t, out.State, f, afteraward.Act{Kind: afteraward.ActFileRequest, Side: "respondent", ParticipantID: "p-r", RequestKind: afteraward.Correction, Text: "typo"}, t0.Add(3*time.Hour), afteraward.CodeAwardFinal)
}

func TestAGrantedCorrectionIssuesANewAwardNamingTheOldOne(t *testing.T) {
	f := facts()
	s := decide(t, afteraward.State{}, f, afteraward.Act{Kind: afteraward.ActFileRequest, Side: "respondent", ParticipantID: "p-r",
		RequestKind: afteraward.Correction, Text: "The amount is 20.00, not 30.00."}, t0.Add(day)).State

	refused(t, s, f, afteraward.Act{Kind: afteraward.ActDecideRequest, MemberID: "cred-ai", RequestID: "par_1", Reasons: "x", Grant: true, CorrectedReasons: "y"}, t0.Add(2*day), afteraward.CodeNotReviewer)
	refused(t, s, f, afteraward.Act{Kind: afteraward.ActDecideRequest, MemberID: "cred-rev", RequestID: "par_9", Reasons: "x"}, t0.Add(2*day), afteraward.CodeRequestNotFound)
	tooMuch := f.Served.Remedies[0]
	tooMuch.AmountMinor = 6000
	refused(t, s, f, afteraward.Act{Kind: afteraward.ActDecideRequest, MemberID: "cred-rev", RequestID: "par_1", Reasons: "x", Grant: true, Remedies: []award.Remedy{tooMuch}}, t0.Add(2*day), afteraward.CodeRemedyExceeds)

	corrected := f.Served.Remedies[0]
	corrected.AmountMinor = 2000
	out := decide(t, s, f, afteraward.Act{Kind: afteraward.ActDecideRequest, MemberID: "cred-rev", RequestID: "par_1", Reasons: "A clerical error.",
		Grant: true, Remedies: []award.Remedy{corrected}}, t0.Add(2*day))
	require.Equal(t, []afteraward.EventType{afteraward.EventRequestDecided, afteraward.EventAwardAmended}, types(out.Notes))
	require.Equal(t, f.Award.AwardHash, out.Award.Corrects)
	require.Equal(t, "award:case-1:2", out.Award.AwardID)
	require.Equal(t, int64(2000), out.Award.Remedies[0].AmountMinor)
	require.Equal(t, f.Served.Outcome, out.Award.Outcome, "a correction keeps the outcome")
	b, err := out.Award.Bytes()
	require.NoError(t, err)
	require.Equal(t, award.Hash(b), out.Issued.AwardHash)
	require.Equal(t, []tribunal.Issued{*f.Award}, out.State.Superseded)
	require.Equal(t, out.Issued.AwardHash, out.State.Requests[0].IssuedAwardHash)

	refused(t, out.State, f, afteraward.Act{Kind: afteraward.ActDecideRequest, MemberID: "cred-rev", RequestID: "par_1", Reasons: "x"}, t0.Add(3*day), afteraward.CodeRequestDecided)
}

func TestRequestsAreRefusedOutsideTheirWindow(t *testing.T) {
	f := facts()
	a := afteraward.Act{Kind: afteraward.ActFileRequest, Side: "claimant", ParticipantID: "p-c", RequestKind: afteraward.AdditionalAward, Text: "The interest claim was not decided."}
	refused(t, afteraward.State{}, f, a, t0.Add(14*day), afteraward.CodeWindowClosed)
	s := decide(t, afteraward.State{}, f, a, t0.Add(day)).State
	refused(t, s, f, a, t0.Add(day), afteraward.CodeRequestPending)
	f.Award = nil
	refused(t, afteraward.State{}, f, a, t0.Add(day), afteraward.CodeNoAward)
}

func final(t *testing.T, f afteraward.Facts) afteraward.State {
	s := decide(t, afteraward.State{}, f, waive("claimant"), t0).State
	return decide(t, s, f, waive("respondent"), t0).State
}

func refund(f afteraward.Facts, key string) afteraward.Act {
	return afteraward.Act{Kind: afteraward.ActExecute, Side: "claimant", ParticipantID: "p-c", Mode: afteraward.ModeX402rRefund, Action: "refund",
		AwardHash: f.Award.AwardHash, KeyDigest: key,
		Payment: &afteraward.Payment{Network: "eip155:84532", Payer: "0x" + strings.Repeat("ab", 20), Transaction: "0x" + strings.Repeat("cd", 32)}}
}

func TestAnExecutionNeedsTheFinalServedAward(t *testing.T) {
	f := facts()
	refused(t, afteraward.State{}, f, refund(f, "k1"), t0, afteraward.CodeAwardNotFinal)
	s := final(t, f)
	wrong := refund(f, "k1")
	wrong.AwardHash = strings.Repeat("0", 64)
	refused(t, s, f, wrong, t0, afteraward.CodeAwardHashMismatch)
	beyond := refund(f, "k1")
	beyond.RemedyIndex = 1
	refused(t, s, f, beyond, t0, afteraward.CodeNotExecutable)
	escrow := refund(f, "k1")
	escrow.Mode, escrow.Action, escrow.Payment = afteraward.ModeEscrowRelease, "release", nil
	refused(t, s, f, escrow, t0, afteraward.CodeModeUnavailable)
	mismatched := refund(f, "k1")
	mismatched.Action = "release"
	refused(t, s, f, mismatched, t0, afteraward.CodeInvalidAct)
}

func TestAnExecutionRunsOnceAndAFailedOneIsResumedByItsOwnCommand(t *testing.T) {
	f := facts()
	s := final(t, f)
	out := decide(t, s, f, refund(f, "k1"), t0.Add(time.Minute))
	require.Equal(t, "ex:case-1:1", out.ExecutionID)
	require.Equal(t, []afteraward.EventType{afteraward.EventExecutionRequested}, types(out.Notes))
	s = out.State
	refused(t, s, f, refund(f, "k2"), t0.Add(time.Minute), afteraward.CodeExecutionExists)

	s = decide(t, s, f, afteraward.Act{Kind: afteraward.ActRecordAttempt, ExecutionID: out.ExecutionID, Detail: "facilitator unreachable"}, t0.Add(2*time.Minute)).State
	require.Equal(t, afteraward.ExecutionFailed, s.Executions[0].Status)

	again := decide(t, s, f, refund(f, "k1"), t0.Add(3*time.Minute))
	require.True(t, again.Resume)
	require.Equal(t, out.ExecutionID, again.ExecutionID)
	require.Equal(t, s, again.State, "resuming changes nothing until the rail answers")

	done := afteraward.Act{Kind: afteraward.ActRecordAttempt, ExecutionID: out.ExecutionID, Completion: &afteraward.Completion{Transaction: "0x" + strings.Repeat("ef", 32)}}
	o := decide(t, s, f, done, t0.Add(4*time.Minute))
	require.Equal(t, []afteraward.EventType{afteraward.EventExecutionCompleted}, types(o.Notes))
	s = o.State
	require.Len(t, s.Executions[0].Attempts, 2)
	o = decide(t, s, f, done, t0.Add(5*time.Minute))
	require.Empty(t, o.Notes, "a completion recorded twice records nothing")
	require.Equal(t, s, o.State)
	refused(t, s, f, refund(f, "k1"), t0.Add(6*time.Minute), afteraward.CodeAlreadyExecuted)
}

func TestOnlyTheObligedSideReportsItsOwnExecution(t *testing.T) {
	f := facts()
	s := final(t, f)
	report := afteraward.Act{Kind: afteraward.ActExecute, Side: "claimant", ParticipantID: "p-c", Mode: afteraward.ModePartyReported, Action: "report",
		AwardHash: f.Award.AwardHash, KeyDigest: "k", Reference: "wire 2026-11-28/0042"}
	refused(t, s, f, report, t0, afteraward.CodeNotObligor)
	report.Side, report.ParticipantID = "respondent", "p-r"
	out := decide(t, s, f, report, t0)
	require.Equal(t, afteraward.ExecutionCompleted, out.State.Executions[0].Status)
	require.Equal(t, "wire 2026-11-28/0042", out.State.Executions[0].Completion.Reference)
}

func TestExecutionIDsNameTheirCase(t *testing.T) {
	id := afteraward.ExecutionID("case:with:colons", 12)
	c, ok := afteraward.CaseOfExecution(id)
	require.True(t, ok)
	require.Equal(t, "case:with:colons", c)
	for _, bad := range []string{"", "ex:", "ex:case", "ex::1", "case:1", "ex:case:x"} {
		_, ok := afteraward.CaseOfExecution(bad)
		require.False(t, ok, bad)
	}
}

// Decide is pure: concurrent decisions on one state never share memory.
func TestDecideSharesNoMemory(t *testing.T) {
	f := facts()
	s := final(t, f)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { _, _ = afteraward.Decide(s, f, refund(f, "k"), t0) })
	}
	wg.Wait()
	require.Empty(t, s.Executions)
}

// Only the side a refund pays names where it goes.
func TestOnlyThePayeeCommandsARefund(t *testing.T) {
	f := facts()
	s := final(t, f)
	a := refund(f, "k1")
	a.Side, a.ParticipantID = "respondent", "p-r"
	refused(t, s, f, a, t0, afteraward.CodeNotPayee)
}
