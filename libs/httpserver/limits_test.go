package httpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/logging"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/telemetry"
)

// running starts s on loopback ports through Run, as in production, so the
// http.Server settings (header limit, admin listener) apply.
func running(t *testing.T, s *httpserver.Server) (public, admin string) {
	t.Helper()
	addr, err := s.Listen()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	public = "http://" + addr.String()
	if a := s.AdminAddr(); a != nil {
		admin = "http://" + a.String()
	}
	return public, admin
}

func loopbackConfig() httpserver.Config {
	cfg := httpserver.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	return cfg
}

func quietDeps() httpserver.Deps {
	return httpserver.Deps{Service: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func TestHeaderLimit(t *testing.T) {
	cfg := loopbackConfig()
	cfg.MaxHeaderBytes = 8 << 10
	s := httpserver.New(cfg, quietDeps())
	s.Router().GET("/x", func(c *gin.Context) { c.String(http.StatusOK, "ok") })
	public, _ := running(t, s)

	tests := []struct {
		name       string
		headerSize int
		status     int
		asProblem  bool
	}{
		{"within the limit", 4 << 10, 200, false},
		{"over the limit: a problem", 12 << 10, 431, true},
		{"far over: net/http refuses before any handler", 1 << 20, 431, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, public+"/x", nil)
			require.NoError(t, err)
			req.Header.Set("X-Padding", strings.Repeat("a", tc.headerSize))
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
			if tc.asProblem {
				require.Equal(t, "header_too_large", readProblem(t, resp).Code)
			}
		})
	}
}

func TestInFlightLimit(t *testing.T) {
	cfg := loopbackConfig()
	cfg.MaxInFlight = 2
	s := httpserver.New(cfg, quietDeps())
	entered, release := make(chan struct{}, 2), make(chan struct{})
	s.Router().GET("/slow", func(c *gin.Context) {
		entered <- struct{}{}
		<-release
		c.String(http.StatusOK, "done")
	})
	ts := httptest.NewServer(s.Router())
	t.Cleanup(ts.Close)

	results := make(chan int, 2)
	for range 2 {
		go func() {
			resp, err := http.Get(ts.URL + "/slow")
			if err != nil {
				results <- 0
				return
			}
			resp.Body.Close()
			results <- resp.StatusCode
		}()
	}
	<-entered
	<-entered

	resp, err := http.Get(ts.URL + "/slow")
	require.NoError(t, err)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	require.Equal(t, "overloaded", readProblem(t, resp).Code)
	resp.Body.Close()

	probe, err := http.Get(ts.URL + "/livez")
	require.NoError(t, err)
	probe.Body.Close()
	require.Equal(t, http.StatusOK, probe.StatusCode, "probes are not refused while overloaded")

	close(release)
	require.Equal(t, 200, <-results)
	require.Equal(t, 200, <-results)
	after, err := http.Get(ts.URL + "/nowhere")
	require.NoError(t, err)
	after.Body.Close()
	require.Equal(t, http.StatusNotFound, after.StatusCode, "slots are given back")
}

func TestMetricsAndProfilingOnlyOnTheAdminListener(t *testing.T) {
	deps := quietDeps()
	deps.Telemetry = &telemetry.Providers{MetricsHandler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "# metrics\n")
	})}
	s := httpserver.New(loopbackConfig(), deps)
	public, admin := running(t, s)
	require.NotEmpty(t, admin)

	tests := []struct {
		base, path string
		status     int
	}{
		{public, "/metrics", 404},
		{public, "/debug/pprof/", 404},
		{public, "/livez", 200},
		{public, "/readyz", 200},
		{admin, "/metrics", 200},
		{admin, "/debug/pprof/", 200},
		{admin, "/debug/pprof/heap", 200},
		{admin, "/livez", 200},
		{admin, "/readyz", 200},
	}
	for _, tc := range tests {
		resp, err := http.Get(tc.base + tc.path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, tc.status, resp.StatusCode, "%s%s", tc.base, tc.path)
	}
}

func TestAdminAddressIsDerivedFromThePublicPort(t *testing.T) {
	cfg := httpserver.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.AdminAddr = "off"
	s := httpserver.New(cfg, quietDeps())
	_, admin := running(t, s)
	require.Empty(t, admin, "off runs no admin listener")

	bad := httpserver.DefaultConfig()
	bad.Addr = "no-port"
	require.Error(t, bad.Validate())
}

func TestResolveClientAddr(t *testing.T) {
	edge := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	ingress := []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}
	tests := []struct {
		name    string
		remote  string
		xff     []string
		trusted []netip.Prefix
		hops    int
		want    string
	}{
		{"no proxy configured: peer, forged header ignored", "203.0.113.9:5000", []string{"1.2.3.4"}, nil, 0, "203.0.113.9"},
		{"untrusted peer: its header is ignored", "203.0.113.9:5000", []string{"1.2.3.4"}, edge, 0, "203.0.113.9"},
		{"trusted edge: rightmost entry", "10.1.2.3:5000", []string{"198.51.100.7"}, edge, 0, "198.51.100.7"},
		{"trusted edge: client-forged entries on the left are skipped", "10.1.2.3:5000", []string{"1.2.3.4, 198.51.100.7"}, edge, 0, "198.51.100.7"},
		{"trusted edge: trusted entries skipped from the right", "10.1.2.3:5000", []string{"198.51.100.7, 10.9.9.9"}, edge, 0, "198.51.100.7"},
		{"trusted edge without header: peer", "10.1.2.3:5000", nil, edge, 0, "10.1.2.3"},
		{"garbage chain: peer", "10.1.2.3:5000", []string{"198.51.100.7, nonsense"}, edge, 0, "10.1.2.3"},
		{"one ingress hop: last entry", "192.0.2.1:443", []string{"1.2.3.4, 198.51.100.7"}, ingress, 1, "198.51.100.7"},
		{"two hops", "192.0.2.1:443", []string{"1.2.3.4, 198.51.100.7, 192.0.2.50"}, ingress, 2, "198.51.100.7"},
		{"hops but no header: peer", "192.0.2.1:443", nil, ingress, 1, "192.0.2.1"},
		{"hops, chain shorter than the hops: peer", "192.0.2.1:443", []string{"198.51.100.7"}, ingress, 2, "192.0.2.1"},
		{"hops, peer not the ingress (reached directly): peer, forged header ignored", "203.0.113.9:5000", []string{"1.2.3.4"}, ingress, 1, "203.0.113.9"},
		{"hops and no proxy configured: peer, forged header ignored", "203.0.113.9:5000", []string{"1.2.3.4"}, nil, 1, "203.0.113.9"},
		{"IPv6 peer", "[2001:db8::1]:443", nil, nil, 0, "2001:db8::1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			require.Equal(t, tc.want, httpserver.ResolveClientAddr(r, tc.trusted, tc.hops))
		})
	}
}

func TestAddressRateLimit(t *testing.T) {
	cfg := httpserver.DefaultConfig()
	cfg.TrustedProxies = []string{"127.0.0.1"}
	cfg.AddressRate = ratelimit.Rule{Rate: 1, Period: time.Hour, Burst: 3}
	deps := quietDeps()
	deps.Limiter = ratelimit.New(redistest.NewClient(t), "test:rl")
	s := httpserver.New(cfg, deps)
	s.Router().GET("/x", func(c *gin.Context) { c.String(http.StatusOK, "ok") })
	ts := httptest.NewServer(s.Router())
	t.Cleanup(ts.Close)

	get := func(client string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/x", nil)
		req.Header.Set("X-Forwarded-For", client)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return resp
	}
	for range 3 {
		resp := get("198.51.100.7")
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
	}
	resp := get("198.51.100.7")
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("Retry-After"))
	require.Equal(t, "rate_limited", readProblem(t, resp).Code)
	resp.Body.Close()

	other := get("198.51.100.8")
	other.Body.Close()
	require.Equal(t, 200, other.StatusCode, "each client address has its own budget")

	probe, err := http.Get(ts.URL + "/readyz")
	require.NoError(t, err)
	probe.Body.Close()
	require.Equal(t, 200, probe.StatusCode)
}

func TestEchoedPathIsClippedInBodyAndLog(t *testing.T) {
	var logs bytes.Buffer
	s := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "test", Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	ts := httptest.NewServer(s.Router())
	t.Cleanup(ts.Close)

	// Long enough to need clipping, short enough to stay within the header limit.
	long := "/" + strings.Repeat("p", 20_000)
	resp, err := http.Get(ts.URL + long)
	require.NoError(t, err)
	p := readProblem(t, resp)
	resp.Body.Close()
	require.Equal(t, "not_found", p.Code)
	require.Less(t, len(p.Detail), problem.EchoLimit+64)
	require.Contains(t, p.Detail, "…")

	var line struct {
		Path string `json:"path"`
	}
	require.NoError(t, json.Unmarshal(bytes.TrimSpace(logs.Bytes()), &line))
	require.LessOrEqual(t, len(line.Path), problem.EchoLimit)
	require.True(t, strings.HasPrefix(long, strings.TrimSuffix(line.Path, "…")))
}

// Hops are counted behind the proxies they name; alone they would believe
// whoever reaches the server directly, so the server refuses to start.
func TestTrustedHopsNeedTrustedProxies(t *testing.T) {
	tests := []struct {
		name    string
		proxies []string
		hops    int
		wantErr string
	}{
		{"hops behind a named ingress", []string{"10.0.0.0/8"}, 1, ""},
		{"proxies without hops", []string{"10.0.0.0/8"}, 0, ""},
		{"neither", nil, 0, ""},
		{"hops alone", nil, 1, "HTTP_TRUSTED_PROXIES"},
		{"hops with only blank proxies", []string{" "}, 2, "HTTP_TRUSTED_PROXIES"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := httpserver.DefaultConfig()
			cfg.TrustedProxies, cfg.TrustedHops = tc.proxies, tc.hops
			err := cfg.Validate()
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// Every line of a request carries its request id once: from the context,
// never again from the caller (a JSON object with a key twice is read
// differently by different log pipelines).
func TestAServerErrorsLinesCarryTheRequestIDOnce(t *testing.T) {
	var logs bytes.Buffer
	s := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "test", Logger: logging.New(&logs, "test", slog.LevelInfo)})
	s.Router().GET("/fails", func(c *gin.Context) { _ = c.Error(errors.New("the store is gone")) })
	ts := httptest.NewServer(s.Router())
	t.Cleanup(ts.Close)

	req, err := http.NewRequest(http.MethodGet, ts.URL+"/fails", nil)
	require.NoError(t, err)
	req.Header.Set("X-Request-Id", "req-once")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)

	lines := bytes.Split(bytes.TrimSpace(logs.Bytes()), []byte("\n"))
	require.Len(t, lines, 2, "the failure and the access line")
	for _, line := range lines {
		require.Equal(t, 1, bytes.Count(line, []byte(`"request_id":`)), "%s", line)
		require.Contains(t, string(line), `"request_id":"req-once"`)
	}
	require.Contains(t, string(lines[0]), `"msg":"request failed"`)
}
