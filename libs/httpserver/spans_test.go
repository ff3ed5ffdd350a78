package httpserver_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/telemetry"
)

// spanServer serves /things/:id (200, or the status in ?status), with its
// server spans recorded, and reports the trace id the handler saw.
func spanServer(t *testing.T, sampler sdktrace.Sampler) (*httptest.Server, *tracetest.SpanRecorder, chan trace.SpanContext) {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithSpanProcessor(spans))
	tel := &telemetry.Providers{Tracer: tp, Meter: noop.NewMeterProvider(), Propagator: propagation.TraceContext{},
		MetricsHandler: http.NotFoundHandler()}
	s := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Telemetry: tel})
	seen := make(chan trace.SpanContext, 1)
	s.Router().GET("/things/:id", func(c *gin.Context) {
		seen <- trace.SpanContextFromContext(c.Request.Context())
		status := http.StatusOK
		if c.Query("status") == "503" {
			status = http.StatusServiceUnavailable
		}
		c.String(status, "thing")
	})
	ts := httptest.NewServer(s.Router())
	t.Cleanup(ts.Close)
	return ts, spans, seen
}

func get(t *testing.T, url, traceparent string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if traceparent != "" {
		req.Header.Set("traceparent", traceparent)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestASampledRequestIsAServerSpanNamedByItsRouteUnderTheCallersTrace(t *testing.T) {
	ts, spans, seen := spanServer(t, sdktrace.ParentBased(sdktrace.NeverSample()))
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	get(t, ts.URL+"/things/t1", parent)

	ended := spans.Ended()
	require.Len(t, ended, 1)
	span := ended[0]
	require.Equal(t, "GET /things/:id", span.Name())
	require.Equal(t, trace.SpanKindServer, span.SpanKind())
	require.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", span.SpanContext().TraceID().String())
	require.Equal(t, "00f067aa0ba902b7", span.Parent().SpanID().String(), "the caller's span is the parent")
	require.Equal(t, span.SpanContext(), <-seen, "the handler runs in the server span")
	a := attrs(span)
	require.Equal(t, "GET", a["http.request.method"].AsString())
	require.Equal(t, "/things/:id", a["http.route"].AsString())
	require.Equal(t, "/things/t1", a["url.path"].AsString())
	require.Equal(t, int64(200), a["http.response.status_code"].AsInt64())
	require.Equal(t, codes.Unset, span.Status().Code)
}

func TestAServerErrorMarksTheSpan(t *testing.T) {
	ts, spans, _ := spanServer(t, sdktrace.AlwaysSample())
	get(t, ts.URL+"/things/t1?status=503", "")
	ended := spans.Ended()
	require.Len(t, ended, 1)
	require.Equal(t, codes.Error, ended[0].Status().Code)
	require.Equal(t, int64(503), attrs(ended[0])["http.response.status_code"].AsInt64())
}

func TestAnUnsampledRequestRecordsNothingButKeepsItsTraceID(t *testing.T) {
	ts, spans, seen := spanServer(t, sdktrace.NeverSample())
	get(t, ts.URL+"/things/t1", "")
	require.Empty(t, spans.Ended(), "nothing recorded")
	require.True(t, (<-seen).TraceID().IsValid(), "the request still has a trace id, for its log lines and the owner")
}

func TestProbesHaveNoSpan(t *testing.T) {
	ts, spans, _ := spanServer(t, sdktrace.AlwaysSample())
	get(t, ts.URL+"/livez", "")
	get(t, ts.URL+"/readyz", "")
	require.Empty(t, spans.Ended())
}
