package selfservice

import (
	"context"
	"time"

	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// Health is an endpoint's health as a partner reads it.
type Health struct {
	Endpoint endpoints.Endpoint
	At       time.Time
	// Figures are the endpoint's attempts over the last 24 clock hours.
	Figures store.EndpointFigures
	// Hours are its attempts hour by hour over the window asked for (24
	// or 168 clock hours, the current one last).
	Hours []store.HourFigures
	// Policy is the senders' disable policy.
	Policy delivery.HealthPolicy
	// DisableAt is when the failing streak disables the endpoint if
	// failures go on; zero when it is not failing or not enabled.
	DisableAt time.Time
}

// EndpointHealth returns the endpoint's attempts over the last 24 clock
// hours (success rate, latency) and its failing streak with the time the
// senders will disable it if it keeps failing.
//
// hours is the window of Hours: 24 (a day) or store.HistoryHours (7 days).
func (s *Service) EndpointHealth(ctx context.Context, scope endpoints.Scope, id string, hours int) (Health, error) {
	ep, err := s.Endpoints.Get(ctx, scope, id)
	if err != nil {
		return Health{}, err
	}
	now := s.Now()
	f, err := s.Deliveries.EndpointFigures(ctx, scope, ep.ID, now)
	if err != nil {
		return Health{}, err
	}
	byHour, err := s.Deliveries.EndpointHours(ctx, scope, ep.ID, now, hours)
	if err != nil {
		return Health{}, err
	}
	h := Health{Endpoint: ep, At: now, Figures: f, Hours: byHour, Policy: s.Health}
	if ep.Health.Failing() && ep.Status == endpoints.Enabled {
		// The streak disables at its first failure once it is
		// DisableAfter old and holds MinFailures failures.
		h.DisableAt = ep.Health.FailingSince.Add(s.Health.DisableAfter)
	}
	return h, nil
}
