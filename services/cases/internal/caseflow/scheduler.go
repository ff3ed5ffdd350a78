package caseflow

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// SchedulerConfig configures the deadline scheduler.
type SchedulerConfig struct {
	// Interval is the pause between scans of the deadline index.
	Interval time.Duration
	// Lease is how long a claimed case is hidden from other replicas.
	Lease time.Duration
	// Batch is the most cases claimed per shard per scan.
	Batch int
}

// DefaultSchedulerConfig returns the defaults.
func DefaultSchedulerConfig() SchedulerConfig {
	return SchedulerConfig{Interval: time.Second, Lease: 30 * time.Second, Batch: 100}
}

// Validate reports an unusable setting.
func (c SchedulerConfig) Validate() error {
	if c.Interval <= 0 || c.Lease <= 0 || c.Batch < 1 {
		return errors.New("deadline scheduler: interval and lease must be positive, batch at least 1")
	}
	return nil
}

// Scheduler applies deadlines: it claims cases whose next deadline is due
// from every shard's index and lets the procedure decide what is due. Any
// number of replicas may run it: a claim hides a case from the others for
// the lease, and the case's version makes sure that of two replicas
// deciding the same deadline only one records its events, so each deadline
// event is emitted once, across restarts too (the index is in Redis).
type Scheduler struct {
	svc    *Service
	cases  *store.Cases
	cfg    SchedulerConfig
	logger *slog.Logger
	now    func() time.Time
	// tickers are the subdomains' parts of each case's scan.
	tickers []Ticker
	// inst are the scheduler's metrics (telemetry.go).
	inst *schedulerInstruments
}

// NewScheduler returns a scheduler; now may be nil for time.Now. The
// tickers apply their subdomains' deadlines after the procedure's.
func NewScheduler(cases *store.Cases, cfg SchedulerConfig, logger *slog.Logger, now func() time.Time, tickers ...Ticker) *Scheduler {
	if now == nil {
		now = time.Now
	}
	return &Scheduler{svc: New(cases, now), cases: cases, cfg: cfg, logger: logger, now: now, tickers: tickers, inst: noSchedulerInstruments()}
}

// Run scans every Interval until ctx is cancelled.
func (s *Scheduler) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		if _, err := s.RunOnce(ctx); err != nil && ctx.Err() == nil {
			s.logger.ErrorContext(ctx, "applying deadlines failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// RunOnce claims and applies every due deadline once, and reports how many
// events it recorded. A case that fails stays claimed until its lease ends
// and is tried again then.
func (s *Scheduler) RunOnce(ctx context.Context) (int, error) {
	now := s.now()
	var errs []error
	recorded := 0
	for _, tag := range s.cases.Tags() {
		due, err := s.cases.ClaimDue(ctx, tag, now, s.cfg.Lease, s.cfg.Batch)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, d := range due {
			s.inst.lag.Record(ctx, max(0, now.Sub(d.At).Seconds()))
			n, err := s.svc.tick(ctx, d.CaseID, now, s.tickers)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			recorded += n
		}
	}
	if len(errs) == 0 {
		s.inst.scanned.Store(now.UnixMilli())
	}
	return recorded, errors.Join(errs...)
}
