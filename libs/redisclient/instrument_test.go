package redisclient_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/telemetry/telemetrytest"
)

// TestInstrumentTracesCommandsWithoutTheirArguments runs commands against
// a real redis-server: each is a client span that names the command but
// never its arguments (a credential hash is a key), and the pool and its
// latency reach /metrics under the service's label.
func TestInstrumentTracesCommandsWithoutTheirArguments(t *testing.T) {
	rdb := redistest.NewClient(t)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tel := telemetrytest.Setup(t, "cases")
	require.NoError(t, redisclient.Instrument(rdb, tp, tel.Meter))

	ctx := context.Background()
	require.NoError(t, rdb.Set(ctx, "pc:auth:secret-hash", "v", 0).Err())
	require.NoError(t, rdb.Get(ctx, "pc:auth:secret-hash").Err())

	ended := spans.Ended()
	require.NotEmpty(t, ended)
	var names []string
	for _, s := range ended {
		names = append(names, s.Name())
		for _, a := range s.Attributes() {
			require.NotContains(t, a.Value.String(), "secret-hash", "span %s attribute %s carries the command's arguments", s.Name(), a.Key)
		}
	}
	require.Contains(t, names, "set")
	require.Contains(t, names, "get")

	fams := telemetrytest.Scrape(t, tel.MetricsHandler)
	require.Positive(t, fams.Value(t, "db_client_connections_use_time_milliseconds", map[string]string{"service": "cases", "type": "command", "status": "ok"}), "command latency")
	require.NotEmpty(t, fams.Series("db_client_connections_usage", map[string]string{"service": "cases", "state": "idle"}), "pool usage")
}
