package selfservice

import (
	"context"
	"time"

	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// ListDeliveries returns a page of the partner's deliveries matching f,
// newest first, and the cursor of the next page (nil at the end).
func (s *Service) ListDeliveries(ctx context.Context, scope endpoints.Scope, f store.Filter, after *store.Cursor, limit int) ([]store.Delivery, *store.Cursor, error) {
	return s.Deliveries.List(ctx, scope, f, after, limit)
}

// Delivery returns one of the partner's deliveries and its attempts,
// oldest first.
func (s *Service) Delivery(ctx context.Context, scope endpoints.Scope, id string) (store.Delivery, []store.Attempt, error) {
	d, err := s.Deliveries.Get(ctx, scope, id)
	if err != nil {
		return store.Delivery{}, nil, err
	}
	atts, err := s.Deliveries.Attempts(ctx, d.ID)
	if err != nil {
		return store.Delivery{}, nil, err
	}
	return d, atts, nil
}

// Replay sends the event of a delivery again to the same endpoint as a new
// delivery, due now: a new deliveryId, the same eventId, trigger manual.
// The endpoint must be enabled (DisabledError).
func (s *Service) Replay(ctx context.Context, scope endpoints.Scope, id string) (store.Delivery, error) {
	orig, err := s.Deliveries.Get(ctx, scope, id)
	if err != nil {
		return store.Delivery{}, err
	}
	ep, err := s.Endpoints.Get(ctx, scope, orig.EndpointID)
	if err != nil {
		return store.Delivery{}, err
	}
	if err := requireEnabled(ep, OpReplay); err != nil {
		return store.Delivery{}, err
	}
	now := s.Now()
	d := store.Delivery{ID: newID("dlv_"), EventID: orig.EventID, EventType: orig.EventType, EndpointID: orig.EndpointID,
		Tenant: orig.Tenant, Environment: orig.Environment, PartnerID: orig.PartnerID, Status: store.StatusScheduled,
		Trigger: store.TriggerManual, ReplayOf: orig.ID, Test: orig.Test, CreatedAt: now, NextAttemptAt: now, Event: orig.Event}
	if _, err := s.Deliveries.Create(ctx, d); err != nil {
		return store.Delivery{}, err
	}
	return d, nil
}

// Outcomes is a partner's deliveries by outcome over a window of clock
// hours up to now (the current one last), and the instant it was read.
type Outcomes struct {
	At    time.Time
	Hours []store.OutcomeHour
}

// DeliveryOutcomes returns the partner's deliveries created in each of the
// last hours clock hours, by the status each has now: 24 (a day) or
// store.HistoryHours (7 days).
func (s *Service) DeliveryOutcomes(ctx context.Context, scope endpoints.Scope, hours int) (Outcomes, error) {
	now := s.Now()
	byHour, err := s.Deliveries.Outcomes(ctx, scope, now, hours)
	if err != nil {
		return Outcomes{}, err
	}
	return Outcomes{At: now, Hours: byHour}, nil
}
