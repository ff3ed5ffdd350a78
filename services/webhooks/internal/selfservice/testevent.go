package selfservice

import (
	"context"
	"fmt"
	"slices"

	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/events"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// TestCaseID is the caseId of every test event: it names no case, so a
// receiver that reads the case back learns at once that the event was a
// test.
const TestCaseID = "case_test"

// UnknownEventTypeError is a test event of a type the case-event-v2
// schema does not list.
type UnknownEventTypeError struct{ Type string }

func (e *UnknownEventTypeError) Error() string {
	return fmt.Sprintf("%q is not a case event type", e.Type)
}

// SendTestEvent schedules a delivery of a made-up event of eventType (""
// for the first of EventTypes) to this one endpoint, due now, signed and
// retried like any other, with trigger test and marked Test, which every
// attempt signs as x-pc-test: true (the mark a receiver relies on). Its
// eventId starts with evt_test_ and its caseId is TestCaseID.
func (s *Service) SendTestEvent(ctx context.Context, scope endpoints.Scope, endpointID, eventType string) (store.Delivery, error) {
	if eventType == "" {
		eventType = s.EventTypes[0]
	}
	if !slices.Contains(s.EventTypes, eventType) {
		return store.Delivery{}, &UnknownEventTypeError{Type: eventType}
	}
	ep, err := s.Endpoints.Get(ctx, scope, endpointID)
	if err != nil {
		return store.Delivery{}, err
	}
	if err := requireEnabled(ep, OpTestEvent); err != nil {
		return store.Delivery{}, err
	}
	now := s.Now().UTC()
	ev := delivery.Event{SchemaVersion: events.BodySchema, EventID: newID("evt_test_"), Sequence: 1, Type: eventType,
		OccurredAt: now.Format("2006-01-02T15:04:05.000Z"), CaseID: TestCaseID, ExternalCaseID: "test"}
	if _, err := events.ParseBody(ev.Body("")); err != nil { // the checks every consumed event passes
		return store.Delivery{}, err
	}
	d := store.Delivery{ID: newID("dlv_"), EventID: ev.EventID, EventType: ev.Type, EndpointID: ep.ID,
		Tenant: scope.Tenant, Environment: scope.Environment, PartnerID: scope.PartnerID, Status: store.StatusScheduled,
		Trigger: store.TriggerTest, Test: true, CreatedAt: now, NextAttemptAt: now, Event: ev}
	if _, err := s.Deliveries.Create(ctx, d); err != nil {
		return store.Delivery{}, err
	}
	s.Logger.InfoContext(ctx, "test event scheduled", "delivery", d.ID, "endpoint", ep.ID, "type", ev.Type)
	return d, nil
}
