// Package caseflow is the cases service's use cases: load a case, let the
// procedure decide, and store the result with its events in one step,
// deciding again when another writer got there first. The HTTP routes and
// the deadline scheduler both act through it.
package caseflow

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	"github.com/pcourt/pcourt/services/cases/internal/events"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// ErrBusy means the case kept changing under the act: every attempt lost
// its optimistic race. The act did not happen; a retry is safe.
var ErrBusy = errors.New("case busy; try again")

// Attempts bounds how often an act is decided again after losing a race.
const Attempts = 64

// Service applies acts to cases.
type Service struct {
	cases *store.Cases
	now   func() time.Time
	// lanes serialize this replica's acts on one case. The optimistic
	// save alone is correct across replicas, but when many requests hit
	// one case at once every lost race redoes the load, the decision and
	// the save: eight concurrent writers cost several times the work of
	// eight in a row. Queuing them here leaves races only between
	// replicas. Cases share a lane by hash, which only ever delays.
	lanes [64]sync.Mutex
	seed  maphash.Seed
}

func (s *Service) lane(caseID string) *sync.Mutex {
	return &s.lanes[maphash.String(s.seed, caseID)%uint64(len(s.lanes))]
}

// New returns a Service; now may be nil for time.Now.
func New(cases *store.Cases, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{cases: cases, now: now, seed: maphash.MakeSeed()}
}

// Result is an accepted act.
type Result struct {
	Case   procedure.Case
	Events []procedure.Event
	// FirstSequence is the sequence of the act's first event; the others
	// follow without gaps.
	FirstSequence int64
}

// Act applies act to the case at the service's clock, keeping docs (the
// content the act's digest names) in the same step. Refusals are
// *procedure.RefusalError; a missing case is store.ErrNotFound.
func (s *Service) Act(ctx context.Context, caseID string, act procedure.Act, docs ...store.Document) (Result, error) {
	lane := s.lane(caseID)
	lane.Lock()
	defer lane.Unlock()
	for range Attempts {
		l, err := s.cases.Load(ctx, caseID)
		if err != nil {
			return Result{}, err
		}
		out, err := procedure.Decide(l.Case, act, s.now())
		if err != nil {
			return Result{}, err
		}
		encoded, err := events.EncodeAll(out.Case, out.Events)
		if err != nil {
			return Result{}, err
		}
		err = s.cases.Save(ctx, l.Version, out.Case, encoded, docs...)
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return Result{}, err
		}
		return Result{Case: out.Case, Events: out.Events, FirstSequence: l.Sequence + 1}, nil
	}
	return Result{}, fmt.Errorf("%s on case %s: %w", act.Kind, caseID, ErrBusy)
}

// tick applies the scheduler's act to one case at now, reporting how many
// events it recorded.
func (s *Service) tick(ctx context.Context, caseID string, now time.Time) (int, error) {
	for range Attempts {
		l, err := s.cases.Load(ctx, caseID)
		if errors.Is(err, store.ErrNotFound) {
			return 0, s.cases.Unschedule(ctx, caseID)
		}
		if err != nil {
			return 0, err
		}
		out := procedure.Tick(l.Case, now)
		if !out.Changed() {
			// Claimed early (a lease ran out, or a clock ran ahead): put
			// the entry back at the case's real next deadline.
			return 0, s.cases.Reschedule(ctx, l.Version, l.Case)
		}
		encoded, err := events.EncodeAll(out.Case, out.Events)
		if err != nil {
			return 0, err
		}
		err = s.cases.Save(ctx, l.Version, out.Case, encoded)
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return 0, err
		}
		return len(out.Events), nil
	}
	return 0, fmt.Errorf("deadlines of case %s: %w", caseID, ErrBusy)
}
