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
	// Policy is the senders' disable policy.
	Policy delivery.HealthPolicy
	// DisableAt is when the failing streak disables the endpoint if
	// failures go on; zero when it is not failing or not enabled.
	DisableAt time.Time
}

// EndpointHealth returns the endpoint's attempts over the last 24 clock
// hours (success rate, latency) and its failing streak with the time the
// senders will disable it if it keeps failing.
func (s *Service) EndpointHealth(ctx context.Context, scope endpoints.Scope, id string) (Health, error) {
	ep, err := s.Endpoints.Get(ctx, scope, id)
	if err != nil {
		return Health{}, err
	}
	now := s.Now()
	f, err := s.Deliveries.EndpointFigures(ctx, scope, ep.ID, now)
	if err != nil {
		return Health{}, err
	}
	h := Health{Endpoint: ep, At: now, Figures: f, Policy: s.Health}
	if ep.Health.Failing() && ep.Status == endpoints.Enabled {
		// The streak disables at its first failure once it is
		// DisableAfter old and holds MinFailures failures.
		h.DisableAt = ep.Health.FailingSince.Add(s.Health.DisableAfter)
	}
	return h, nil
}
