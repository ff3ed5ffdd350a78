// Package events is the cases service's Kafka boundary: it decodes the
// filings service's case-opened facts and applies them (Opened), and it
// encodes case events into the case-event-v2 body and the
// cases-event-envelope-v2 Kafka value (Encode). Case events reach Kafka
// through the store's outbox and the libs/outbox relay.
package events

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// Body is the case-event-v2 body as the cases service produces it: every
// property but deliveryId, which the webhooks service sets per delivery
// attempt. Property order is fixed; nothing else may be added.
type Body struct {
	SchemaVersion  string `json:"schemaVersion"`
	EventID        string `json:"eventId"`
	Sequence       int64  `json:"sequence"`
	Type           string `json:"type"`
	OccurredAt     string `json:"occurredAt"`
	CaseID         string `json:"caseId"`
	ExternalCaseID string `json:"externalCaseId"`
	ActionRequired bool   `json:"actionRequired"`
	DeadlineAt     string `json:"deadlineAt,omitempty"`
}

// Recipient is a partner to notify.
type Recipient struct {
	Tenant      string `json:"tenant"`
	Environment string `json:"environment"`
	PartnerID   string `json:"partnerId"`
}

// Envelope is the value of a pc.cases.events.v2 record
// (api.CaseEventEnvelopeSchema).
type Envelope struct {
	SchemaVersion string          `json:"schemaVersion"`
	Recipients    []Recipient     `json:"recipients"`
	Event         json.RawMessage `json:"event"`
}

// idAndSequence is where an encoded body leaves room for the event id and
// sequence, which the store's recording step fills in.
const (
	idAndSequence = `"eventId":"","sequence":0,`
	idOpen        = `"eventId":"`
)

// Encode turns an event of case c into the parts the store records.
func Encode(c procedure.Case, ev procedure.Event) (store.Event, error) {
	body := Body{
		SchemaVersion: api.CaseEventSchema, Type: string(ev.Type), OccurredAt: procedure.Timestamp(ev.OccurredAt),
		CaseID: c.ID, ExternalCaseID: c.ExternalID, ActionRequired: ev.ActionRequired,
	}
	if !ev.DeadlineAt.IsZero() {
		body.DeadlineAt = procedure.Timestamp(ev.DeadlineAt)
	}
	template, err := json.Marshal(body)
	if err != nil {
		return store.Event{}, fmt.Errorf("encoding %s event of case %s: %w", ev.Type, c.ID, err)
	}
	i := bytes.Index(template, []byte(idAndSequence))
	if i < 0 || bytes.Count(template, []byte(idAndSequence)) != 1 {
		return store.Event{}, fmt.Errorf("encoding %s event of case %s: no unique room for id and sequence", ev.Type, c.ID)
	}
	env := Envelope{SchemaVersion: api.CaseEventEnvelopeSchema, Recipients: []Recipient{}, Event: json.RawMessage("null")}
	for _, p := range ev.Recipients {
		env.Recipients = append(env.Recipients, Recipient{Tenant: p.Tenant, Environment: p.Environment, PartnerID: p.PartnerID})
	}
	envelope, err := json.Marshal(env)
	if err != nil {
		return store.Event{}, fmt.Errorf("encoding envelope of case %s: %w", c.ID, err)
	}
	const tail = `null}`
	if !bytes.HasSuffix(envelope, []byte(tail)) {
		return store.Event{}, fmt.Errorf("encoding envelope of case %s: event is not last", c.ID)
	}
	var export *store.ExportNote
	if ev.ExportSide != "" {
		export = &store.ExportNote{CaseID: c.ID, Side: ev.ExportSide, ReadyAt: ev.OccurredAt, Recipients: ev.Recipients}
	}
	return store.Event{
		Export:       export,
		BodyHead:     template[:i+len(idOpen)],
		BodyTail:     template[i+len(idAndSequence)-1:], // from the comma before "type"
		EnvelopeHead: envelope[:len(envelope)-len(tail)],
		EnvelopeTail: []byte("}"),
	}, nil
}

// EncodeAll encodes every event of an outcome.
func EncodeAll(c procedure.Case, evs []procedure.Event) ([]store.Event, error) {
	out := make([]store.Event, 0, len(evs))
	for _, ev := range evs {
		e, err := Encode(c, ev)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}
