package tribunal

import "time"

// EventType is a case event type the decision emits (case-event-v2 type).
type EventType string

// The decision's event types.
const (
	EventTribunalAssigned           EventType = "tribunal_assigned"
	EventConfigurationChallenged    EventType = "ai_configuration_challenged"
	EventConfigurationChallengeDone EventType = "ai_configuration_challenge_resolved"
	EventAdjudicationRequested      EventType = "adjudication_requested"
	EventProposalFiled              EventType = "proposal_filed"
	EventHumanAttentionNeeded       EventType = "human_attention_needed"
	EventHumanAttentionResumed      EventType = "human_attention_resumed"
	EventPreAwardReviewOpened       EventType = "pre_award_review_opened"
	EventPreAwardReviewClosed       EventType = "pre_award_review_closed"
	EventProceduralRuling           EventType = "procedural_ruling_issued"
	EventAwardIssued                EventType = "award_issued"
	EventEvaluationIssued           EventType = "evaluation_issued"
	EventEvaluationAccepted         EventType = "evaluation_accepted"
)

// Audience says who receives a decision event.
type Audience string

// The audiences.
const (
	ToSides       Audience = "both sides and the tribunal"
	ToOtherSide   Audience = "the other side and the reviewer"
	ToAdjudicator Audience = "the adjudicator"
	ToReviewer    Audience = "the reviewer"
	ToTribunal    Audience = "the tribunal"
	// ToOrdered: the sides the award orders to act (actionRequired);
	// ToUnordered: the others. award_issued goes out once to each group.
	ToOrdered   Audience = "the sides the award orders to act"
	ToUnordered Audience = "the sides the award orders nothing"
)

// EventSpec is one row of the decision's event table.
type EventSpec struct {
	Type           EventType
	When           string
	Audience       Audience
	ActionRequired bool
}

// EventSpecs is the decision's event table (docs/tribunal.md).
var EventSpecs = []EventSpec{
	{EventTribunalAssigned, "an adjudicator and a reviewer are assigned (a settled case: the reviewer alone), or one is replaced (recusal, upheld challenge); the pinned configuration is in the case", ToSides, false},
	{EventConfigurationChallenged, "a side challenges the adjudicator's configuration", ToOtherSide, false},
	{EventConfigurationChallengeDone, "the reviewer upholds (new adjudicator, the run restarts) or dismisses a challenge", ToSides, false},
	{EventAdjudicationRequested, "a run opens: the record closed, the reviewer objected, resumed or asked again, or a challenge was upheld", ToAdjudicator, true},
	{EventProposalFiled, "the adjudicator filed its proposal", ToReviewer, true},
	{EventHumanAttentionNeeded, "the adjudicator asked for a human instead of proposing", ToReviewer, true},
	{EventHumanAttentionResumed, "the reviewer resumed the case with instructions", ToTribunal, false},
	{EventPreAwardReviewOpened, "the reviewer shows both sides the dispositive part before signing", ToSides, true},
	{EventPreAwardReviewClosed, "both sides answered the pre-award review, or its window ended", ToTribunal, false},
	{EventProceduralRuling, "the reviewer issued a procedural ruling", ToSides, false},
	{EventAwardIssued, "the reviewer signed off, an evaluation was accepted, or the reviewer recorded the sides' settlement (a consent award): the award is issued", ToOrdered, true},
	{EventAwardIssued, "the same award, to the sides it orders nothing", ToUnordered, false},
	{EventEvaluationIssued, "the reviewer signed off an evaluation that the sides accept before it is the award", ToSides, true},
	{EventEvaluationAccepted, "a side accepted the evaluation (or it was deemed accepted)", ToSides, false},
}

// Note is a decision event to record: the case turns it into a case event
// with its recipients.
type Note struct {
	Type           EventType
	Audience       Audience
	ActionRequired bool
	DeadlineAt     time.Time // zero: none
	// Actor is the side that acted, for ToOtherSide.
	Actor string
	// Sides are the sides of ToOrdered and ToUnordered.
	Sides []string
}

func note(t EventType, a Audience) Note {
	for _, s := range EventSpecs {
		if s.Type == t && s.Audience == a {
			return Note{Type: t, Audience: a, ActionRequired: s.ActionRequired}
		}
	}
	panic("tribunal: event without a spec: " + string(t) + " to " + string(a))
}
