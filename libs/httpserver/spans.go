package httpserver

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// spanScope names the instrumentation that makes the server spans.
const spanScope = "github.com/pcourt/pcourt/libs/httpserver"

// serverSpans starts each request's server span, the child of the caller's
// traceparent, and puts it in the request's context for everything the
// request does (the owner call, Redis, the outbox, the logs' trace ids).
//
// Most requests are not sampled (the chart samples one in ten), and their
// span records nothing: its attributes are worked out only for a span that
// is recorded. otelgin, which this replaces, built the request's
// attributes, copied the request twice and recorded its own metrics
// (discarded here) on every request, sampled or not: 4 to 9 % of the
// edge's CPU under load (docs/compatibility.md, "Performance (measured)").
//
// The span is named by its route template when the request ends, so the
// edge's spans carry the inventory route it matched (LabelRoute), as the
// RED histogram does.
func serverSpans(p *Platform) gin.HandlerFunc {
	tracer, propagator := p.Tracer(), p.Propagator()
	return func(c *gin.Context) {
		if IsOperational(c.Request.URL.Path) {
			c.Next()
			return
		}
		in := c.Request
		ctx := propagator.Extract(in.Context(), propagation.HeaderCarrier(in.Header))
		ctx, span := tracer.Start(ctx, "HTTP "+MethodLabel(in.Method), trace.WithSpanKind(trace.SpanKindServer))
		c.Request = in.WithContext(ctx)
		defer func() {
			span.End()
			c.Request = in
		}()
		recording := span.IsRecording()
		if recording {
			span.SetAttributes(requestAttributes(in)...)
		}
		c.Next()
		if !recording {
			return
		}
		route := routeOf(c)
		status := c.Writer.Status()
		span.SetName(MethodLabel(in.Method) + " " + route)
		span.SetAttributes(
			semconv.HTTPRoute(route),
			semconv.HTTPResponseStatusCode(status),
			attribute.Int("http.response.body.size", c.Writer.Size()),
		)
		// A server span is an error for a 5xx only: a 4xx is the
		// caller's mistake, answered as it should be.
		if status >= http.StatusInternalServerError {
			span.SetStatus(codes.Error, strconv.Itoa(status))
		}
		if len(c.Errors) > 0 {
			span.SetAttributes(attribute.String("error.message", c.Errors.String()))
		}
	}
}

// requestAttributes are the HTTP semantic conventions' request attributes
// of a server span.
func requestAttributes(r *http.Request) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		semconv.HTTPRequestMethodKey.String(MethodLabel(r.Method)),
		semconv.URLPath(r.URL.Path),
		semconv.URLScheme(schemeOf(r)),
		semconv.ServerAddress(r.Host),
		semconv.NetworkProtocolVersion(strconv.Itoa(r.ProtoMajor) + "." + strconv.Itoa(r.ProtoMinor)),
	}
	if client := ClientAddr(r.Context()); client != "" {
		attrs = append(attrs, semconv.ClientAddress(client))
	}
	if ua := r.UserAgent(); ua != "" {
		attrs = append(attrs, semconv.UserAgentOriginal(ua))
	}
	return attrs
}

func schemeOf(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}
