package delivery

import "encoding/json"

// Event is the case-event-v2 body a delivery sends (api/events), held as a
// typed value from the moment it is consumed: the fan-out decodes and
// checks it once, the store keeps it inside the delivery's record, and the
// sender encodes it once per attempt with Body. Nothing on the way out
// parses it again.
//
// The field order is the order of the body on the wire; DeliveryID is empty
// in the consumed event and in the stored record, and set by Body.
type Event struct {
	SchemaVersion  string `json:"schemaVersion"`
	EventID        string `json:"eventId"`
	DeliveryID     string `json:"deliveryId,omitempty"`
	Sequence       int64  `json:"sequence"`
	Type           string `json:"type"`
	OccurredAt     string `json:"occurredAt"`
	CaseID         string `json:"caseId"`
	ExternalCaseID string `json:"externalCaseId"`
	ActionRequired bool   `json:"actionRequired"`
	DeadlineAt     string `json:"deadlineAt,omitempty"`
}

// Body returns the exact bytes one delivery of e sends, signs and shows
// (requestBody): the event with its deliveryId, members in schema order.
func (e Event) Body(deliveryID string) []byte {
	e.DeliveryID = deliveryID
	b, err := json.Marshal(e)
	if err != nil {
		// A struct of strings, an integer and a boolean always encodes.
		panic("encoding a case event: " + err.Error())
	}
	return b
}
