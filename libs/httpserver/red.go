package httpserver

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// RequestDurationMetric is the one RED instrument of every public listener:
// a histogram of request durations whose count is the request rate and
// whose code label gives the errors. Exported to Prometheus as
// pcourt_http_server_request_duration_seconds{service, route, method, code}.
const RequestDurationMetric = "pcourt.http.server.request.duration"

// requestDurationBuckets are the histogram's bounds in seconds. The
// latency SLO's threshold (0.5 s, docs/observability.md) is one of them,
// so the fraction of requests within it is exact.
var requestDurationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// UnmatchedRoute labels requests no route matched: one series for every
// unknown path, never the path itself.
const UnmatchedRoute = "unmatched"

// routeKey holds the route template a handler named with LabelRoute.
const routeKey = "pcourt.httpserver.route"

// LabelRoute names the route template the request is counted under, for a
// handler that knows it better than the router: the edge's one catch-all
// proxy route knows which inventory route the request matched. The template
// must come from a fixed set, never from the request, so the metric's
// series stay bounded.
func LabelRoute(c *gin.Context, template string) { c.Set(routeKey, template) }

// requestMetrics records every request but the probes in the RED
// histogram, labelled by route template (gin's FullPath, or what the
// handler named with LabelRoute), method and status code. It runs outside
// the panic recovery, so a panic is counted as the 500 it becomes.
func requestMetrics(mp metric.MeterProvider) gin.HandlerFunc {
	h, err := mp.Meter("github.com/pcourt/pcourt/libs/httpserver").Float64Histogram(RequestDurationMetric,
		metric.WithUnit("s"),
		metric.WithDescription("Duration of public HTTP requests by route template, method and status code."),
		metric.WithExplicitBucketBoundaries(requestDurationBuckets...))
	if err != nil {
		// Only an invalid name or bounds fail, both constants here.
		panic(err)
	}
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		if isOperational(c.Request.URL.Path) {
			return
		}
		h.Record(c.Request.Context(), time.Since(start).Seconds(), metric.WithAttributes(
			attribute.String("route", routeOf(c)),
			attribute.String("method", methodOf(c.Request.Method)),
			attribute.String("code", strconv.Itoa(c.Writer.Status())),
		))
	}
}

func routeOf(c *gin.Context) string {
	if r, ok := c.Value(routeKey).(string); ok && r != "" {
		return r
	}
	if r := c.FullPath(); r != "" {
		return r
	}
	return UnmatchedRoute
}

// methodOf keeps the method label bounded: a method outside HTTP's own is
// counted as _OTHER, as OpenTelemetry's conventions do.
func methodOf(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "_OTHER"
}
