package httpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
)

type order struct {
	Item     string `json:"item"`
	Quantity int    `json:"quantity"`
}

var errOutOfStock = errors.New("out of stock")

var outOfStock = problem.Code{Name: "out_of_stock", Status: http.StatusConflict, Title: "Out of stock"}

func newServer(t *testing.T, checks ...httpserver.Check) (*httpserver.Server, *httptest.Server) {
	t.Helper()
	cfg := httpserver.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.MaxBodyBytes = 256
	s := httpserver.New(cfg, httpserver.Deps{
		Service: "test",
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Mapper: func(err error) *problem.Error {
			if errors.Is(err, errOutOfStock) {
				return problem.New(outOfStock, "That item is out of stock.")
			}
			return nil
		},
		Checks: checks,
	})
	r := s.Router()
	r.POST("/orders", func(c *gin.Context) {
		var o order
		if err := httpserver.DecodeJSON(c, &o); err != nil {
			_ = c.Error(err)
			return
		}
		if o.Item == "sold-out" {
			_ = c.Error(errOutOfStock)
			return
		}
		c.JSON(http.StatusCreated, o)
	})
	r.GET("/panic", func(c *gin.Context) { panic("boom: secret detail") })
	r.GET("/fail", func(c *gin.Context) { _ = c.Error(errors.New("db password wrong")) })
	ts := httptest.NewServer(r)
	t.Cleanup(ts.Close)
	return s, ts
}

func readProblem(t *testing.T, resp *http.Response) problem.Body {
	t.Helper()
	require.Equal(t, problem.ContentType, resp.Header.Get("Content-Type"))
	var p problem.Body
	dec := json.NewDecoder(resp.Body)
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&p))
	require.Equal(t, resp.StatusCode, p.Status)
	require.Equal(t, problem.TypeBase+p.Code, p.Type)
	require.NotEmpty(t, p.Title)
	require.NotEmpty(t, p.Detail)
	require.Equal(t, resp.Header.Get("X-Request-Id"), p.RequestID)
	return p
}

func TestStrictDecoding(t *testing.T) {
	_, ts := newServer(t)
	tests := []struct {
		name        string
		contentType string
		body        string
		status      int
		code        string
	}{
		{"valid", "application/json", `{"item":"pen","quantity":2}`, 201, ""},
		{"unknown field", "application/json", `{"item":"pen","quantity":2,"colour":"red"}`, 400, "unknown_field"},
		{"wrong type", "application/json", `{"item":"pen","quantity":"two"}`, 400, "invalid_field_type"},
		{"not an object", "application/json", `[1,2]`, 400, "invalid_field_type"},
		{"trailing garbage", "application/json", `{"item":"pen","quantity":2} x`, 400, "trailing_data"},
		{"second value", "application/json", `{"item":"pen"}{"item":"ink"}`, 400, "trailing_data"},
		{"duplicate member", "application/json", `{"item":"pen","quantity":2,"quantity":200}`, 400, "duplicate_member"},
		{"malformed", "application/json", `{"item":`, 400, "malformed_json"},
		{"syntax error", "application/json", `{"item" "pen"}`, 400, "malformed_json"},
		{"empty", "application/json", ``, 400, "empty_body"},
		{"oversize", "application/json", `{"item":"` + strings.Repeat("a", 300) + `"}`, 413, "body_too_large"},
		{"not json", "text/plain", `{"item":"pen"}`, 415, "unsupported_media_type"},
		{"domain error mapped once", "application/json", `{"item":"sold-out","quantity":1}`, 409, "out_of_stock"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(ts.URL+"/orders", tc.contentType, strings.NewReader(tc.body))
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
			if tc.code != "" {
				require.Equal(t, tc.code, readProblem(t, resp).Code)
			}
		})
	}
}

func TestOversizeBodyWithoutContentLength(t *testing.T) {
	_, ts := newServer(t)
	// A chunked body has no Content-Length; the limit must still hold while reading.
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(`{"item":"` + strings.Repeat("a", 1000) + `"}`))
		_ = pw.Close()
	}()
	req, err := http.NewRequest(http.MethodPost, ts.URL+"/orders", pr)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	require.Equal(t, "body_too_large", readProblem(t, resp).Code)
}

func TestServerErrorsAreGeneric(t *testing.T) {
	_, ts := newServer(t)
	for _, path := range []string{"/panic", "/fail"} {
		resp, err := http.Get(ts.URL + path)
		require.NoError(t, err)
		p := readProblem(t, resp)
		resp.Body.Close()
		require.Equal(t, 500, resp.StatusCode)
		require.Equal(t, "internal", p.Code)
		require.NotContains(t, p.Detail, "secret")
		require.NotContains(t, p.Detail, "password")
	}
}

func TestUnknownRouteAndMethod(t *testing.T) {
	_, ts := newServer(t)
	resp, err := http.Get(ts.URL + "/nowhere")
	require.NoError(t, err)
	require.Equal(t, 404, resp.StatusCode)
	require.Equal(t, "not_found", readProblem(t, resp).Code)
	resp.Body.Close()

	resp, err = http.Get(ts.URL + "/orders")
	require.NoError(t, err)
	require.Equal(t, 405, resp.StatusCode)
	require.Equal(t, "method_not_allowed", readProblem(t, resp).Code)
	resp.Body.Close()
}

func TestRequestID(t *testing.T) {
	_, ts := newServer(t)
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/nowhere", nil)
	req.Header.Set("X-Request-Id", "partner-trace.42")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, "partner-trace.42", resp.Header.Get("X-Request-Id"))
	require.Equal(t, "partner-trace.42", readProblem(t, resp).RequestID)
	resp.Body.Close()

	req.Header.Set("X-Request-Id", "bad id\twith spaces")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Regexp(t, `^req_[0-9a-f]{32}$`, resp.Header.Get("X-Request-Id"))
	resp.Body.Close()
}

// A dependency only background work needs (Kafka) is advisory: its outage
// is reported, and the pod stays ready while the one the API needs
// (Redis) answers.
func TestAnAdvisoryDependencyNeverTakesThePodOutOfService(t *testing.T) {
	var redisUp, kafkaUp atomic.Bool
	redisUp.Store(true)
	probe := func(up *atomic.Bool) func(context.Context) error {
		return func(context.Context) error {
			if up.Load() {
				return nil
			}
			return errors.New("connection refused")
		}
	}
	_, ts := newServer(t, httpserver.Check{Name: "redis", Probe: probe(&redisUp)},
		httpserver.Check{Name: "kafka", Probe: probe(&kafkaUp), Advisory: true})
	read := func() (int, map[string]any) {
		resp, err := http.Get(ts.URL + "/readyz")
		require.NoError(t, err)
		defer resp.Body.Close()
		var body map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return resp.StatusCode, body
	}
	status, body := read()
	require.Equal(t, 200, status)
	require.Equal(t, "degraded", body["status"])
	require.Equal(t, map[string]any{"redis": "ok", "kafka": "unavailable"}, body["checks"])

	kafkaUp.Store(true)
	status, body = read()
	require.Equal(t, 200, status)
	require.Equal(t, "ready", body["status"])

	redisUp.Store(false)
	status, body = read()
	require.Equal(t, 503, status)
	require.Equal(t, "unavailable", body["status"])
}

// A dependency that is away may not answer at all (its name no longer
// resolves, its packets are dropped): an advisory one is given up on
// quickly, so /readyz still answers well inside the kubelet's probe
// timeout (3 s), ready, while the gating check answers.
func TestAnAdvisoryDependencyThatHangsDoesNotMakeReadinessLate(t *testing.T) {
	_, ts := newServer(t, httpserver.Check{Name: "redis", Probe: func(context.Context) error { return nil }},
		httpserver.Check{Name: "kafka", Advisory: true, Probe: func(ctx context.Context) error {
			<-ctx.Done() // a dial that never completes
			return ctx.Err()
		}})
	begun := time.Now()
	resp, err := http.Get(ts.URL + "/readyz")
	require.NoError(t, err)
	defer resp.Body.Close()
	took := time.Since(begun)
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "degraded", body["status"])
	require.Equal(t, map[string]any{"redis": "ok", "kafka": "unavailable"}, body["checks"])
	require.Less(t, took, time.Second, "an advisory check held /readyz for %s", took)
}

func TestReadiness(t *testing.T) {
	var healthy atomic.Bool
	healthy.Store(true)
	_, ts := newServer(t, httpserver.Check{Name: "redis", Probe: func(context.Context) error {
		if healthy.Load() {
			return nil
		}
		return errors.New("connection refused")
	}})
	resp, err := http.Get(ts.URL + "/readyz")
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	resp.Body.Close()

	healthy.Store(false)
	resp, err = http.Get(ts.URL + "/readyz")
	require.NoError(t, err)
	require.Equal(t, 503, resp.StatusCode)
	resp.Body.Close()

	resp, err = http.Get(ts.URL + "/livez")
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "liveness does not depend on Redis")
	resp.Body.Close()
}

func TestGracefulShutdownDrainsInFlightRequests(t *testing.T) {
	cfg := httpserver.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	s := httpserver.New(cfg, httpserver.Deps{Service: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	entered, release := make(chan struct{}), make(chan struct{})
	s.Router().GET("/slow", func(c *gin.Context) {
		close(entered)
		<-release
		c.String(http.StatusOK, "finished")
	})
	addr, err := s.Listen()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- s.Run(ctx) }()

	type result struct {
		body string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := http.Get("http://" + addr.String() + "/slow")
		if err != nil {
			got <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- result{string(b), err}
	}()
	<-entered
	cancel() // SIGTERM arrives while the request is in flight

	// While draining, the server reports not ready and takes no new connections.
	require.Eventually(t, func() bool {
		_, err := http.Get("http://" + addr.String() + "/readyz")
		return err != nil
	}, 5*time.Second, 10*time.Millisecond)
	close(release)
	r := <-got
	require.NoError(t, r.err)
	require.Equal(t, "finished", r.body)
	require.NoError(t, <-runErr)
}

// A route with its own limit under the server's names its own limit, for a
// body over either: the caller learns the bound that applies to the route.
func TestRouteBodyLimitIsTheOneNamed(t *testing.T) {
	cfg := httpserver.DefaultConfig()
	cfg.MaxBodyBytes = 1 << 20
	s := httpserver.New(cfg, httpserver.Deps{Service: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	echo := func(c *gin.Context) {
		b, err := httpserver.ReadBody(c)
		if err != nil {
			_ = c.Error(err)
			return
		}
		c.Data(http.StatusOK, "application/json", b)
	}
	s.Router().POST("/small", httpserver.BodyLimit(16<<10), echo)
	s.Router().POST("/default", echo)
	ts := httptest.NewServer(s.Router())
	t.Cleanup(ts.Close)

	tests := []struct {
		name   string
		path   string
		size   int
		chunk  bool // no Content-Length: the limit holds while reading
		status int
		limit  string
	}{
		{"route limit, body over the server's", "/small", 2 << 20, false, 413, "16384"},
		{"route limit, body between the two", "/small", 20 << 10, false, 413, "16384"},
		{"route limit, chunked body", "/small", 17 << 10, true, 413, "16384"},
		{"route limit, body under it", "/small", 1 << 10, false, 200, ""},
		{"server limit", "/default", 2 << 20, false, 413, "1048576"},
		{"server limit, chunked body", "/default", 1<<20 + 1<<10, true, 413, "1048576"},
		{"server limit, body under it", "/default", 20 << 10, false, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Repeat("a", tc.size)
			var r io.Reader = strings.NewReader(body)
			if tc.chunk {
				r = io.MultiReader(r) // hides the length from net/http
			}
			req, err := http.NewRequest(http.MethodPost, ts.URL+tc.path, r)
			require.NoError(t, err)
			// The server answers an oversize Content-Length without reading
			// the body; the client then never sends it.
			req.Header.Set("Expect", "100-continue")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
			if tc.status == 413 {
				p := readProblem(t, resp)
				require.Equal(t, "body_too_large", p.Code)
				require.Contains(t, p.Detail, " "+tc.limit+" bytes")
			}
		})
	}
}

// A streamed route takes a body over the server's default, and only that
// route: its limit and its read deadline are its own.
func TestAStreamedRouteTakesALargeSlowBody(t *testing.T) {
	cfg := httpserver.DefaultConfig()
	cfg.MaxBodyBytes = 1 << 20
	cfg.ReadTimeout = 300 * time.Millisecond
	s := httpserver.New(cfg, httpserver.Deps{Service: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	count := func(c *gin.Context) {
		n, err := io.Copy(io.Discard, c.Request.Body)
		if err != nil {
			_ = c.Error(err)
			return
		}
		c.JSON(http.StatusOK, gin.H{"bytes": n})
	}
	s.Router().POST("/upload", httpserver.StreamedBody(8<<20, time.Minute), count)
	s.Router().POST("/default", func(c *gin.Context) {
		if _, err := httpserver.ReadBody(c); err != nil {
			_ = c.Error(err)
			return
		}
		c.Status(http.StatusOK)
	})
	addr, err := s.Listen()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	base := "http://" + addr.String()

	// 4 MiB, sent in pieces over about a second: past the server's read
	// timeout and its body limit, within the route's.
	slow := func(size int) io.Reader {
		pr, pw := io.Pipe()
		go func() {
			piece := strings.Repeat("a", size/8)
			for range 8 {
				time.Sleep(120 * time.Millisecond)
				if _, err := pw.Write([]byte(piece)); err != nil {
					return
				}
			}
			pw.Close()
		}()
		return pr
	}
	resp, err := http.Post(base+"/upload", "application/octet-stream", slow(4<<20))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.JSONEq(t, `{"bytes":4194304}`, string(body))

	resp, err = http.Post(base+"/upload", "application/octet-stream", strings.NewReader(strings.Repeat("a", 9<<20)))
	require.NoError(t, err)
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	require.Contains(t, readProblem(t, resp).Detail, " 8388608 bytes")
	resp.Body.Close()

	resp, err = http.Post(base+"/default", "application/octet-stream", strings.NewReader(strings.Repeat("a", 2<<20)))
	require.NoError(t, err)
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "every other route keeps the server's limit")
	resp.Body.Close()
}
