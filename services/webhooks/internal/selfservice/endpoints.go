package selfservice

import (
	"context"

	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
)

// ListEndpoints returns the partner's endpoints.
func (s *Service) ListEndpoints(ctx context.Context, scope endpoints.Scope) ([]endpoints.Endpoint, error) {
	return s.Endpoints.List(ctx, scope)
}

// Endpoint returns one of the partner's endpoints.
func (s *Service) Endpoint(ctx context.Context, scope endpoints.Scope, id string) (endpoints.Endpoint, error) {
	return s.Endpoints.Get(ctx, scope, id)
}

// Registration is what a partner asks for when it registers an endpoint.
type Registration struct {
	URL         string
	EventTypes  []string
	Description string
}

// RegisterEndpoint checks r against the URL rules of the scope's
// environment and stores a new enabled endpoint, within the partner's
// limit (endpoints.ErrTooMany).
func (s *Service) RegisterEndpoint(ctx context.Context, scope endpoints.Scope, r Registration) (endpoints.Endpoint, error) {
	reg, err := s.URLRules.NewRegistration(scope.Environment, r.URL, r.EventTypes, r.Description)
	if err != nil {
		return endpoints.Endpoint{}, err
	}
	e := endpoints.New(newID("we_"), scope, reg, s.Now())
	if err := s.Endpoints.Create(ctx, e); err != nil {
		return endpoints.Endpoint{}, err
	}
	s.Logger.InfoContext(ctx, "endpoint registered", "endpoint", e.ID, "partner", scope.PartnerID, "environment", scope.Environment)
	return e, nil
}

// ChangeEndpoint applies p to the endpoint under the same URL rules as a
// registration.
func (s *Service) ChangeEndpoint(ctx context.Context, scope endpoints.Scope, id string, p endpoints.Patch) (endpoints.Endpoint, error) {
	return s.Endpoints.Modify(ctx, scope, id, func(e endpoints.Endpoint) (endpoints.Endpoint, error) {
		return s.URLRules.Apply(e, p, s.Now())
	})
}

// DeleteEndpoint deletes the endpoint; its deliveries are cancelled when
// they come due.
func (s *Service) DeleteEndpoint(ctx context.Context, scope endpoints.Scope, id string) error {
	return s.Endpoints.Delete(ctx, scope, id)
}

// SetEnabled enables or disables the endpoint, as the partner asks.
func (s *Service) SetEnabled(ctx context.Context, scope endpoints.Scope, id string, enable bool) (endpoints.Endpoint, error) {
	return s.Endpoints.Modify(ctx, scope, id, func(e endpoints.Endpoint) (endpoints.Endpoint, error) {
		if enable {
			return endpoints.Enable(e, s.Now()), nil
		}
		return endpoints.Disable(e, s.Now()), nil
	})
}
