package httpapi_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/telemetry"
	"github.com/pcourt/pcourt/services/compat-edge/internal/httpapi"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

// seen is what an upstream service received from the edge.
type seen struct {
	Owner       string `json:"owner"`
	Path        string `json:"path"`
	Query       string `json:"query"`
	RequestID   string `json:"requestId"`
	Traceparent string `json:"traceparent"`
	Forwarded   string `json:"forwardedFor"`
}

func upstream(t *testing.T, owner routing.Owner) *url.URL {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", r.Header.Get("X-Request-Id"))
		_ = json.NewEncoder(w).Encode(seen{
			Owner: string(owner), Path: r.URL.Path, Query: r.URL.RawQuery,
			RequestID: r.Header.Get("X-Request-Id"), Traceparent: r.Header.Get("Traceparent"),
			Forwarded: r.Header.Get("X-Forwarded-For"),
		})
	}))
	t.Cleanup(ts.Close)
	u, _ := url.Parse(ts.URL)
	return u
}

type edge struct {
	url   string
	spans *tracetest.SpanRecorder
}

func newEdge(t *testing.T, upstreams map[routing.Owner]*url.URL) edge {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	tel := &telemetry.Providers{Tracer: tp, Meter: noop.NewMeterProvider(), Propagator: propagation.TraceContext{}, MetricsHandler: http.NotFoundHandler()}
	srv := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "compat-edge", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Telemetry: tel})
	proxy, err := httpapi.NewProxy(routing.NewTable(routing.Families), upstreams, tel.Propagator)
	require.NoError(t, err)
	doc, err := api.JSON()
	require.NoError(t, err)
	httpapi.Register(srv.Router(), proxy, doc)
	ts := httptest.NewServer(srv.Router())
	t.Cleanup(ts.Close)
	return edge{url: ts.URL, spans: spans}
}

func allUpstreams(t *testing.T) map[routing.Owner]*url.URL {
	m := map[routing.Owner]*url.URL{}
	for _, o := range routing.Owners {
		m[o] = upstream(t, o)
	}
	return m
}

func TestRoutesEachFamilyToItsOwner(t *testing.T) {
	e := newEdge(t, allUpstreams(t))
	for path, owner := range map[string]routing.Owner{
		"/api/x402/dispute-readiness":             routing.Readiness,
		"/api/v2/case-drafts/dr_1/confirmations":  routing.Filings,
		"/api/filings/fl_1":                       routing.Filings,
		"/api/disputes/d_1/answer":                routing.Cases,
		"/api/cases/cs_1/events":                  routing.Cases,
		"/api/v2/webhooks/deliveries/dl_1/replay": routing.Webhooks,
	} {
		req, _ := http.NewRequest(http.MethodPost, e.url+path+"?page=2", nil)
		req.Header.Set("X-Request-Id", "partner-req-1")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var got seen
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, string(owner), got.Owner, path)
		require.Equal(t, path, got.Path, "the path reaches the owner unchanged")
		require.Equal(t, "page=2", got.Query)
		require.Equal(t, "partner-req-1", got.RequestID, "the caller's request id reaches the owner")
		require.Equal(t, []string{"partner-req-1"}, resp.Header.Values("X-Request-Id"), "one request id header, not two")
		require.NotEmpty(t, got.Forwarded)
	}
}

func TestTraceContextReachesTheOwner(t *testing.T) {
	e := newEdge(t, allUpstreams(t))
	resp, err := http.Get(e.url + "/api/cases/cs_1")
	require.NoError(t, err)
	var got seen
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	resp.Body.Close()

	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(t.Context(), propagation.MapCarrier{"traceparent": got.Traceparent}))
	require.True(t, sc.IsValid(), "owner received a traceparent")
	ended := e.spans.Ended()
	require.Len(t, ended, 1)
	require.Equal(t, ended[0].SpanContext().TraceID(), sc.TraceID())
	require.Equal(t, ended[0].SpanContext().SpanID(), sc.SpanID(), "the owner's span will be a child of the edge span")
}

func problemOf(t *testing.T, resp *http.Response) problem.Body {
	t.Helper()
	require.Equal(t, problem.ContentType, resp.Header.Get("Content-Type"))
	var p problem.Body
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
	return p
}

func TestUnknownPathIsA404Problem(t *testing.T) {
	e := newEdge(t, allUpstreams(t))
	for _, path := range []string{"/api/v3/cases", "/api/filingsx", "/nowhere"} {
		resp, err := http.Get(e.url + path)
		require.NoError(t, err)
		require.Equal(t, http.StatusNotFound, resp.StatusCode)
		p := problemOf(t, resp)
		resp.Body.Close()
		require.Equal(t, "not_found", p.Code)
		require.Equal(t, resp.Header.Get("X-Request-Id"), p.RequestID)
	}
}

func TestOwnerDownIsA502Problem(t *testing.T) {
	ups := allUpstreams(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL, _ := url.Parse(dead.URL)
	dead.Close()
	ups[routing.Cases] = deadURL
	e := newEdge(t, ups)

	resp, err := http.Get(e.url + "/api/cases/cs_1")
	require.NoError(t, err)
	require.Equal(t, http.StatusBadGateway, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("Retry-After"))
	p := problemOf(t, resp)
	resp.Body.Close()
	require.Equal(t, "upstream_unavailable", p.Code)
	require.NotContains(t, p.Detail, deadURL.Host, "internal addresses stay internal")
}

func TestServesTheAPIDocument(t *testing.T) {
	e := newEdge(t, allUpstreams(t))
	req, _ := http.NewRequest(http.MethodGet, e.url+"/openapi.json", nil)
	_, body := apitest.Do(t, http.DefaultClient, req)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(body, &doc))
	require.Equal(t, "3.1.0", doc["openapi"])
}

func TestEveryOwnerNeedsAnUpstream(t *testing.T) {
	ups := allUpstreams(t)
	delete(ups, routing.Webhooks)
	_, err := httpapi.NewProxy(routing.NewTable(routing.Families), ups, propagation.TraceContext{})
	require.ErrorContains(t, err, "webhooks")
}
