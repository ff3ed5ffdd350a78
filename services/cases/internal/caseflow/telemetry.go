package caseflow

// The deadline scheduler's metrics (docs/observability.md): how late each
// claimed deadline was applied, how many due deadlines wait unclaimed, and
// when the last scan of every shard completed, so a scheduler that stopped
// scanning shows even when nothing is due.

import (
	"context"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

const meterName = "github.com/pcourt/pcourt/services/cases/internal/caseflow"

// dueCountTimeout bounds one scrape's count of the deadline indexes.
const dueCountTimeout = 2 * time.Second

type schedulerInstruments struct {
	lag metric.Float64Histogram
	// scanned is when the last scan that read every shard began, in Unix
	// milliseconds; 0 before the first.
	scanned atomic.Int64
}

func noSchedulerInstruments() *schedulerInstruments {
	lag, _ := noop.NewMeterProvider().Meter(meterName).Float64Histogram("pcourt.cases.deadline.lag")
	return &schedulerInstruments{lag: lag}
}

// Instrument exports the scheduler's metrics through mp:
// pcourt_cases_deadline_lag_seconds (a histogram: from when a deadline
// fell due to the scan that claimed it), pcourt_cases_deadlines_due (per
// shard, due and unclaimed, read at scrape time) and
// pcourt_cases_deadline_scan_timestamp_seconds (the last complete scan).
// Call it before Run.
func (s *Scheduler) Instrument(mp metric.MeterProvider) error {
	m := mp.Meter(meterName)
	lag, err := m.Float64Histogram("pcourt.cases.deadline.lag",
		metric.WithUnit("s"),
		metric.WithDescription("How late the scheduler applied a deadline: from when it fell due (or its last claim lapsed) to the scan that claimed it."),
		metric.WithExplicitBucketBoundaries(0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800))
	if err != nil {
		return err
	}
	due, err := m.Int64ObservableGauge("pcourt.cases.deadlines_due",
		metric.WithUnit("{case}"),
		metric.WithDescription("Cases whose next deadline is due and that no scheduler has claimed, per shard."))
	if err != nil {
		return err
	}
	scanned, err := m.Float64ObservableGauge("pcourt.cases.deadline.scan.timestamp",
		metric.WithUnit("s"),
		metric.WithDescription("Unix time of the last scan that read every shard's deadline index."))
	if err != nil {
		return err
	}
	inst := &schedulerInstruments{lag: lag}
	tags := s.cases.Tags()
	if _, err := m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		if ms := inst.scanned.Load(); ms > 0 {
			o.ObserveFloat64(scanned, float64(ms)/1000)
		}
		ctx, cancel := context.WithTimeout(ctx, dueCountTimeout)
		defer cancel()
		counts, err := s.cases.DueCounts(ctx, s.now())
		if err != nil {
			return err
		}
		for i, n := range counts {
			o.ObserveInt64(due, n, metric.WithAttributes(attribute.String("shard", tags[i])))
		}
		return nil
	}, due, scanned); err != nil {
		return err
	}
	s.inst = inst
	return nil
}
