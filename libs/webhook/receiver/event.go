package receiver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/pcourt/pcourt/libs/webhook/signature"
)

// Event is a case event (schema case-event-v2). It is informational: fetch
// the case's authoritative state before acting on it.
type Event struct {
	SchemaVersion string
	// EventID is the identity to deduplicate by.
	EventID string
	// DeliveryID differs between deliveries of one event.
	DeliveryID string
	// Sequence orders events; it is not an identity.
	Sequence       int64
	Type           string
	OccurredAt     time.Time
	CaseID         string
	ExternalCaseID string
	ActionRequired bool
	// DeadlineAt is the zero time when the event has no deadline.
	DeadlineAt time.Time
}

// eventJSON is the wire shape; pointers tell absent members from zero ones.
type eventJSON struct {
	SchemaVersion  *string `json:"schemaVersion"`
	EventID        *string `json:"eventId"`
	DeliveryID     *string `json:"deliveryId"`
	Sequence       *int64  `json:"sequence"`
	Type           *string `json:"type"`
	OccurredAt     *string `json:"occurredAt"`
	CaseID         *string `json:"caseId"`
	ExternalCaseID *string `json:"externalCaseId"`
	ActionRequired *bool   `json:"actionRequired"`
	DeadlineAt     *string `json:"deadlineAt"`
}

// ErrEvent is wrapped by the errors of DecodeEvent.
var ErrEvent = errors.New("invalid case-event-v2 body")

// DecodeEvent decodes a case-event-v2 body strictly: no unknown members, no
// trailing data, every required member present with its type, eventId a
// valid id, sequence at least 1, and occurredAt and deadlineAt canonical
// timestamps. Verify the signature first: this is the shape check that
// follows it.
func DecodeEvent(body []byte) (Event, error) {
	var w eventJSON
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrEvent, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Event{}, fmt.Errorf("%w: data after the object", ErrEvent)
	}
	for name, missing := range map[string]bool{
		"schemaVersion": w.SchemaVersion == nil, "eventId": w.EventID == nil, "deliveryId": w.DeliveryID == nil,
		"sequence": w.Sequence == nil, "type": w.Type == nil, "occurredAt": w.OccurredAt == nil,
		"caseId": w.CaseID == nil, "externalCaseId": w.ExternalCaseID == nil, "actionRequired": w.ActionRequired == nil,
	} {
		if missing {
			return Event{}, fmt.Errorf("%w: %s is required", ErrEvent, name)
		}
	}
	if *w.SchemaVersion != signature.SchemaVersion {
		return Event{}, fmt.Errorf("%w: schemaVersion %q", ErrEvent, *w.SchemaVersion)
	}
	if !signature.ValidID(*w.EventID) {
		return Event{}, fmt.Errorf("%w: eventId %q", ErrEvent, *w.EventID)
	}
	if *w.Sequence < 1 {
		return Event{}, fmt.Errorf("%w: sequence %d is less than 1", ErrEvent, *w.Sequence)
	}
	occurred, err := signature.ParseTimestamp(*w.OccurredAt)
	if err != nil {
		return Event{}, fmt.Errorf("%w: occurredAt: %v", ErrEvent, err)
	}
	var deadline time.Time
	if w.DeadlineAt != nil {
		if deadline, err = signature.ParseTimestamp(*w.DeadlineAt); err != nil {
			return Event{}, fmt.Errorf("%w: deadlineAt: %v", ErrEvent, err)
		}
	}
	return Event{
		SchemaVersion:  *w.SchemaVersion,
		EventID:        *w.EventID,
		DeliveryID:     *w.DeliveryID,
		Sequence:       *w.Sequence,
		Type:           *w.Type,
		OccurredAt:     occurred,
		CaseID:         *w.CaseID,
		ExternalCaseID: *w.ExternalCaseID,
		ActionRequired: *w.ActionRequired,
		DeadlineAt:     deadline,
	}, nil
}
