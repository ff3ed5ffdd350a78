package dispatch_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/pcourt/pcourt/libs/telemetry/telemetrytest"
	"github.com/pcourt/pcourt/services/webhooks/internal/dispatch"
)

// TestSendsAreTracedToTheReceiverAndCounted sends to three receivers, one
// that takes the event, one that fails and one gone: the receiver that
// took it got a traceparent naming the send's client span; the attempts
// are counted by outcome and class, with their durations; the delivered
// and the given-up deliveries are counted; and the due queue, three
// before the senders ran, holds none after (the failed one is due later).
func TestSendsAreTracedToTheReceiverAndCounted(t *testing.T) {
	f := newFixture(t, dispatch.DefaultConfig())
	spans := tracetest.NewSpanRecorder()
	tel := telemetrytest.Setup(t, "webhooks")
	require.NoError(t, f.sender.Instrument(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)), tel.Meter))

	var received atomic.Value
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Store(r.Header.Get("Traceparent"))
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(ok.Close)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	t.Cleanup(failing.Close)
	gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) }))
	t.Cleanup(gone.Close)
	f.endpoint(t, "we_ok", ok.URL)
	f.endpoint(t, "we_503", failing.URL)
	f.endpoint(t, "we_410", gone.URL)

	due := func(fams telemetrytest.Families) float64 {
		var n float64
		for _, m := range fams.Series("pcourt_webhooks_due_deliveries", map[string]string{"service": "webhooks"}) {
			n += telemetrytest.Value(m)
		}
		return n
	}
	require.Equal(t, 3.0, due(telemetrytest.Scrape(t, tel.MetricsHandler)))

	f.sender.Poll(f.ctx)
	f.sender.Wait()

	fams := telemetrytest.Scrape(t, tel.MetricsHandler)
	require.Zero(t, due(fams))
	for _, c := range []struct{ outcome, class string }{{"success", "none"}, {"failure", "http_5xx"}, {"gone", "gone"}} {
		require.Equal(t, 1.0, fams.Value(t, "pcourt_webhooks_delivery_attempts_total", map[string]string{"outcome": c.outcome, "class": c.class}), c.outcome)
		require.Equal(t, 1.0, fams.Value(t, "pcourt_webhooks_delivery_duration_seconds", map[string]string{"outcome": c.outcome}), c.outcome)
	}
	require.Equal(t, 1.0, fams.Value(t, "pcourt_webhooks_deliveries_total", map[string]string{"status": "delivered"}))
	require.Equal(t, 1.0, fams.Value(t, "pcourt_webhooks_deliveries_total", map[string]string{"status": "failed"}), "the gone endpoint's delivery is given up")

	tp, _ := received.Load().(string)
	require.NotEmpty(t, tp, "the receiver got a traceparent")
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(f.ctx, propagation.HeaderCarrier{"Traceparent": []string{tp}}))
	require.True(t, sc.IsValid(), tp)
	var sends int
	for _, s := range spans.Ended() {
		if s.Name() != "webhook send" {
			continue
		}
		sends++
		require.Equal(t, trace.SpanKindClient, s.SpanKind())
		if s.SpanContext().SpanID() == sc.SpanID() {
			require.Equal(t, sc.TraceID(), s.SpanContext().TraceID())
			tp = ""
		}
	}
	require.Equal(t, 3, sends, "one client span per attempt")
	require.Empty(t, tp, "the traceparent names the send's own span")
}
