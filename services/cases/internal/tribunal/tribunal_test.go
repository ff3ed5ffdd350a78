package tribunal_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func digest(s string) string { return award.Hash([]byte(s)) }

func rubric() *award.Configuration {
	return &award.Configuration{Provider: "rubric", Model: "pcourt-rubric", ModelVersion: "1", InstructionsDigest: digest("rubric"),
		OutputSchemaVersion: award.SchemaProposal, Tools: []string{}}
}

// rubricV2 is another configuration: what an upheld challenge moves to.
func rubricV2() *award.Configuration {
	c := rubric()
	c.ModelVersion = "2"
	return c
}

// pool: two adjudicators and two reviewers of their own partners, and one
// adjudicator of the claimant's partner (a conflict).
func pool() []tribunal.Candidate {
	return []tribunal.Candidate{
		{CredentialID: "cred-conflicted", Role: tribunal.Adjudicator, PartnerID: "partner-claimant", Configuration: rubric()},
		{CredentialID: "cred-ai-1", Role: tribunal.Adjudicator, PartnerID: "tribunal-ai-1", Configuration: rubric()},
		{CredentialID: "cred-ai-2", Role: tribunal.Adjudicator, PartnerID: "tribunal-ai-2", Configuration: rubricV2()},
		{CredentialID: "cred-rev-1", Role: tribunal.Reviewer, PartnerID: "tribunal-rev-1"},
		{CredentialID: "cred-rev-2", Role: tribunal.Reviewer, PartnerID: "tribunal-rev-2"},
	}
}

func facts() tribunal.Facts {
	return tribunal.Facts{
		CaseID: "case-1", ExternalCaseID: "ext-1", Environment: "sandbox", RecordClosed: true,
		OpenedAt: t0.Add(-10 * 24 * time.Hour), RecordAt: t0,
		Rules: award.Rules{Version: "pcourt-rules-2026-11", Hash: strings.Repeat("1", 64)},
		Parties: []tribunal.Party{
			{ParticipantID: "p-c", Side: tribunal.Claimant, PartnerID: "partner-claimant", PrincipalID: "org-a", Joined: true},
			{ParticipantID: "p-r", Side: tribunal.Respondent, PartnerID: "partner-respondent", PrincipalID: "org-b", Joined: true},
		},
		Record: []tribunal.Item{
			{ID: "answer", Side: tribunal.Respondent, Digest: digest("answer")},
			{ID: "sub-1", Side: tribunal.Claimant, Digest: digest("exhibit")},
		},
		ClaimMinor: 42000, ClaimCurrency: "USD",
		Windows: tribunal.WindowsByRules["pcourt-rules-2026-11"],
	}
}

func proposal() *award.Proposal {
	return &award.Proposal{
		Outcome:   award.OutcomeClaimPartiallyUpheld,
		Remedies:  []award.Remedy{{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: 21000, Currency: "USD", DueBy: "2026-12-11T00:00:00.000Z"}},
		Reasons:   "The service was paid for and half of it was provided.",
		Citations: []award.Citation{{ItemID: "sub-1", Digest: digest("exhibit"), Pinpoint: "invoice"}},
	}
}

// assigned returns the state right after assignment: run-1 open.
func assigned(t *testing.T) tribunal.State {
	t.Helper()
	out := tribunal.Tick(tribunal.State{}, facts(), pool(), t0)
	require.Equal(t, []tribunal.EventType{tribunal.EventTribunalAssigned, tribunal.EventAdjudicationRequested}, types(out.Notes))
	requireTickRow(t, tribunal.State{}, out)
	return out.State
}

func types(notes []tribunal.Note) []tribunal.EventType {
	var out []tribunal.EventType
	for _, n := range notes {
		out = append(out, n.Type)
	}
	return out
}

func act(t *testing.T, s tribunal.State, a tribunal.Act, at time.Time) tribunal.Outcome {
	t.Helper()
	out, err := tribunal.Decide(s, facts(), a, at)
	require.NoError(t, err)
	requireActRow(t, s, a.Kind, out)
	return out
}

func TestAssignmentSkipsConflictsAndPinsTheConfiguration(t *testing.T) {
	s := assigned(t)
	require.Equal(t, "cred-ai-1", s.Adjudicator.CredentialID, "the claimant's partner's adjudicator is conflicted out")
	require.Equal(t, "cred-rev-1", s.Reviewer.CredentialID)
	require.Equal(t, "rubric", s.Adjudicator.Configuration.Provider)
	want, err := rubric().Digest()
	require.NoError(t, err)
	require.Equal(t, want, s.Adjudicator.ConfigurationDigest)
	require.Equal(t, t0.Add(3*24*time.Hour), s.ChallengeDeadline)
	run, _ := s.CurrentRun()
	require.Equal(t, tribunal.RunOpen, run.Status)
	require.Equal(t, tribunal.RecordDigest(facts().Record), run.InputDigest)
}

func TestAnEmptyPoolPutsTheAssignmentOffQuietly(t *testing.T) {
	out := tribunal.Tick(tribunal.State{}, facts(), nil, t0)
	requireTickRow(t, tribunal.State{}, out)
	require.True(t, out.Quiet)
	require.Empty(t, out.Notes)
	require.Equal(t, t0.Add(time.Minute), out.State.AssignAfter)
	at, ok := tribunal.NextDeadline(out.State, facts())
	require.True(t, ok)
	require.Equal(t, t0.Add(time.Minute), at)
	require.False(t, tribunal.NeedsPool(out.State, facts(), t0.Add(30*time.Second)))
}

// The whole decision, as the AAA-ICDR workflow has it: the AI proposes, a
// human reviews, both sides see the dispositive part, the human signs.
func TestFromProposalToSignedAward(t *testing.T) {
	s := assigned(t)
	run, _ := s.CurrentRun()
	at := t0.Add(time.Hour)
	out := act(t, s, tribunal.Act{Kind: tribunal.ActFileProposal, MemberID: "cred-ai-1", RunID: run.ID, InputDigest: run.InputDigest, Proposal: proposal()}, at)
	require.Equal(t, []tribunal.EventType{tribunal.EventProposalFiled}, types(out.Notes))
	s = out.State
	require.Equal(t, tribunal.StageReview, s.Stage)

	s = act(t, s, tribunal.Act{Kind: tribunal.ActGiveOpinion, MemberID: "cred-rev-1", Opinion: tribunal.OpinionAgree}, at).State
	s = act(t, s, tribunal.Act{Kind: tribunal.ActAttest, MemberID: "cred-rev-1"}, at).State
	out = act(t, s, tribunal.Act{Kind: tribunal.ActOpenPreAward, MemberID: "cred-rev-1"}, at)
	require.Equal(t, at.Add(2*24*time.Hour), out.Notes[0].DeadlineAt)
	s = out.State
	s = act(t, s, tribunal.Act{Kind: tribunal.ActAnswerPreAward, Side: "claimant", ParticipantID: "p-c", Errors: []string{}}, at).State
	out = act(t, s, tribunal.Act{Kind: tribunal.ActAnswerPreAward, Side: "respondent", ParticipantID: "p-r", Errors: []string{"the amount is written twice"}}, at)
	require.Equal(t, []tribunal.EventType{tribunal.EventPreAwardReviewClosed}, types(out.Notes))
	s = out.State

	out = act(t, s, tribunal.Act{Kind: tribunal.ActSignOff, MemberID: "cred-rev-1"}, at)
	require.Equal(t, tribunal.StageAwarded, out.State.Stage)
	require.NotNil(t, out.Award)
	b, err := out.Award.Bytes()
	require.NoError(t, err)
	require.Equal(t, award.Hash(b), out.State.Award.AwardHash, "awardHash is the SHA-256 of the json artifact's bytes")
	require.Equal(t, []string{"respondent"}, out.State.Award.Ordered)
	require.Equal(t, tribunal.ToOrdered, out.Notes[0].Audience)
	require.True(t, out.Notes[0].ActionRequired, "the respondent is ordered to pay")
	require.Equal(t, tribunal.ToUnordered, out.Notes[1].Audience)
	require.False(t, out.Notes[1].ActionRequired)
	require.Equal(t, "cred-ai-1", out.Award.Tribunal.Adjudicator.MemberID)
	require.Equal(t, "used", out.Award.Tribunal.Runs[0].Status)

	_, err = tribunal.Decide(out.State, facts(), tribunal.Act{Kind: tribunal.ActSignOff, MemberID: "cred-rev-1"}, at)
	require.ErrorIs(t, err, &tribunal.RefusalError{Code: tribunal.CodeAwardIssued}, "a second sign-off")
}

func TestProposalsOutsideTheRecordOrTheClaimAreRefused(t *testing.T) {
	s := assigned(t)
	run, _ := s.CurrentRun()
	file := func(edit func(p *award.Proposal), inputDigest string) error {
		p := proposal()
		edit(p)
		out, err := tribunal.Decide(s, facts(), tribunal.Act{Kind: tribunal.ActFileProposal, MemberID: "cred-ai-1", RunID: run.ID, InputDigest: inputDigest, Proposal: p}, t0)
		if err != nil {
			require.Equal(t, s, out.State, "a refusal leaves the state unchanged")
		}
		return err
	}
	same := func(*award.Proposal) {}
	for name, c := range map[string]struct {
		edit   func(p *award.Proposal)
		digest string
		code   tribunal.RefusalCode
	}{
		"another record":          {same, digest("other"), tribunal.CodeInputDigestMismatch},
		"an item not in it":       {func(p *award.Proposal) { p.Citations[0].ItemID = "sub-9" }, run.InputDigest, tribunal.CodeCitationOutsideRecord},
		"a misquoted digest":      {func(p *award.Proposal) { p.Citations[0].Digest = digest("forged") }, run.InputDigest, tribunal.CodeCitationDigestMismatch},
		"an unknown outcome":      {func(p *award.Proposal) { p.Outcome = "claim_doubled" }, run.InputDigest, tribunal.CodeOutcomeNotAllowed},
		"more than the claim":     {func(p *award.Proposal) { p.Remedies[0].AmountMinor = 42001 }, run.InputDigest, tribunal.CodeRemedyExceedsClaim},
		"another currency":        {func(p *award.Proposal) { p.Remedies[0].Currency = "EUR" }, run.InputDigest, tribunal.CodeRemedyExceedsClaim},
		"the claimant paying":     {func(p *award.Proposal) { p.Remedies[0].Payer, p.Remedies[0].Payee = "claimant", "respondent" }, run.InputDigest, tribunal.CodeRemedyExceedsClaim},
		"no citation":             {func(p *award.Proposal) { p.Citations = nil }, run.InputDigest, tribunal.CodeInvalidAct},
		"a due date in the past":  {func(p *award.Proposal) { p.Remedies[0].DueBy = "2026-01-01T00:00:00.000Z" }, run.InputDigest, tribunal.CodeInvalidAct},
		"dismissed with a remedy": {func(p *award.Proposal) { p.Outcome = award.OutcomeClaimDismissed }, run.InputDigest, tribunal.CodeOutcomeNotAllowed},
	} {
		err := file(c.edit, c.digest)
		require.ErrorIs(t, err, &tribunal.RefusalError{Code: c.code}, name)
	}
	require.NoError(t, file(same, run.InputDigest))
}

func TestEvaluationOutcomesAreTheAllowedOnes(t *testing.T) {
	f := facts()
	f.Evaluation = true
	f.ReviewPolicy = "always"
	f.EvaluationDefinition = &award.Evaluation{Question: "Was the API provisioned?", Criteria: []string{"logs"}, AllowedOutcomes: []string{"provisioned", "not_provisioned"}}
	tick := tribunal.Tick(tribunal.State{}, f, pool(), t0)
	requireTickRow(t, tribunal.State{}, tick)
	s := tick.State
	run, _ := s.CurrentRun()
	p := &award.Proposal{Outcome: award.OutcomeClaimUpheld, Remedies: []award.Remedy{}, Reasons: "r", Citations: []award.Citation{{ItemID: "sub-1", Digest: digest("exhibit")}}}
	_, err := tribunal.Decide(s, f, tribunal.Act{Kind: tribunal.ActFileProposal, MemberID: "cred-ai-1", RunID: run.ID, InputDigest: run.InputDigest, Proposal: p}, t0)
	require.ErrorIs(t, err, &tribunal.RefusalError{Code: tribunal.CodeOutcomeNotAllowed})
	p.Outcome = "not_provisioned"
	out, err := tribunal.Decide(s, f, tribunal.Act{Kind: tribunal.ActFileProposal, MemberID: "cred-ai-1", RunID: run.ID, InputDigest: run.InputDigest, Proposal: p}, t0)
	require.NoError(t, err)
	s = out.State
	for _, a := range []tribunal.Act{
		{Kind: tribunal.ActGiveOpinion, MemberID: "cred-rev-1", Opinion: tribunal.OpinionAgree},
		{Kind: tribunal.ActAttest, MemberID: "cred-rev-1"},
		{Kind: tribunal.ActOpenPreAward, MemberID: "cred-rev-1"},
		{Kind: tribunal.ActAnswerPreAward, Side: "claimant", Errors: []string{}},
		{Kind: tribunal.ActAnswerPreAward, Side: "respondent", Errors: []string{}},
		{Kind: tribunal.ActSignOff, MemberID: "cred-rev-1"},
	} {
		out, err := tribunal.Decide(s, f, a, t0)
		require.NoError(t, err, a.Kind)
		requireActRow(t, s, a.Kind, out)
		s = out.State
	}
	require.Equal(t, tribunal.StageEvaluationIssued, s.Stage, "review policy always: both sides accept first")
	out, err = tribunal.Decide(s, f, tribunal.Act{Kind: tribunal.ActAcceptEvaluation, Side: "claimant"}, t0)
	require.NoError(t, err)
	requireActRow(t, s, tribunal.ActAcceptEvaluation, out)
	require.Nil(t, out.Award)
	s = out.State
	out, err = tribunal.Decide(s, f, tribunal.Act{Kind: tribunal.ActAcceptEvaluation, Side: "respondent"}, t0)
	require.NoError(t, err)
	requireActRow(t, s, tribunal.ActAcceptEvaluation, out)
	require.NotNil(t, out.Award, "an accepted evaluation is issued as the award")
	require.Equal(t, "evaluation", out.Award.CaseMode)
	require.Equal(t, "not_provisioned", out.Award.Outcome)
}

func TestRefusalsInOrder(t *testing.T) {
	s := assigned(t)
	cases := []struct {
		name string
		a    tribunal.Act
		code tribunal.RefusalCode
	}{
		{"an unknown act", tribunal.Act{Kind: "decide_alone", MemberID: "cred-rev-1"}, tribunal.CodeInvalidAct},
		{"a stranger", tribunal.Act{Kind: tribunal.ActSignOff, MemberID: "cred-ai-2"}, tribunal.CodeNotTribunal},
		{"the adjudicator signing", tribunal.Act{Kind: tribunal.ActSignOff, MemberID: "cred-ai-1"}, tribunal.CodeWrongRole},
		{"a sign-off without a proposal", tribunal.Act{Kind: tribunal.ActSignOff, MemberID: "cred-rev-1"}, tribunal.CodeNoProposal},
		{"an opinion while adjudicating", tribunal.Act{Kind: tribunal.ActGiveOpinion, MemberID: "cred-rev-1", Opinion: tribunal.OpinionAgree}, tribunal.CodeDecisionStage},
		{"a proposal for another run", tribunal.Act{Kind: tribunal.ActFileProposal, MemberID: "cred-ai-1", RunID: "run-9", InputDigest: digest("x"), Proposal: proposal()}, tribunal.CodeRunMismatch},
		{"a challenge after its window", tribunal.Act{Kind: tribunal.ActChallenge, Side: "respondent", Text: "the model is biased"}, tribunal.CodeChallengeWindowClosed},
	}
	for _, c := range cases {
		at := t0
		if c.code == tribunal.CodeChallengeWindowClosed {
			at = t0.Add(3 * 24 * time.Hour)
		}
		out, err := tribunal.Decide(s, facts(), c.a, at)
		require.ErrorIs(t, err, &tribunal.RefusalError{Code: c.code}, c.name)
		require.Equal(t, s, out.State, c.name)
	}
	f := facts()
	f.Terminated = true
	_, err := tribunal.Decide(s, f, tribunal.Act{Kind: tribunal.ActSignOff, MemberID: "cred-rev-1"}, t0)
	require.ErrorIs(t, err, &tribunal.RefusalError{Code: tribunal.CodeCaseClosed})
}

func TestAnUpheldChallengeReplacesTheAdjudicatorAndRestartsTheRun(t *testing.T) {
	s := assigned(t)
	out := act(t, s, tribunal.Act{Kind: tribunal.ActChallenge, Side: "respondent", ParticipantID: "p-r", Text: "the rubric ignores the answer"}, t0)
	require.Equal(t, tribunal.ToOtherSide, out.Notes[0].Audience)
	s = out.State
	_, err := tribunal.Decide(s, facts(), tribunal.Act{Kind: tribunal.ActChallenge, Side: "respondent", Text: "again"}, t0)
	require.ErrorIs(t, err, &tribunal.RefusalError{Code: tribunal.CodeChallengePending})

	out = act(t, s, tribunal.Act{Kind: tribunal.ActResolveChallenge, MemberID: "cred-rev-1", ChallengeID: "challenge-1", Uphold: true, Text: "fair point", Candidates: pool()}, t0)
	require.Equal(t, []tribunal.EventType{tribunal.EventConfigurationChallengeDone, tribunal.EventTribunalAssigned, tribunal.EventAdjudicationRequested}, types(out.Notes))
	s = out.State
	require.Equal(t, "cred-ai-2", s.Adjudicator.CredentialID)
	require.Contains(t, s.Recused, "cred-ai-1")
	require.Len(t, s.Runs, 2)
	require.Equal(t, tribunal.RunSuperseded, s.Runs[0].Status)
	require.Equal(t, "cred-ai-2", s.Runs[1].AdjudicatorID)

	_, err = tribunal.Decide(s, facts(), tribunal.Act{Kind: tribunal.ActRecuse, MemberID: "cred-ai-2", Text: "conflict found", Candidates: pool()}, t0)
	require.ErrorIs(t, err, &tribunal.RefusalError{Code: tribunal.CodeNoReplacement}, "nobody is left to replace it")
}

func TestHumanAttentionPausesUntilTheReviewerResumes(t *testing.T) {
	s := assigned(t)
	run, _ := s.CurrentRun()
	out := act(t, s, tribunal.Act{Kind: tribunal.ActAskHumanAttention, MemberID: "cred-ai-1", RunID: run.ID, Text: "the record is in a language I do not read"}, t0)
	require.Equal(t, tribunal.StageHumanAttention, out.State.Stage)
	out = act(t, out.State, tribunal.Act{Kind: tribunal.ActResume, MemberID: "cred-rev-1", Text: "the respondent's answer is a translation"}, t0)
	require.Equal(t, []tribunal.EventType{tribunal.EventHumanAttentionResumed, tribunal.EventAdjudicationRequested}, types(out.Notes))
	next, _ := out.State.CurrentRun()
	require.Equal(t, "run-2", next.ID)
	require.Equal(t, "the respondent's answer is a translation", next.Instructions)
}

func TestPreAwardReviewClosesAtItsDeadlineAndAChangedOutcomeReopensIt(t *testing.T) {
	s := assigned(t)
	run, _ := s.CurrentRun()
	s = act(t, s, tribunal.Act{Kind: tribunal.ActFileProposal, MemberID: "cred-ai-1", RunID: run.ID, InputDigest: run.InputDigest, Proposal: proposal()}, t0).State
	s = act(t, s, tribunal.Act{Kind: tribunal.ActGiveOpinion, MemberID: "cred-rev-1", Opinion: tribunal.OpinionAgree}, t0).State
	s = act(t, s, tribunal.Act{Kind: tribunal.ActAttest, MemberID: "cred-rev-1"}, t0).State
	s = act(t, s, tribunal.Act{Kind: tribunal.ActOpenPreAward, MemberID: "cred-rev-1"}, t0).State
	at, ok := tribunal.NextDeadline(s, facts())
	require.True(t, ok)
	tick := tribunal.Tick(s, facts(), nil, at)
	requireTickRow(t, s, tick)
	require.Equal(t, []tribunal.EventType{tribunal.EventPreAwardReviewClosed}, types(tick.Notes))
	s = tick.State

	over := proposal()
	over.Outcome, over.Remedies[0].AmountMinor = award.OutcomeClaimUpheld, 42000
	s = act(t, s, tribunal.Act{Kind: tribunal.ActOverride, MemberID: "cred-rev-1", Proposal: over}, at).State
	_, err := tribunal.Decide(s, facts(), tribunal.Act{Kind: tribunal.ActSignOff, MemberID: "cred-rev-1"}, at)
	require.ErrorIs(t, err, &tribunal.RefusalError{Code: tribunal.CodePreAwardReviewRequired}, "the sides have not seen the overridden outcome")
}

// A challenge upheld after its configuration left the case (the
// adjudicator recused) is recorded as upheld and changes nothing more.
func TestAChallengeUpheldAfterItsConfigurationLeftChangesNothingMore(t *testing.T) {
	s := assigned(t)
	s = act(t, s, tribunal.Act{Kind: tribunal.ActChallenge, Side: "claimant", ParticipantID: "p-c", Text: "the rubric ignores the tickets"}, t0).State
	s = act(t, s, tribunal.Act{Kind: tribunal.ActRecuse, MemberID: "cred-ai-1", Text: "a conflict came to light", Candidates: pool()}, t0).State
	require.Equal(t, "cred-ai-2", s.Adjudicator.CredentialID)
	runs := len(s.Runs)
	out := act(t, s, tribunal.Act{Kind: tribunal.ActResolveChallenge, MemberID: "cred-rev-1", ChallengeID: "challenge-1", Uphold: true, Text: "moot but fair", Candidates: pool()}, t0)
	require.Equal(t, []tribunal.EventType{tribunal.EventConfigurationChallengeDone}, types(out.Notes))
	require.Equal(t, "cred-ai-2", out.State.Adjudicator.CredentialID)
	require.Len(t, out.State.Runs, runs)
	require.Equal(t, tribunal.ChallengeUpheld, out.State.Challenges[0].Status)
}
