// Package events is the webhooks service's Kafka boundary: it consumes
// pc.cases.events.v2 (the cases-event-envelope-v2 value defined with the
// cases service, api/events/cases-event-envelope-v2.schema.json) and fans
// each event out to one delivery per subscribed, enabled endpoint of every
// recipient partner.
package events

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// Topic and schema names, as api declares them beside the schemas.
const (
	Topic          = api.CaseEventsTopic
	EnvelopeSchema = api.CaseEventEnvelopeSchema
	BodySchema     = api.CaseEventSchema
)

// Envelope is the value of a pc.cases.events.v2 record.
type Envelope struct {
	SchemaVersion string          `json:"schemaVersion"`
	Recipients    []Recipient     `json:"recipients"`
	Event         json.RawMessage `json:"event"`
}

// Recipient is a partner to notify.
type Recipient struct {
	Tenant      string `json:"tenant"`
	Environment string `json:"environment"`
	PartnerID   string `json:"partnerId"`
}

// Body is the case-event-v2 callback body, the typed value a delivery
// stores and the sender encodes (delivery.Event).
type Body = delivery.Event

var (
	idPattern      = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,160}$`)
	instantPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)
)

// ErrInvalidEvent is a record that can never be delivered as it is.
var ErrInvalidEvent = errors.New("invalid case event")

func strict(raw []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

// ParseBody decodes and checks an event body without deliveryId.
func ParseBody(raw []byte) (Body, error) {
	var b Body
	if err := strict(raw, &b); err != nil {
		return b, fmt.Errorf("%w: %w", ErrInvalidEvent, err)
	}
	switch {
	case b.SchemaVersion != BodySchema:
		return b, fmt.Errorf("%w: schemaVersion %q", ErrInvalidEvent, b.SchemaVersion)
	case !idPattern.MatchString(b.EventID):
		return b, fmt.Errorf("%w: eventId %q", ErrInvalidEvent, b.EventID)
	case b.DeliveryID != "":
		return b, fmt.Errorf("%w: the envelope's event carries a deliveryId", ErrInvalidEvent)
	case b.Sequence < 1 || b.Type == "" || b.CaseID == "":
		return b, fmt.Errorf("%w: sequence, type and caseId are required", ErrInvalidEvent)
	case !instantPattern.MatchString(b.OccurredAt) || (b.DeadlineAt != "" && !instantPattern.MatchString(b.DeadlineAt)):
		return b, fmt.Errorf("%w: instants must be UTC with 3 fractional digits and Z", ErrInvalidEvent)
	}
	return b, nil
}

// DeliveryID is the id of the delivery of event to endpoint made by the
// fan-out: derived from both, so consuming the record again finds the same
// delivery instead of making a second one.
func DeliveryID(eventID, endpointID string) string {
	sum := sha256.Sum256([]byte(eventID + "\x00" + endpointID))
	return "dlv_" + hex.EncodeToString(sum[:12])
}

// EndpointLister lists a partner's endpoints.
type EndpointLister interface {
	List(ctx context.Context, scope endpoints.Scope) ([]endpoints.Endpoint, error)
}

// DeliveryCreator stores and schedules deliveries, idempotently by id, and
// reports which were new.
type DeliveryCreator interface {
	CreateAll(ctx context.Context, ds []store.Delivery) ([]bool, error)
}

// Fanout turns consumed case events into scheduled deliveries.
type Fanout struct {
	Endpoints  EndpointLister
	Deliveries DeliveryCreator
	Logger     *slog.Logger
	Now        func() time.Time
	// Scheduled, when set, is called after a record scheduled new
	// deliveries, due now: the sender of this replica claims them at once
	// instead of at its next poll.
	Scheduled func()
}

// Handle is the kafka.Handler of pc.cases.events.v2. It returns only after
// every delivery is stored and scheduled, so the offset is committed after
// the schedule. A record that is not a valid event can never succeed and
// is dead-lettered at once (kafka.Permanent); a store error leaves it to be
// retried until the store is back.
func (f *Fanout) Handle(ctx context.Context, msg kafka.Message) error {
	if msg.Schema != EnvelopeSchema {
		return kafka.Permanent(fmt.Errorf("%w: record schema %q, want %s", ErrInvalidEvent, msg.Schema, EnvelopeSchema))
	}
	var env Envelope
	if err := strict(msg.Value, &env); err != nil {
		return kafka.Permanent(fmt.Errorf("%w: envelope: %w", ErrInvalidEvent, err))
	}
	if env.SchemaVersion != EnvelopeSchema {
		return kafka.Permanent(fmt.Errorf("%w: envelope schemaVersion %q", ErrInvalidEvent, env.SchemaVersion))
	}
	body, err := ParseBody(env.Event)
	if err != nil {
		return kafka.Permanent(err)
	}
	if msg.EventID != "" && msg.EventID != body.EventID {
		return kafka.Permanent(fmt.Errorf("%w: pc-event-id %q differs from the body eventId %q", ErrInvalidEvent, msg.EventID, body.EventID))
	}
	now := f.Now()
	var ds []store.Delivery
	for _, r := range env.Recipients {
		scope := endpoints.Scope{Tenant: r.Tenant, Environment: r.Environment, PartnerID: r.PartnerID}
		eps, err := f.Endpoints.List(ctx, scope)
		if err != nil {
			return fmt.Errorf("fanning out event %s: %w", body.EventID, err)
		}
		for _, e := range eps {
			if !e.Wants(body.Type) {
				continue
			}
			ds = append(ds, store.Delivery{
				ID: DeliveryID(body.EventID, e.ID), EventID: body.EventID, EventType: body.Type, EndpointID: e.ID,
				Tenant: r.Tenant, Environment: r.Environment, PartnerID: r.PartnerID,
				Status: store.StatusScheduled, Trigger: store.TriggerScheduled,
				CreatedAt: now, NextAttemptAt: now, Event: body,
			})
		}
	}
	created := 0
	if len(ds) > 0 {
		// One round trip for all of the record's deliveries.
		isNew, err := f.Deliveries.CreateAll(ctx, ds)
		if err != nil {
			return fmt.Errorf("fanning out event %s: %w", body.EventID, err)
		}
		for _, n := range isNew {
			if n {
				created++
			}
		}
	}
	if created > 0 && f.Scheduled != nil {
		f.Scheduled()
	}
	f.Logger.InfoContext(ctx, "case event fanned out", "event", body.EventID, "type", body.Type,
		"recipients", len(env.Recipients), "deliveries", created)
	return nil
}
