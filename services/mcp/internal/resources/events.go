package resources

import (
	"context"
	"encoding/json"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/kafka"
)

// Topic is the cases service's case events (docs/events.md), which every
// replica consumes for itself.
const Topic = api.CaseEventsTopic

// HandleCaseEvent is the kafka.Handler of the case events: it tells the
// streams of this replica subscribed to the event's case that it changed.
// The notification names only the URI the subscriber subscribed to, never
// the event or another case. It never fails: a record it cannot read is
// the webhooks service's to dead-letter (it reads the same topic with the
// same schema), and a notification missed is only an update not told,
// which the subscriber's next read shows.
func (h *Hub) HandleCaseEvent(ctx context.Context, msg kafka.Message) error {
	caseID, err := caseOf(msg)
	if err != nil {
		h.metrics.events.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", "invalid")))
		h.logger.WarnContext(ctx, "case event not read; no subscriber told", "event_id", msg.EventID, "err", err)
		return nil
	}
	outcome := "unsubscribed"
	if h.Publish(caseID) > 0 {
		outcome = "subscribed"
	}
	h.metrics.events.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", outcome)))
	return nil
}

// caseOf is the case a cases-event-envelope-v2 record is about.
func caseOf(msg kafka.Message) (string, error) {
	if msg.Schema != api.CaseEventEnvelopeSchema {
		return "", fmt.Errorf("record schema %q, want %s", msg.Schema, api.CaseEventEnvelopeSchema)
	}
	var env struct {
		SchemaVersion string `json:"schemaVersion"`
		Event         struct {
			CaseID string `json:"caseId"`
		} `json:"event"`
	}
	if err := json.Unmarshal(msg.Value, &env); err != nil {
		return "", fmt.Errorf("envelope: %w", err)
	}
	switch {
	case env.SchemaVersion != api.CaseEventEnvelopeSchema:
		return "", fmt.Errorf("envelope schemaVersion %q", env.SchemaVersion)
	case !idPattern.MatchString(env.Event.CaseID):
		return "", fmt.Errorf("case id %q is not an id", env.Event.CaseID)
	case msg.Key != "" && msg.Key != env.Event.CaseID:
		return "", fmt.Errorf("the record's key %q is not its case %q", msg.Key, env.Event.CaseID)
	}
	return env.Event.CaseID, nil
}

func attrReason(reason string) metric.AddOption {
	return metric.WithAttributes(attribute.String("reason", reason))
}
