// Package telemetrytest reads what a service exports to Prometheus, for
// tests that hold a metric to the behaviour it counts.
package telemetrytest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/telemetry"
)

// Setup returns real providers for the named service, shut down when the
// test ends.
func Setup(t testing.TB, service string) *telemetry.Providers {
	t.Helper()
	p, err := telemetry.Setup(context.Background(), telemetry.Config{ServiceName: service, ServiceVersion: "test"}, func(string) string { return "" })
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Shutdown(context.Background()) })
	return p
}

// Families is one scrape, by metric family name.
type Families map[string]*dto.MetricFamily

// Scrape GETs the handler's /metrics and parses the text format.
func Scrape(t testing.TB, h http.Handler) Families {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	return Parse(t, rec.Body)
}

// Parse parses Prometheus text.
func Parse(t testing.TB, r interface{ Read([]byte) (int, error) }) Families {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	require.NoError(t, err)
	return fams
}

// Value is the value of the one series of family name whose labels include
// labels: a counter's or gauge's value, a histogram's count. It fails the
// test unless exactly one series matches.
func (f Families) Value(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	ms := f.Series(name, labels)
	require.Len(t, ms, 1, "series of %s with %v; the family holds %s", name, labels, f.describe(name))
	return value(ms[0])
}

// Series lists the series of family name whose labels include labels.
func (f Families) Series(name string, labels map[string]string) []*dto.Metric {
	fam, ok := f[name]
	if !ok {
		return nil
	}
	var out []*dto.Metric
	for _, m := range fam.GetMetric() {
		if hasLabels(m, labels) {
			out = append(out, m)
		}
	}
	return out
}

// Label is the value of label name on m, "" when absent.
func Label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Value is a series' value: a counter's or gauge's value, a histogram's
// sample count.
func Value(m *dto.Metric) float64 { return value(m) }

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}

func hasLabels(m *dto.Metric, labels map[string]string) bool {
	for k, v := range labels {
		if Label(m, k) != v {
			return false
		}
	}
	return true
}

func (f Families) describe(name string) string {
	fam, ok := f[name]
	if !ok {
		return "nothing (no such family)"
	}
	s := ""
	for _, m := range fam.GetMetric() {
		s += fmt.Sprintf("\n  %v = %v", m.GetLabel(), value(m))
	}
	return s
}
