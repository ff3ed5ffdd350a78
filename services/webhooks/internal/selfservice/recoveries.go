package selfservice

import (
	"context"
	"time"

	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/recovery"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// RecoveryRequest is a partner's "replay what failed since".
type RecoveryRequest struct {
	Since time.Time  // zero: refused, since is required
	Until *time.Time // nil: now
	// Enable turns a disabled endpoint back on first, so "re-enable and
	// replay what failed" is one request; without it a disabled endpoint
	// is refused (DisabledError).
	Enable bool
}

// StartRecovery checks the window and stores a running recovery job of the
// endpoint, which the recovery workers of every replica progress; the job
// is returned at once, to follow with Recovery.
func (s *Service) StartRecovery(ctx context.Context, scope endpoints.Scope, endpointID string, r RecoveryRequest) (store.Recovery, error) {
	now := s.Now()
	w, err := recovery.NewWindow(r.Since, r.Until, now)
	if err != nil {
		return store.Recovery{}, err
	}
	ep, err := s.Endpoints.Get(ctx, scope, endpointID)
	if err != nil {
		return store.Recovery{}, err
	}
	if !r.Enable {
		if err := requireEnabled(ep, OpRecover); err != nil {
			return store.Recovery{}, err
		}
	}
	if ep.Status != endpoints.Enabled {
		ep, err = s.Endpoints.Modify(ctx, scope, ep.ID, func(e endpoints.Endpoint) (endpoints.Endpoint, error) {
			return endpoints.Enable(e, now), nil
		})
		if err != nil {
			return store.Recovery{}, err
		}
		s.Logger.InfoContext(ctx, "endpoint enabled for a recovery", "endpoint", ep.ID)
	}
	total, err := s.Deliveries.CountWindow(ctx, scope, w.Since, w.Until)
	if err != nil {
		return store.Recovery{}, err
	}
	job := store.Recovery{ID: newID("rcv_"), EndpointID: ep.ID, Tenant: scope.Tenant, Environment: scope.Environment, PartnerID: scope.PartnerID,
		Since: w.Since, Until: w.Until, Status: store.RecoveryRunning, Total: total, CreatedAt: now, UpdatedAt: now}
	if err := s.Recoveries.Create(ctx, job); err != nil {
		return store.Recovery{}, err
	}
	s.Logger.InfoContext(ctx, "recovery started", "recovery", job.ID, "endpoint", ep.ID, "since", w.Since, "until", w.Until, "total", total)
	return job, nil
}

// RecoveryProgress is a recovery job as it stands and its replays by the
// status each has now: how many of those it queued were delivered.
type RecoveryProgress struct {
	Job     store.Recovery
	Replays store.OutcomeCounts
}

// Recovery returns a recovery job of the endpoint with its replays'
// outcomes; a job of another endpoint is not found
// (store.ErrRecoveryNotFound).
func (s *Service) Recovery(ctx context.Context, scope endpoints.Scope, endpointID, id string) (RecoveryProgress, error) {
	r, err := s.Recoveries.Get(ctx, scope, id)
	if err != nil {
		return RecoveryProgress{}, err
	}
	if r.EndpointID != endpointID {
		return RecoveryProgress{}, store.ErrRecoveryNotFound
	}
	replays, err := s.Deliveries.RecoveryReplays(ctx, r.ID)
	if err != nil {
		return RecoveryProgress{}, err
	}
	return RecoveryProgress{Job: r, Replays: replays}, nil
}
