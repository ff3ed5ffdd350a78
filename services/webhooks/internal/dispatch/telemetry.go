package dispatch

// What the senders tell operators: a client span per attempt whose
// traceparent the partner's receiver gets, the attempts by outcome and
// error class with their durations, the deliveries that end (delivered or
// given up), and the queue of due deliveries not yet claimed.
// docs/observability.md lists each with its alert.

import (
	"context"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

const instrumentationName = "github.com/pcourt/pcourt/services/webhooks/internal/dispatch"

// dueCountTimeout bounds one scrape's count of the due sets.
const dueCountTimeout = 2 * time.Second

// instruments are the sender's telemetry; the zero-cost no-op ones until
// Instrument is called.
type instruments struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	attempts   metric.Int64Counter
	durations  metric.Float64Histogram
	ended      metric.Int64Counter
}

func noInstruments() instruments {
	i, _ := newInstruments(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider())
	return i
}

func newInstruments(tp trace.TracerProvider, mp metric.MeterProvider) (instruments, error) {
	m := mp.Meter(instrumentationName)
	attempts, err := m.Int64Counter("pcourt.webhooks.delivery.attempts",
		metric.WithUnit("{attempt}"),
		metric.WithDescription("Delivery attempts by outcome (success, failure, gone) and error class."))
	if err != nil {
		return instruments{}, err
	}
	durations, err := m.Float64Histogram("pcourt.webhooks.delivery.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of delivery attempts, request to last body byte, by outcome."),
		metric.WithExplicitBucketBoundaries(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
	if err != nil {
		return instruments{}, err
	}
	ended, err := m.Int64Counter("pcourt.webhooks.deliveries",
		metric.WithUnit("{delivery}"),
		metric.WithDescription("Deliveries that ended, by status: delivered, or failed (out of attempts, or the endpoint gone)."))
	if err != nil {
		return instruments{}, err
	}
	return instruments{
		tracer:     tp.Tracer(instrumentationName),
		propagator: propagation.TraceContext{},
		attempts:   attempts, durations: durations, ended: ended,
	}, nil
}

// Instrument makes the sender's spans with tp and its metrics with mp, and
// exports the due sets' sizes (pcourt_webhooks_due_deliveries per shard,
// read at scrape time). Call it before Run.
func (s *Sender) Instrument(tp trace.TracerProvider, mp metric.MeterProvider) error {
	i, err := newInstruments(tp, mp)
	if err != nil {
		return err
	}
	m := mp.Meter(instrumentationName)
	due, err := m.Int64ObservableGauge("pcourt.webhooks.due_deliveries",
		metric.WithUnit("{delivery}"),
		metric.WithDescription("Deliveries due now that no sender has claimed, per shard of the schedule."))
	if err != nil {
		return err
	}
	if _, err := m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, dueCountTimeout)
		defer cancel()
		counts, err := s.deliveries.DueCounts(ctx, s.now())
		if err != nil {
			return err
		}
		for n, c := range counts {
			o.ObserveInt64(due, c, metric.WithAttributes(attribute.String("shard", strconv.Itoa(n))))
		}
		return nil
	}, due); err != nil {
		return err
	}
	s.inst = i
	return nil
}

// recordAttempt counts one attempt and its duration.
func (i instruments) recordAttempt(ctx context.Context, r delivery.Result, took time.Duration) {
	class := string(r.Class)
	if class == "" {
		class = "none"
	}
	i.attempts.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", string(r.Kind)), attribute.String("class", class)))
	i.durations.Record(ctx, took.Seconds(), metric.WithAttributes(attribute.String("outcome", string(r.Kind))))
}

// recordEnd counts a delivery that reached delivered or failed.
func (i instruments) recordEnd(ctx context.Context, status string) {
	if status == store.StatusDelivered || status == store.StatusFailed {
		i.ended.Add(ctx, 1, metric.WithAttributes(attribute.String("status", status)))
	}
}
