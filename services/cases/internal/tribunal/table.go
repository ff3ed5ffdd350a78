package tribunal

import "slices"

// OpenIn returns the stages in which an act of kind k may be taken (a
// copy): Decide refuses it in any other with decision_stage_closed.
func OpenIn(k ActKind) []Stage { return slices.Clone(openIn[k]) }

// Actor says who takes an act of kind k: "adjudicator", "reviewer",
// "either member", or "a side" (a participant's act); "" for an unknown
// kind.
func Actor(k ActKind) string {
	role, ok := actor[k]
	switch {
	case !ok:
		return ""
	case role == "":
		return "a side"
	case role == "any":
		return "either member"
	}
	return string(role)
}

// Same is an ActRow's or TickRow's Next when the stage does not change.
const Same = "same"

// ActRow is one row of the decision's state table (docs/cases-procedure.md,
// "The decision"): for an accepted act under a condition, what it records,
// the stage it leads to and the events it records (award_issued once, for
// the one or two notes that carry it). Decide is the behaviour and the
// rows describe it; the package's tests hold every act they accept to one
// of its rows.
type ActRow struct {
	Act       ActKind
	Condition string // "—": the act has one outcome
	Records   string
	Next      string // a stage, or Same
	Events    []EventType
}

// ActRows are the rows of every act, in the order of Acts.
var ActRows = []ActRow{
	{ActRequestRun, "—", "the open run superseded; a new run with the reviewer's instructions, if any", Same, []EventType{EventAdjudicationRequested}},
	{ActFileProposal, "—", "the proposal and its output digest; the run proposed", string(StageReview), []EventType{EventProposalFiled}},
	{ActAskHumanAttention, "—", "the reason; the run waits for a human", string(StageHumanAttention), []EventType{EventHumanAttentionNeeded}},
	{ActResume, "—", "a new run with the reviewer's instructions", string(StageAdjudication), []EventType{EventHumanAttentionResumed, EventAdjudicationRequested}},
	{ActGiveOpinion, "—", "the opinion (revise: its reasons); an override withdrawn", Same, nil},
	{ActObject, "—", "the run superseded; a new run with the reviewer's instructions; the review cleared", string(StageAdjudication), []EventType{EventAdjudicationRequested}},
	{ActOverride, "—", "the reviewer's proposal in place of the outcome, remedies and reasons (opinion revise)", Same, nil},
	{ActAttest, "—", "the attestation", Same, nil},
	{ActOpenPreAward, "—", "the digest of the dispositive part shown, the review's deadline", string(StagePreAwardReview), []EventType{EventPreAwardReviewOpened}},
	{ActAnswerPreAward, "another joined side has still to answer", "the side's clerical errors", Same, nil},
	{ActAnswerPreAward, "every joined side has now answered", "the side's clerical errors; the review closed", string(StageReview), []EventType{EventPreAwardReviewClosed}},
	{ActSignOff, "a proceeding, or an evaluation under review policy none", "the run used; the award and its artifacts", string(StageAwarded), []EventType{EventAwardIssued}},
	{ActSignOff, "an evaluation under review policy on_request or always", "the run used; the evaluation (on_request: its acceptance deadline)", string(StageEvaluationIssued), []EventType{EventEvaluationIssued}},
	{ActRecuse, "the adjudicator, once a run opened", "the member recused; the next eligible adjudicator and a new challenge window; the run restarted", string(StageAdjudication), []EventType{EventTribunalAssigned, EventAdjudicationRequested}},
	{ActRecuse, "the reviewer, or the adjudicator before any run", "the member recused; the next eligible member of its role (an adjudicator: a new challenge window)", Same, []EventType{EventTribunalAssigned}},
	{ActIssueRuling, "—", "the ruling", Same, []EventType{EventProceduralRuling}},
	{ActChallenge, "—", "the pending challenge: its grounds and the configuration digest challenged", Same, []EventType{EventConfigurationChallenged}},
	{ActResolveChallenge, "dismissed", "the challenge dismissed with its reasons", Same, []EventType{EventConfigurationChallengeDone}},
	{ActResolveChallenge, "upheld, before any run", "the challenge upheld; its adjudicator recused; the next eligible one and a new challenge window", Same, []EventType{EventConfigurationChallengeDone, EventTribunalAssigned}},
	{ActResolveChallenge, "upheld, once a run opened", "the challenge upheld; its adjudicator recused; the next eligible one and a new challenge window; the run restarted", string(StageAdjudication), []EventType{EventConfigurationChallengeDone, EventTribunalAssigned, EventAdjudicationRequested}},
	{ActAcceptEvaluation, "another joined side has still to accept", "the side's acceptance", Same, []EventType{EventEvaluationAccepted}},
	{ActAcceptEvaluation, "every joined side has now accepted", "the side's acceptance; the award and its artifacts", string(StageAwarded), []EventType{EventEvaluationAccepted, EventAwardIssued}},
}

// TickRow is one row of what Tick applies when it is due.
type TickRow struct {
	From      Stage
	Condition string
	Records   string
	Next      string // a stage, or Same
	Events    []EventType
}

// TickRows are Tick's rows, in the order it checks them.
var TickRows = []TickRow{
	{StageUnassigned, "the sides agreed a settlement and the pool has an eligible reviewer (no adjudicator: nobody decides a settlement)", "the reviewer", string(StageSettlement), []EventType{EventTribunalAssigned}},
	{StageUnassigned, "the record is closed (a proceeding's assignment waits for it) and the pool has an eligible adjudicator and reviewer", "the members, the pinned configuration and its digest, the challenge deadline; run-1", string(StageAdjudication), []EventType{EventTribunalAssigned, EventAdjudicationRequested}},
	{StageUnassigned, "an evaluation whose record is not closed, and the pool has an eligible adjudicator and reviewer", "the members, the pinned configuration and its digest, the challenge deadline", string(StageAwaitingRecord), []EventType{EventTribunalAssigned}},
	{StageUnassigned, "the pool has no eligible adjudicator or no eligible reviewer", "the next attempt, the assignment retry later (no event)", Same, nil},
	{StageAwaitingRecord, "the record is closed", "run-1", string(StageAdjudication), []EventType{EventAdjudicationRequested}},
	{StagePreAwardReview, "the pre-award review's deadline is reached", "the review closed", string(StageReview), []EventType{EventPreAwardReviewClosed}},
	{StageEvaluationIssued, "review policy on_request and the acceptance deadline is reached", "the evaluation deemed accepted; the award and its artifacts", string(StageAwarded), []EventType{EventEvaluationAccepted, EventAwardIssued}},
}
