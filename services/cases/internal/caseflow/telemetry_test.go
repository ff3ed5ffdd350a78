package caseflow_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/telemetry/telemetrytest"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
)

// TestSchedulerReportsHowLateItAppliedADeadline scans a day after a
// case's answer warning fell due: before the scan the deadline waits in
// the due gauge; after it, the lag histogram holds one deadline about a
// day late, nothing waits, and the scan's time is exported.
func TestSchedulerReportsHowLateItAppliedADeadline(t *testing.T) {
	rdb := redistest.NewClient(t)
	cases := newCases(t, rdb)
	openCase(t, cases, "case-late", true)
	scanAt := t0.Add(13 * day)
	s := caseflow.NewScheduler(cases, caseflow.DefaultSchedulerConfig(), discard(), func() time.Time { return scanAt })
	tel := telemetrytest.Setup(t, "cases")
	require.NoError(t, s.Instrument(tel.Meter))
	tag := testSharding.Tag("case-late")

	fams := telemetrytest.Scrape(t, tel.MetricsHandler)
	require.Equal(t, 1.0, fams.Value(t, "pcourt_cases_deadlines_due", map[string]string{"service": "cases", "shard": tag}))
	require.Empty(t, fams.Series("pcourt_cases_deadline_scan_timestamp_seconds", nil), "no scan yet")

	got, err := s.RunOnce(context.Background())
	require.NoError(t, err)
	require.Positive(t, got)

	fams = telemetrytest.Scrape(t, tel.MetricsHandler)
	require.Zero(t, fams.Value(t, "pcourt_cases_deadlines_due", map[string]string{"shard": tag}))
	lag := fams.Series("pcourt_cases_deadline_lag_seconds", map[string]string{"service": "cases"})
	require.Len(t, lag, 1)
	require.Equal(t, uint64(1), lag[0].GetHistogram().GetSampleCount())
	require.InDelta(t, day.Seconds(), lag[0].GetHistogram().GetSampleSum(), day.Seconds(), "the warning fell due within the day before the scan")
	require.Equal(t, float64(scanAt.UnixMilli())/1000, fams.Value(t, "pcourt_cases_deadline_scan_timestamp_seconds", nil))
}
