package settlement

// EventType is a case event type this domain emits (case-event-v2 type).
type EventType string

// The settlement's event types. Recording the terms issues the consent
// award, told as every award is: award_issued (the decision's) and
// award_final (after the award's), which the case records with the
// record's own step.
const (
	EventProposed  EventType = "settlement_proposed"
	EventWithdrawn EventType = "settlement_withdrawn"
	EventAgreed    EventType = "settlement_agreed"
)

// Audience says who receives an event.
type Audience string

// The audiences. "The tribunal" is whichever members are assigned.
const (
	ToOtherSide Audience = "the other side"
	ToSides     Audience = "both sides"
	ToTribunal  Audience = "the tribunal"
)

// EventSpec is one row of the event table.
type EventSpec struct {
	Type           EventType
	When           string
	Audience       Audience
	ActionRequired bool
}

// EventSpecs is the event table (docs/settlement.md). The terms stay
// between the sides until they agree: a proposal or a withdrawal is told
// to the other side only.
var EventSpecs = []EventSpec{
	{EventProposed, "a side proposed settlement terms (replacing a pending proposal); the other side may accept them by their digest", ToOtherSide, true},
	{EventWithdrawn, "a side withdrew its pending proposal", ToOtherSide, false},
	{EventAgreed, "the other side accepted the proposed terms by their digest: the case is settled", ToSides, false},
	{EventAgreed, "the same agreement, to the tribunal assigned: the reviewer records the terms as a consent award; a run not used ends", ToTribunal, true},
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

func note(t EventType, a Audience, actor string) Note {
	for _, s := range EventSpecs {
		if s.Type == t && s.Audience == a {
			return Note{Type: t, Audience: a, ActionRequired: s.ActionRequired, Actor: actor}
		}
	}
	panic("settlement: event without a spec: " + string(t) + " to " + string(a))
}
