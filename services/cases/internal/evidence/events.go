package evidence

// EventType is a case event type the evidence emits (case-event-v2 type).
type EventType string

// The evidence's event types.
const (
	EventDisclosed          EventType = "evidence_disclosed"
	EventDescriptionChanged EventType = "exhibit_description_changed"
	EventChallenged         EventType = "authenticity_challenged"
	EventChallengeAnswered  EventType = "authenticity_challenge_answered"
	EventChallengeResolved  EventType = "authenticity_challenge_resolved"
	EventDefectReported     EventType = "processing_defect_reported"
	EventDefectResolved     EventType = "processing_defect_resolved"
)

// EventSpec is one row of the evidence's event table.
type EventSpec struct {
	Type           EventType
	When           string
	ActionRequired bool // for the side the event asks to act, where there is one
}

// EventSpecs is the evidence's event table (docs/evidence.md). Every event
// goes to both sides and the tribunal members assigned: once an exhibit is
// disclosed, both sides may know everything done to it.
var EventSpecs = []EventSpec{
	{EventDisclosed, "a side disclosed one of its exhibits: it is in the record and the other side may read it", false},
	{EventDescriptionChanged, "the offering side edited a disclosed exhibit's description", false},
	{EventChallenged, "the other side challenged a disclosed exhibit's authenticity, with grounds; the offering side answers", true},
	{EventChallengeAnswered, "the offering side answered a challenge; the tribunal resolves it", true},
	{EventChallengeResolved, "the tribunal resolved a challenge: the exhibit is authentic or not", false},
	{EventDefectReported, "a side reported a defect in an exhibit's processing record; the tribunal resolves it", true},
	{EventDefectResolved, "the tribunal resolved a defect report: corrected or rejected", false},
}

// Note is an event the act emits: procedure turns it into a case event to
// both sides and the tribunal. Actor is the side that acted ("" for the
// tribunal); ActionBy is the side the event asks to act, if any.
type Note struct {
	Type      EventType
	Actor     string
	ActionBy  string
	ExhibitID string
}
