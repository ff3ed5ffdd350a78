package afteraward

// EventType is a case event type this domain emits (case-event-v2 type).
type EventType string

// The after-the-award event types.
const (
	EventRecourseWaived       EventType = "post_award_recourse_waived"
	EventRequestFiled         EventType = "post_award_requested"
	EventRequestDecided       EventType = "post_award_request_decided"
	EventAwardAmended         EventType = "award_amended"
	EventAwardFinal           EventType = "award_final"
	EventAppealFiled          EventType = "appeal_filed"
	EventAppealBriefingOpened EventType = "appeal_briefing_opened"
	EventAppealAnswered       EventType = "appeal_answered"
	EventAppealBriefingClosed EventType = "appeal_briefing_closed"
	EventAppealDecided        EventType = "appeal_decided"
	EventAppealLapsed         EventType = "appeal_lapsed"
	EventExecutionRequested   EventType = "execution_requested"
	EventExecutionCompleted   EventType = "execution_completed"
	EventExecutionFailed      EventType = "execution_failed"
)

// Audience says who receives an event.
type Audience string

// The audiences.
const (
	ToSides     Audience = "both sides and the tribunal"
	ToOtherSide Audience = "the other side and the reviewer"
	ToParties   Audience = "both sides"
)

// EventSpec is one row of the event table.
type EventSpec struct {
	Type           EventType
	When           string
	Audience       Audience
	ActionRequired bool
}

// EventSpecs is the event table (docs/after-award.md).
var EventSpecs = []EventSpec{
	{EventRecourseWaived, "a side waived its post-award recourse (the consent control)", ToOtherSide, false},
	{EventRequestFiled, "a side asked for a correction, an interpretation or an additional award; the reviewer decides", ToOtherSide, true},
	{EventRequestDecided, "the reviewer granted or denied a post-award request", ToSides, false},
	{EventAwardAmended, "a granted request issued a new award naming the one it amends (corrects); the new one is served", ToSides, false},
	{EventAwardFinal, "the served award became final: its request and appeal windows lapsed with nothing pending, every side waived its recourse, an appeal was decided, or it is a consent award (final on issue)", ToSides, false},
	{EventAppealFiled, "a side appealed the award; its fee is quoted (paid with x402 before the briefing) or invoiced", ToSides, false},
	{EventAppealBriefingOpened, "an appeal's fee was paid or invoiced: the other side may answer until the answer deadline", ToSides, true},
	{EventAppealAnswered, "the other side answered the appeal", ToOtherSide, false},
	{EventAppealBriefingClosed, "the appellate reviewer closed the appeal's briefing and decides", ToSides, false},
	{EventAppealDecided, "the appellate reviewer affirmed, modified or set aside the award: the appellate award is served, naming the appealed one (corrects)", ToSides, false},
	{EventAppealLapsed, "an appeal's fee was not paid by its due date; the appeal lapsed", ToSides, false},
	{EventExecutionRequested, "a side commanded an execution of the final award on a rail", ToParties, false},
	{EventExecutionCompleted, "an execution completed, with its evidence (a settled transfer or the party's report)", ToParties, false},
	{EventExecutionFailed, "an execution's attempt failed; the same command tries again", ToParties, true},
}

// Note is an event to record: the case turns it into a case event with
// its recipients.
type Note struct {
	Type           EventType
	Audience       Audience
	ActionRequired bool
	// Actor is the side that acted, for ToOtherSide.
	Actor string
}

func note(t EventType, actor string) Note {
	for _, s := range EventSpecs {
		if s.Type == t {
			return Note{Type: t, Audience: s.Audience, ActionRequired: s.ActionRequired, Actor: actor}
		}
	}
	panic("afteraward: event without a spec: " + string(t))
}
