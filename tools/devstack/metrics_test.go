package main

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/telemetry/telemetrytest"
)

// stackMetric is one metric of docs/observability.md that a service of
// the stack must export after the demo.
type stackMetric struct {
	name string
	// counted: a counter or histogram, which must have counted something;
	// otherwise a level (backlog, lag, a due queue) whose healthy value is
	// zero, or a count of failures (dead letters) whose healthy value is
	// zero: either must be there with a sample.
	counted bool
}

// metricsAfterTheDemo lists, by the stack's port offset from the edge,
// each service and the metrics it exports.
var metricsAfterTheDemo = []struct {
	service string
	offset  int
	// called: the demo sends it requests (it buys no readiness report,
	// so readiness has counted none and exports no RED series yet).
	called  bool
	metrics []stackMetric
}{
	{"compat-edge", 0, true, nil},
	{"readiness", 1, false, []stackMetric{{"pcourt_outbox_backlog", false}, {"pcourt_outbox_oldest_entry_age_seconds", false}}},
	{"filings", 2, true, []stackMetric{{"pcourt_outbox_backlog", false}, {"pcourt_outbox_oldest_entry_age_seconds", false}}},
	{"cases", 3, true, []stackMetric{
		{"pcourt_outbox_backlog", false}, {"pcourt_outbox_oldest_entry_age_seconds", false},
		{"pcourt_kafka_consumer_lag", false}, {"pcourt_kafka_dead_letters_total", false},
		{"pcourt_cases_deadline_lag_seconds", true}, {"pcourt_cases_deadlines_due", false},
		{"pcourt_cases_deadline_scan_timestamp_seconds", true},
	}},
	{"webhooks", 4, true, []stackMetric{
		{"pcourt_kafka_consumer_lag", false}, {"pcourt_kafka_dead_letters_total", false},
		{"pcourt_webhooks_delivery_attempts_total", true}, {"pcourt_webhooks_delivery_duration_seconds", true},
		{"pcourt_webhooks_deliveries_total", true}, {"pcourt_webhooks_due_deliveries", false},
	}},
	// The MCP walk's agents call it.
	{"mcp", 10, true, []stackMetric{{"pcourt_mcp_tool_calls_total", true}}},
}

// requireMetricsAfterTheDemo scrapes each service's admin /metrics (port
// + 1000) and finds every metric docs/observability.md gives it, labelled
// with the service: the RED histogram and the Redis client's latency
// counted on every service, and each of the service's own.
func requireMetricsAfterTheDemo(t *testing.T, base int) {
	t.Helper()
	for _, s := range metricsAfterTheDemo {
		resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(base+s.offset+1000) + "/metrics")
		require.NoError(t, err)
		fams := telemetrytest.Parse(t, resp.Body)
		resp.Body.Close()
		all := append([]stackMetric{
			{"db_client_connections_use_time_milliseconds", true},
			{"db_client_connections_usage", false},
		}, s.metrics...)
		if s.called {
			all = append(all, stackMetric{"pcourt_http_server_request_duration_seconds", true})
		}
		for _, m := range all {
			series := fams.Series(m.name, map[string]string{"service": s.service})
			require.NotEmpty(t, series, "%s exports %s", s.service, m.name)
			if !m.counted {
				continue
			}
			var total float64
			for _, x := range series {
				total += telemetrytest.Value(x)
			}
			require.Positive(t, total, "%s's %s counted something during the demo", s.service, m.name)
		}
	}
}
