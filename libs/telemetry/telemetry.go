// Package telemetry sets up OpenTelemetry tracing and metrics for a service
// from the standard OTEL_* environment variables.
//
// Traces go to an OTLP/HTTP collector when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; otherwise spans are still created
// (trace ids reach logs and Kafka headers) but not exported. Metrics are always
// exposed for Prometheus to scrape at /metrics, every series labelled
// service="<name>" (docs/observability.md lists them).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// ServiceLabel is the label naming the service on every exported series.
// Scrapes must keep it (a ServiceMonitor with honorLabels: the Prometheus
// Operator's own "service" target label names the Kubernetes Service).
const ServiceLabel = "service"

// Config names the service in every span and metric.
type Config struct {
	ServiceName    string
	ServiceVersion string
}

// Providers holds what a service needs to instrument itself.
type Providers struct {
	Tracer         trace.TracerProvider
	Meter          metric.MeterProvider
	Propagator     propagation.TextMapPropagator
	MetricsHandler http.Handler

	shutdown []func(context.Context) error
}

// Setup builds the providers and installs them as the OpenTelemetry globals,
// so instrumentation libraries that only look at the globals agree with ours.
func Setup(ctx context.Context, cfg Config, getenv func(string) string) (*Providers, error) {
	if cfg.ServiceName == "" {
		return nil, errors.New("telemetry: service name required")
	}
	res, err := resource.New(ctx,
		resource.WithFromEnv(), // OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME override
		resource.WithAttributes(
			semconv.ServiceName(cfg.ServiceName),
			semconv.ServiceVersion(cfg.ServiceVersion),
		),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: building resource: %w", err)
	}

	p := &Providers{Propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}

	traceOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
		exp, err := otlptracehttp.New(ctx) // reads the OTEL_EXPORTER_OTLP_* variables itself
		if err != nil {
			return nil, fmt.Errorf("telemetry: creating OTLP exporter: %w", err)
		}
		traceOpts = append(traceOpts, sdktrace.WithBatcher(exp))
	}
	tp := sdktrace.NewTracerProvider(traceOpts...)
	p.Tracer = tp
	p.shutdown = append(p.shutdown, tp.Shutdown)

	reg := prometheus.NewRegistry()
	// Every series carries service="<name>": alerts and dashboards group
	// by it. OpenTelemetry's exporter would put service.name on
	// target_info alone, and a join on it in every query is what nobody
	// writes in an alert.
	labelled := prometheus.WrapRegistererWith(prometheus.Labels{ServiceLabel: cfg.ServiceName}, reg)
	labelled.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exporter, err := otelprom.New(otelprom.WithRegisterer(labelled))
	if err != nil {
		return nil, fmt.Errorf("telemetry: creating Prometheus exporter: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(exporter))
	p.Meter = mp
	p.MetricsHandler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	p.shutdown = append(p.shutdown, mp.Shutdown)

	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	otel.SetTextMapPropagator(p.Propagator)
	return p, nil
}

// Shutdown flushes pending spans and stops the providers.
func (p *Providers) Shutdown(ctx context.Context) error {
	var errs []error
	for i := len(p.shutdown) - 1; i >= 0; i-- {
		errs = append(errs, p.shutdown[i](ctx))
	}
	return errors.Join(errs...)
}
