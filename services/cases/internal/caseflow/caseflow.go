// Package caseflow is the cases service's use cases: open a case from the
// case-opened fact (Open), and change it (Change): load it, let a pure
// decision make the next case and its events, and store both in one step
// with the outbox, deciding again when another writer got there first. The
// HTTP routes, the hosted respondent page and the deadline scheduler all
// act through Change (Act, tick); the Kafka consumer opens through Open.
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

// Now is the service's clock: the time its acts are decided at, which
// the HTTP layer also stamps a partner's evidence-export receipt with.
func (s *Service) Now() time.Time { return s.now() }

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

// Decision decides one change of a case: from the case as stored, the
// next case and the events that record the change, or a refusal (which
// changes nothing). It must be pure (no I/O, no clock but the instant it
// was given): Change calls it again on the newer case whenever another
// writer saved first. procedure.Decide and procedure.Tick are wrapped as
// decisions here; a subdomain's pure package (tribunal and award,
// evidence, after the award) provides its own, and its use-case package
// stores them through Change, so every act of every subdomain lands in the
// case's one store step with its outbox.
type Decision func(c procedure.Case) (procedure.Outcome, error)

// ErrNothingToStore is what a Decision returns when the case needs no
// change (a deadline scan that found nothing due): Change then stores
// nothing but keeps the case's entry in the deadline index at its real
// next deadline, and returns a Result without events and no error.
var ErrNothingToStore = errors.New("nothing to store")

// Change is the case's one write path: load the case, let decide make the
// next case and its events, and save both with docs (the content the
// events' digests name) in one store step that also appends the events to
// the outbox and reschedules the case's next deadline. When another writer
// saved first (store.ErrConflict) it loads and decides again, up to
// Attempts times, then gives up with ErrBusy. A missing case is
// store.ErrNotFound; a refusal is decide's error, unchanged.
func (s *Service) Change(ctx context.Context, caseID string, decide Decision, docs ...store.Document) (Result, error) {
	return s.ChangeDocumented(ctx, caseID, func(c procedure.Case) (procedure.Outcome, []store.Document, error) {
		out, err := decide(c)
		return out, docs, err
	})
}

// DocumentedDecision is a Decision whose documents depend on the case it
// decides on: an award's artifacts are made from the case as loaded. Like
// a Decision it must be pure and deterministic, since it runs again on a
// lost race.
type DocumentedDecision func(c procedure.Case) (procedure.Outcome, []store.Document, error)

// ChangeDocumented is Change for a decision that makes its own documents.
func (s *Service) ChangeDocumented(ctx context.Context, caseID string, decide DocumentedDecision) (Result, error) {
	lane := s.lane(caseID)
	lane.Lock()
	defer lane.Unlock()
	for range Attempts {
		l, err := s.cases.Load(ctx, caseID)
		if err != nil {
			return Result{}, err
		}
		if l.Archived != nil {
			// Read from its archive: no act changes it any more.
			return Result{}, fmt.Errorf("case %s: %w", caseID, store.ErrArchived)
		}
		out, docs, err := decide(l.Case)
		if errors.Is(err, ErrNothingToStore) {
			// Claimed early (a lease ran out, or a clock ran ahead): put
			// the entry back at the case's real next deadline.
			return Result{Case: l.Case, FirstSequence: l.Sequence + 1}, s.cases.Reschedule(ctx, l.Version, l.Case)
		}
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
	return Result{}, fmt.Errorf("case %s: %w", caseID, ErrBusy)
}

// Act applies act to the case at the service's clock, keeping docs (the
// content the act's digest names) in the same step. Refusals are
// *procedure.RefusalError; a missing case is store.ErrNotFound.
func (s *Service) Act(ctx context.Context, caseID string, act procedure.Act, docs ...store.Document) (Result, error) {
	res, err := s.Change(ctx, caseID, func(c procedure.Case) (procedure.Outcome, error) {
		return procedure.Decide(c, act, s.now())
	}, docs...)
	if errors.Is(err, ErrBusy) {
		return Result{}, fmt.Errorf("%s: %w", act.Kind, err)
	}
	return res, err
}

// A Ticker is a subdomain's part of a deadline scan (the tribunal's
// assignment, its windows). Given the case as loaded, it reads what its
// decision needs (a snapshot of the tribunal pool) and returns the pure
// step to apply after the procedure's Tick, or nil when nothing of its
// own is due.
type Ticker func(ctx context.Context, c procedure.Case, now time.Time) (DocumentedDecision, error)

// tick applies the deadlines due at now to one case, the procedure's and
// then each ticker's, reporting how many events it recorded. A case that
// no longer exists leaves the deadline index.
func (s *Service) tick(ctx context.Context, caseID string, now time.Time, tickers []Ticker) (int, error) {
	var steps []DocumentedDecision
	if len(tickers) > 0 {
		l, err := s.cases.Load(ctx, caseID)
		if errors.Is(err, store.ErrNotFound) {
			return 0, s.cases.Unschedule(ctx, caseID)
		}
		if err != nil {
			return 0, err
		}
		for _, t := range tickers {
			step, err := t(ctx, l.Case, now)
			if err != nil {
				return 0, err
			}
			if step != nil {
				steps = append(steps, step)
			}
		}
	}
	res, err := s.ChangeDocumented(ctx, caseID, func(c procedure.Case) (procedure.Outcome, []store.Document, error) {
		out := procedure.Tick(c, now)
		var docs []store.Document
		for _, step := range steps {
			more, d, err := step(out.Case)
			if err != nil {
				return out, nil, err
			}
			out.Case, out.Quiet = more.Case, out.Quiet || more.Quiet
			out.Events = append(out.Events, more.Events...)
			docs = append(docs, d...)
		}
		if !out.Changed() {
			return out, nil, ErrNothingToStore
		}
		return out, docs, nil
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return 0, s.cases.Unschedule(ctx, caseID)
	case errors.Is(err, ErrBusy):
		return 0, fmt.Errorf("deadlines: %w", err)
	case err != nil:
		return 0, err
	}
	return len(res.Events), nil
}

// Open opens the case a case-opened fact asks for: the procedure's
// opening, stored with its opening events in one step, unless the fact
// was applied before. It reports whether this call opened the case; a
// repeated fact, or another fact for an existing case, changes nothing and
// emits nothing, so a replay of the whole topic is harmless. An opening
// the procedure refuses wraps procedure.ErrInvalidOpening.
func (s *Service) Open(ctx context.Context, in procedure.Opening) (procedure.Case, bool, error) {
	out, err := procedure.Open(in)
	if err != nil {
		return procedure.Case{}, false, err
	}
	encoded, err := events.EncodeAll(out.Case, out.Events)
	if err != nil {
		return procedure.Case{}, false, err
	}
	applied, err := s.cases.Open(ctx, out.Case, in.EventID, encoded)
	if err != nil {
		return procedure.Case{}, false, err
	}
	return out.Case, applied, nil
}
