package proxy_test

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
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
	"github.com/pcourt/pcourt/services/compat-edge/internal/proxy"
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
	Proto       string `json:"forwardedProto"`
	Host        string `json:"forwardedHost"`
	Prefix      string `json:"forwardedPrefix"`
	RFC7239     string `json:"forwarded"`
}

func upstream(t *testing.T, owner routing.Owner) *url.URL {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", r.Header.Get("X-Request-Id"))
		_ = json.NewEncoder(w).Encode(seen{
			Owner: string(owner), Path: r.URL.Path, Query: r.URL.RawQuery,
			RequestID: r.Header.Get("X-Request-Id"), Traceparent: r.Header.Get("Traceparent"),
			Forwarded: strings.Join(r.Header.Values("X-Forwarded-For"), "|"),
			Proto:     r.Header.Get("X-Forwarded-Proto"), Host: r.Header.Get("X-Forwarded-Host"),
			Prefix: r.Header.Get("X-Forwarded-Prefix"), RFC7239: r.Header.Get("Forwarded"),
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
	return newEdgeWith(t, upstreams, httpserver.DefaultConfig(), proxy.Forwarding{})
}

func newEdgeWith(t *testing.T, upstreams map[routing.Owner]*url.URL, cfg httpserver.Config, fwd proxy.Forwarding) edge {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "# edge metrics\n") })
	tel := &telemetry.Providers{Tracer: tp, Meter: noop.NewMeterProvider(), Propagator: propagation.TraceContext{}, MetricsHandler: metrics}
	deps := httpserver.Deps{Service: "compat-edge", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Telemetry: tel}
	forward, err := proxy.NewProxy(routing.NewTable(routing.Families), upstreams, fwd, tel.Propagator, proxy.Compat{})
	require.NoError(t, err)
	doc, err := api.JSON()
	require.NoError(t, err)
	return edge{url: serveEdge(t, cfg, deps, forward, proxy.Config{MaxBodyBytes: 16 << 20}, doc), spans: spans}
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
		"/api/console/links":                      routing.Console,
		"/console/deliveries":                     routing.Console,
		"/api/accounts/acct_1/clients":            routing.Accounts,
		"/account/signin":                         routing.Accounts,
		"/oauth/token":                            routing.Accounts,
		"/.well-known/oauth-authorization-server": routing.Accounts,
		"/mcp": routing.MCP,
		"/.well-known/oauth-protected-resource/mcp": routing.MCP,
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
	for _, path := range []string{"/api/v3/cases", "/api/filingsx", "/nowhere", "/oauthx", "/.well-known/oauth-protected-resource"} {
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
	require.Equal(t, []any{map[string]any{"url": "/", "description": "relative: the address this document was fetched from"}}, doc["servers"],
		"no fixed host: a client resolves the server against where it fetched the document")
}

func TestServedDocumentNamesThePublicURL(t *testing.T) {
	doc, err := api.JSON()
	require.NoError(t, err)
	served, err := proxy.ServedDocument(doc, "https://api.pcourt.example")
	require.NoError(t, err)
	var got struct {
		OpenAPI string
		Servers []struct{ URL string }
		Paths   map[string]any
	}
	require.NoError(t, json.Unmarshal(served, &got))
	require.Len(t, got.Servers, 1)
	require.Equal(t, "https://api.pcourt.example", got.Servers[0].URL)
	require.Contains(t, got.Paths, "/api/x402/dispute-readiness", "the rest of the document is intact")

	_, err = proxy.ServedDocument(doc, "api.pcourt.example")
	require.Error(t, err, "a public URL must be absolute")
}

func TestOversizeBodyIsRefusedAtTheEdge(t *testing.T) {
	var reached atomic.Bool
	e := edgeWithOwner(t, routing.Readiness, func(http.ResponseWriter, *http.Request) { reached.Store(true) })
	req, err := http.NewRequest(http.MethodPost, e.url+"/api/x402/dispute-readiness", strings.NewReader(strings.Repeat("a", 17<<20)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue") // refused on its Content-Length: the body is never sent
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	require.False(t, reached.Load(), "nothing reached the owner")
}

func TestEveryOwnerNeedsAnUpstream(t *testing.T) {
	ups := allUpstreams(t)
	delete(ups, routing.Webhooks)
	_, err := proxy.NewProxy(routing.NewTable(routing.Families), ups, proxy.Forwarding{}, propagation.TraceContext{}, proxy.Compat{})
	require.ErrorContains(t, err, "webhooks")
}

func TestForwardedHeadersComeFromTheEdge(t *testing.T) {
	forged := map[string]string{
		"X-Forwarded-For":    "6.6.6.6",
		"X-Forwarded-Proto":  "https",
		"X-Forwarded-Host":   "evil.example",
		"X-Forwarded-Prefix": "/internal",
		"Forwarded":          "for=6.6.6.6;proto=https",
	}
	behindIngress := httpserver.DefaultConfig()
	behindIngress.TrustedHops = 1
	behindIngress.TrustedProxies = []string{"127.0.0.1"} // the ingress: where the test's requests come from
	pastIngress := httpserver.DefaultConfig()
	pastIngress.TrustedHops = 1
	pastIngress.TrustedProxies = []string{"192.0.2.0/24"} // an ingress the test's requests do not come through
	tests := []struct {
		name      string
		cfg       httpserver.Config
		fwd       proxy.Forwarding
		clientXFF string // what reaches the edge: the client's part, then the ingress's
		wantFor   string
		wantProto string
	}{
		{"direct: the peer is the client, forged headers dropped", httpserver.DefaultConfig(), proxy.Forwarding{}, "6.6.6.6", "127.0.0.1", "http"},
		{"behind a TLS-terminating ingress: its entry is the client", behindIngress, proxy.Forwarding{TLSTerminated: true}, "6.6.6.6, 198.51.100.7", "198.51.100.7", "https"},
		{"hops, but reached directly past the ingress: the peer is the client", pastIngress, proxy.Forwarding{TLSTerminated: true}, "6.6.6.6, 198.51.100.7", "127.0.0.1", "https"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEdgeWith(t, allUpstreams(t), tc.cfg, tc.fwd)
			req, _ := http.NewRequest(http.MethodGet, e.url+"/api/cases/cs_1", nil)
			for k, v := range forged {
				req.Header.Set(k, v)
			}
			req.Header.Set("X-Forwarded-For", tc.clientXFF)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			var got seen
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
			resp.Body.Close()

			require.Equal(t, tc.wantFor, got.Forwarded, "one X-Forwarded-For, the client as the edge knows it")
			require.Equal(t, tc.wantProto, got.Proto)
			require.Equal(t, strings.TrimPrefix(e.url, "http://"), got.Host, "the host the client asked for")
			require.Empty(t, got.Prefix)
			require.Empty(t, got.RFC7239)
		})
	}
}

func TestEdgeDoesNotServeMetrics(t *testing.T) {
	e := newEdge(t, allUpstreams(t))
	for _, path := range []string{"/metrics", "/debug/pprof/", "/api/../metrics"} {
		resp, err := http.Get(e.url + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NotEqual(t, http.StatusOK, resp.StatusCode, path)
		require.NotContains(t, string(body), "edge metrics", path)
	}
}

func TestEdgeCapsHeadersAndConcurrency(t *testing.T) {
	held, release := make(chan struct{}, 4), make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		held <- struct{}{}
		<-release
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(slow.Close)
	ups := allUpstreams(t)
	slowURL, _ := url.Parse(slow.URL)
	ups[routing.Cases] = slowURL

	cfg := httpserver.DefaultConfig()
	cfg.MaxInFlight = 2
	cfg.MaxHeaderBytes = 8 << 10
	forward, err := proxy.NewProxy(routing.NewTable(routing.Families), ups, proxy.Forwarding{}, propagation.TraceContext{}, proxy.Compat{})
	require.NoError(t, err)
	base := serveEdge(t, cfg, httpserver.Deps{Service: "compat-edge", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, forward, proxy.Config{MaxBodyBytes: 16 << 20}, []byte("{}"))
	t.Cleanup(func() { close(release) }) // before the edge drains

	// A header block past the limit is a 431 problem, never forwarded.
	req, _ := http.NewRequest(http.MethodGet, base+"/api/filings/fl_1", nil)
	req.Header.Set("X-Padding", strings.Repeat("a", 12<<10))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
	require.Equal(t, "header_too_large", problemOf(t, resp).Code)
	resp.Body.Close()

	// With two requests held upstream, the third is refused at once.
	for range 2 {
		go func() {
			if r, err := http.Get(base + "/api/cases/cs_1"); err == nil {
				r.Body.Close()
			}
		}()
	}
	<-held
	<-held
	resp, err = http.Get(base + "/api/filings/fl_1")
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	require.Equal(t, "overloaded", problemOf(t, resp).Code)
	resp.Body.Close()
}

// A request whose body ends before its Content-Length (the client went
// away, or lied) is answered 400 by the edge, which reads small bodies
// whole before it calls the owner: the owner never sees a body cut short.
func TestABodyCutShortNeverReachesTheOwner(t *testing.T) {
	var reached atomic.Bool
	e := edgeWithOwner(t, routing.Filings, func(http.ResponseWriter, *http.Request) { reached.Store(true) })

	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /api/v2/case-drafts HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"claimant\":")
	require.NoError(t, err)
	require.NoError(t, conn.(*net.TCPConn).CloseWrite()) // 12 of the 100 bytes, then nothing
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	var p problem.Body
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
	require.Equal(t, problem.InvalidRequest.Name, p.Code)
	require.Contains(t, p.Detail, "ended after 12 of the 100 bytes")
	require.False(t, reached.Load(), "nothing reached the owner")
}

// An owner's answer with a header block of several KiB (a 402 challenge's
// PAYMENT-REQUIRED header grows with the accepted payments) reaches the
// partner whole: the edge reads an answer's header within
// ExchangeBufferSize, not fasthttp's 4 KiB default, which refused it.
func TestAnOwnersLargeHeaderBlockReachesThePartnerWhole(t *testing.T) {
	challenge := strings.Repeat("eyJ4NDAyVmVyc2lvbiI6Mn0", 400) // 9,200 bytes of base64
	require.Greater(t, len(challenge), 8<<10)
	require.Less(t, len(challenge), proxy.ExchangeBufferSize-1<<10)
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Payment-Required", challenge)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusPaymentRequired)
		_, _ = io.WriteString(w, `{"error":"payment_required"}`)
	}))
	t.Cleanup(owner.Close)
	upstreams := allUpstreams(t)
	upstreams[routing.Readiness], _ = url.Parse(owner.URL)
	e := newEdge(t, upstreams)

	resp, err := http.Post(e.url+"/api/x402/dispute-readiness", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusPaymentRequired, resp.StatusCode, string(body))
	require.Equal(t, challenge, resp.Header.Get("Payment-Required"))
	require.JSONEq(t, `{"error":"payment_required"}`, string(body))
}

func TestTheAnswersSizeIsTheBodyThePartnerGets(t *testing.T) {
	e := newEdge(t, allUpstreams(t))
	for _, path := range []string{"/api/cases/cs_1", "/api/nowhere"} {
		resp, err := http.Get(e.url + path)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		require.NotEmpty(t, body)

		ended := e.spans.Ended()
		var size int64 = -1
		for _, kv := range ended[len(ended)-1].Attributes() {
			if kv.Key == "http.response.body.size" {
				size = kv.Value.AsInt64()
			}
		}
		require.Equal(t, int64(len(body)), size, "%s: the span (and the access line) state the body's size", path)
	}
}
