package httpserver

import (
	"context"
	"log/slog"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/pcourt/pcourt/libs/logging"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/ratelimit"
)

// Platform is one server's per-request checks and records: the client
// address, the in-flight and per-address limits, the RED histogram, the
// access log line and the tracer. The gin middleware of the server's
// engine is written on it, and so is a public server that is not net/http
// (the edge's proxy path, services/compat-edge/internal/proxy), so that
// both count against the same in-flight slots and address budgets and
// record the same series and lines: a request is checked the same way
// whichever of the two serves it.
type Platform struct {
	cfg        Config
	logger     *slog.Logger
	trusted    []netip.Prefix
	slots      chan struct{}
	limiter    *ratelimit.Limiter
	durations  metric.Float64Histogram // nil without a meter
	series     sync.Map                // seriesKey → metric.MeasurementOption
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
}

func newPlatform(cfg Config, deps Deps) *Platform {
	trusted, _ := parsePrefixes(cfg.TrustedProxies) // Validate reports bad entries
	p := &Platform{
		cfg: cfg, logger: deps.Logger, trusted: trusted,
		slots:      make(chan struct{}, cfg.MaxInFlight),
		tracer:     noop.NewTracerProvider().Tracer(spanScope),
		propagator: propagation.TraceContext{},
	}
	if deps.Limiter != nil && cfg.AddressRate.Enabled() {
		p.limiter = deps.Limiter
	}
	if t := deps.Telemetry; t != nil {
		if t.Meter != nil {
			h, err := t.Meter.Meter("github.com/pcourt/pcourt/libs/httpserver").Float64Histogram(RequestDurationMetric,
				metric.WithUnit("s"),
				metric.WithDescription("Duration of public HTTP requests by route template, method and status code."),
				metric.WithExplicitBucketBoundaries(requestDurationBuckets...))
			if err != nil {
				// Only an invalid name or bounds fail, both constants here.
				panic(err)
			}
			p.durations = h
		}
		if t.Tracer != nil {
			p.tracer = t.Tracer.Tracer(spanScope)
		}
		if t.Propagator != nil {
			p.propagator = t.Propagator
		}
	}
	return p
}

// Config is the server's configuration.
func (p *Platform) Config() Config { return p.cfg }

// Logger is the server's logger.
func (p *Platform) Logger() *slog.Logger { return p.logger }

// Tracer makes the server spans.
func (p *Platform) Tracer() trace.Tracer { return p.tracer }

// Propagator reads a caller's trace context and writes it for the next hop.
func (p *Platform) Propagator() propagation.TextMapPropagator { return p.propagator }

// ClientAddr names the client of a request from its peer's address and
// its X-Forwarded-For lines, as ResolveClientAddr does, with the server's
// trusted proxies and hops.
func (p *Platform) ClientAddr(remoteAddr string, forwardedForLines []string) string {
	return ClientAddrOf(remoteAddr, forwardedForLines, p.trusted, p.cfg.TrustedHops)
}

// HeaderTooLarge is the 431 of a request whose request line and headers
// (n bytes) exceed the server's limit, nil within it.
func (p *Platform) HeaderTooLarge(n int) *problem.Error {
	if n <= p.cfg.MaxHeaderBytes {
		return nil
	}
	return problem.Newf(problem.HeaderTooLarge, "The request line and headers exceed %d bytes.", p.cfg.MaxHeaderBytes)
}

// Admit takes one of the instance's in-flight slots, or refuses the
// request at once with 503 overloaded: queueing it would hold its memory
// and make every waiting caller slower. The caller gives the slot back
// with Leave.
func (p *Platform) Admit() *problem.Error {
	select {
	case p.slots <- struct{}{}:
		return nil
	default:
		return problem.New(problem.Overloaded, "This instance is serving as many requests as it can; retry shortly.").
			WithHeader("Retry-After", "1")
	}
}

// Leave gives back the slot Admit took.
func (p *Platform) Leave() { <-p.slots }

// AllowAddress counts the request against its client address's rate,
// shared by every replica (the limiter spends tokens it leased from Redis
// in process), and returns the 429 when the address is over it. When Redis
// cannot be asked the request passes and the failure is logged: the limit
// protects the service, it is not a reason to refuse everyone.
func (p *Platform) AllowAddress(ctx context.Context, addr string) *problem.Error {
	if p.limiter == nil {
		return nil
	}
	d, err := p.limiter.Allow(ctx, "addr:"+addr, p.cfg.AddressRate)
	if err != nil {
		p.logger.WarnContext(ctx, "address rate limit unavailable; request passes", "err", err)
		return nil
	}
	if !d.Allowed {
		return RateLimited(d, "Too many requests from this address; retry after the time in Retry-After.")
	}
	return nil
}

// Finished is what Record and Log need of a request that has been
// answered.
type Finished struct {
	Method string
	// Route is the template the request is counted under, never the raw
	// path (LabelRoute).
	Route  string
	Path   string
	Client string
	Status int
	Bytes  int
	Start  time.Time
}

// Record counts the request in the RED histogram.
func (p *Platform) Record(ctx context.Context, f Finished) {
	if p.durations == nil {
		return
	}
	key := seriesKey{route: f.Route, method: MethodLabel(f.Method), code: f.Status}
	attrs, ok := p.series.Load(key)
	if !ok {
		attrs, _ = p.series.LoadOrStore(key, metric.WithAttributeSet(attribute.NewSet(
			attribute.String("route", key.route),
			attribute.String("method", key.method),
			attribute.String("code", strconv.Itoa(key.code)),
		)))
	}
	p.durations.Record(ctx, time.Since(f.Start).Seconds(), attrs.(metric.MeasurementOption))
}

// Log writes the request's access line (logging.LogRequest).
func (p *Platform) Log(ctx context.Context, f Finished) {
	logging.LogRequest(ctx, p.logger, logging.Request{
		Method: f.Method, Route: f.Route, Path: problem.Clip(f.Path), Client: f.Client,
		Status: f.Status, Bytes: f.Bytes, DurationMicros: time.Since(f.Start).Microseconds(),
	})
}

// IsOperational says whether path is a probe (/livez, /readyz), which is
// neither limited, counted, logged nor traced.
func IsOperational(path string) bool {
	return path == "/livez" || path == "/readyz"
}
