package nginxtest_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/nginxtest"
)

// nginx with its default buffers passes a response whose header block fits
// one 4 KiB page, and refuses with 502 one that does not: the failure the
// platform's header bound exists for.
func TestDefaultBuffersRefuseAHeaderBlockOverFourKiB(t *testing.T) {
	var conns sync.Map
	upstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("header"))
		w.Header().Set("X-Padding", strings.Repeat("a", n))
		_, _ = io.WriteString(w, "hello")
	}))
	upstream.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Store(c.RemoteAddr().String(), true)
		}
	}
	upstream.Start()
	t.Cleanup(upstream.Close)
	ngx := nginxtest.Start(t, strings.TrimPrefix(upstream.URL, "http://"))

	get := func(n int) (int, string) {
		resp, err := http.Get(ngx.URL + "/?header=" + strconv.Itoa(n))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for range 3 {
		status, body := get(3000)
		require.Equal(t, http.StatusOK, status, ngx.ErrorLog())
		require.Equal(t, "hello", body)
	}
	status, _ := get(5000)
	require.Equal(t, http.StatusBadGateway, status)
	require.Contains(t, ngx.ErrorLog(), "upstream sent too big header")

	n := 0
	conns.Range(func(any, any) bool { n++; return true })
	require.Less(t, n, 4, "nginx keeps its upstream connections alive")
}

// The upload paths take a body of up to 110 MiB and pass it on as it
// arrives; every other path keeps nginx's 1 MiB, refused before the
// upstream hears of it.
func TestUploadPathsTakeLargeBodiesUnbuffered(t *testing.T) {
	var reached, sofar atomic.Int64
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		n, err := io.Copy(countingWriter{&sofar}, r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, strconv.FormatInt(n, 10))
	}))
	t.Cleanup(upstream.Close)
	ngx := nginxtest.Start(t, strings.TrimPrefix(upstream.URL, "http://"))

	post := func(path string, body io.Reader, size int64, header ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, ngx.URL+path, body)
		require.NoError(t, err)
		req.ContentLength = size
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const big = 20 << 20
	for _, path := range []string{"/api/cases/cs_1/evidence", "/api/disputes/d_1/evidence/file", "/API/Cases/cs_1/Evidence"} {
		sofar.Store(0)
		// The body waits after its first MiB until the upstream has it:
		// an nginx that buffered the request would wait for all of it.
		body := io.MultiReader(strings.NewReader(strings.Repeat("x", 1<<20)), &waitFor{n: &sofar, atLeast: 1 << 20},
			strings.NewReader(strings.Repeat("y", big-1<<20)))
		status, got := post(path, body, big)
		require.Equal(t, http.StatusOK, status, ngx.ErrorLog())
		require.Equal(t, strconv.Itoa(big), got)
	}
	for _, path := range []string{"/api/cases/cs_1/answer", "/api/cases/cs_1/evidence/ev_1", "/api/disputes/d_1/evidence/file/x", "/api/cases/evidence"} {
		before := reached.Load()
		status, _ := post(path, strings.NewReader(strings.Repeat("x", 2<<20)), 2<<20)
		require.Equal(t, http.StatusRequestEntityTooLarge, status, path)
		require.Equal(t, before, reached.Load(), "nginx refused %s without the upstream", path)
	}
	// Refused on its Content-Length: with Expect, the body is never sent.
	status, _ := post("/api/cases/cs_1/evidence", io.LimitReader(zeros{}, 111<<20), 111<<20, "Expect", "100-continue")
	require.Equal(t, http.StatusRequestEntityTooLarge, status, "an upload over 110 MiB")
}

type countingWriter struct{ n *atomic.Int64 }

func (c countingWriter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return len(p), nil }

// waitFor is an empty reader that returns once n reaches atLeast, or fails
// after 10 s.
type waitFor struct {
	n       *atomic.Int64
	atLeast int64
}

func (w *waitFor) Read([]byte) (int, error) {
	deadline := time.Now().Add(10 * time.Second)
	for w.n.Load() < w.atLeast {
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the upstream has %d of the first %d bytes after 10 s: nginx holds the body", w.n.Load(), w.atLeast)
		}
		time.Sleep(time.Millisecond) // polling the upstream's count, with a deadline
	}
	return 0, io.EOF
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// A stream path passes an event stream's events as the upstream writes
// them (an nginx that buffered would hold the first until the stream
// ended), and keeps it while it is quiet past a read timeout the other
// paths have.
func TestAStreamPathPassesEventsAsTheyCome(t *testing.T) {
	next := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-next:
		case <-r.Context().Done():
			return
		}
		time.Sleep(1500 * time.Millisecond) // quiet past the other paths' read timeout
		_, _ = io.WriteString(w, "data: second\n\n")
	}))
	t.Cleanup(upstream.Close)
	ngx := nginxtest.Start(t, strings.TrimPrefix(upstream.URL, "http://"), nginxtest.LocationDirective("proxy_read_timeout 1s;"))

	resp, err := http.Post(ngx.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err, ngx.ErrorLog())
	defer resp.Body.Close()
	first := make([]byte, len("data: first\n\n"))
	_, err = io.ReadFull(resp.Body, first)
	require.NoError(t, err, "the first event arrives while the stream is open")
	require.Equal(t, "data: first\n\n", string(first))
	close(next)
	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "data: second\n\n", string(rest), "a quiet stream is kept")
}
