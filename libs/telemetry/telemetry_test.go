package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/telemetry"
)

// TestEverySeriesNamesItsService scrapes /metrics and finds the service
// label on the OpenTelemetry instruments and on the Go and process
// collectors alike: alerts group by it.
func TestEverySeriesNamesItsService(t *testing.T) {
	p, err := telemetry.Setup(context.Background(), telemetry.Config{ServiceName: "cases", ServiceVersion: "test"}, func(string) string { return "" })
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Shutdown(context.Background())) })
	c, err := p.Meter.Meter("test").Int64Counter("pcourt.test.things")
	require.NoError(t, err)
	c.Add(context.Background(), 3)

	rec := httptest.NewRecorder()
	p.MetricsHandler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body, err := io.ReadAll(rec.Body)
	require.NoError(t, err)
	text := string(body)
	require.Contains(t, text, "pcourt_test_things_total{")
	var series int
	for line := range strings.SplitSeq(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		series++
		require.Contains(t, line, `service="cases"`, "a series without the service label: %s", line)
	}
	require.Greater(t, series, 20, "the Go and process collectors are exported too")
}
