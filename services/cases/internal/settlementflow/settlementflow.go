// Package settlementflow is the settlement binding's use case: a side's or
// the reviewer's act (Act) decided by internal/settlement and stored
// through caseflow's one store step with its outbox. The record's consent
// award has its artifacts made by tribunalflow, as every award's are, from
// the case as loaded, and stored in the same step, so the award and its
// documents never exist one without the other.
package settlementflow

import (
	"context"
	"time"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/settlement"
	"github.com/pcourt/pcourt/services/cases/internal/store"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// Artifacts makes an award's documents and records their digests in the
// served award (tribunalflow.Service.Artifacts).
type Artifacts interface {
	Artifacts(st *tribunal.State, doc award.Document) ([]store.Document, error)
}

// Service applies settlement acts.
type Service struct {
	flow      *caseflow.Service
	artifacts Artifacts
	now       func() time.Time
}

// New returns a Service; now may be nil for time.Now.
func New(flow *caseflow.Service, artifacts Artifacts, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{flow: flow, artifacts: artifacts, now: now}
}

// Act applies a settlement act at the service's clock. Refusals are
// *settlement.RefusalError; a missing case is store.ErrNotFound.
func (s *Service) Act(ctx context.Context, caseID string, a settlement.Act) (caseflow.Result, settlement.Outcome, error) {
	now := s.now()
	var decided settlement.Outcome
	res, err := s.flow.ChangeDocumented(ctx, caseID, func(c procedure.Case) (procedure.Outcome, []store.Document, error) {
		out, err := settlement.Decide(c.Settlement, c.SettlementFacts(), a, now)
		if err != nil {
			return procedure.Outcome{Case: c}, nil, err
		}
		decided = out
		next := c.WithSettlement(out, now)
		if out.Award == nil {
			return next, nil, nil
		}
		docs, err := s.artifacts.Artifacts(&next.Case.Tribunal, *out.Award)
		if err != nil {
			return procedure.Outcome{Case: c}, nil, err
		}
		return next, docs, nil
	})
	return res, decided, err
}
