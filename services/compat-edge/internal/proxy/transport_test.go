package proxy_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/compat-edge/internal/proxy"
)

// countingOwner is an owner that counts the connections the edge opens to it.
type countingOwner struct {
	*httptest.Server
	conns atomic.Int64
}

func newCountingOwner(t *testing.T, h http.HandlerFunc) *countingOwner {
	t.Helper()
	o := &countingOwner{}
	o.Server = httptest.NewUnstartedServer(h)
	o.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			o.conns.Add(1)
		}
	}
	o.Start()
	t.Cleanup(o.Close)
	return o
}

func exchange(t *testing.T, tr http.RoundTripper, method, url string, body []byte) (int, string) {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	require.NoError(t, err)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return resp.StatusCode, string(got)
}

func echoPath(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	_, _ = io.WriteString(w, r.Method+" "+r.URL.Path)
}

func TestTransportReusesOneConnectionForSequentialRequests(t *testing.T) {
	owner := newCountingOwner(t, echoPath)
	tr := proxy.NewTransport()
	for i := range 20 {
		status, body := exchange(t, tr, http.MethodGet, owner.URL+"/api/cases/cs_1", nil)
		require.Equal(t, http.StatusOK, status, "request %d", i)
		require.Equal(t, "GET /api/cases/cs_1", body)
	}
	status, body := exchange(t, tr, http.MethodPost, owner.URL+"/api/cases", []byte(`{"a":1}`))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "POST /api/cases", body)
	require.EqualValues(t, 1, owner.conns.Load(), "every exchange reused the first connection")
}

func TestTransportOpensNoMoreConnectionsThanRequestsInFlight(t *testing.T) {
	owner := newCountingOwner(t, echoPath)
	tr := proxy.NewTransport()
	const callers = 8
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range 25 {
				status, _ := exchange(t, tr, http.MethodGet, owner.URL+"/api/x", nil)
				require.Equal(t, http.StatusOK, status)
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, owner.conns.Load(), int64(callers))
}

func TestTransportResendsAGetWhenTheOwnerClosedItsIdleConnection(t *testing.T) {
	owner := newCountingOwner(t, echoPath)
	tr := proxy.NewTransport()
	status, _ := exchange(t, tr, http.MethodGet, owner.URL+"/api/a", nil)
	require.Equal(t, http.StatusOK, status)
	owner.CloseClientConnections() // as an owner does when it restarts

	status, body := exchange(t, tr, http.MethodGet, owner.URL+"/api/b", nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "GET /api/b", body)
	require.EqualValues(t, 2, owner.conns.Load())
}

func TestTransportSendsABodyOnceAndOnlyOnALiveConnection(t *testing.T) {
	var posts atomic.Int64
	owner := newCountingOwner(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		echoPath(w, r)
	})
	tr := proxy.NewTransport()
	pooled := keepDialed(tr)
	status, _ := exchange(t, tr, http.MethodGet, owner.URL+"/api/a", nil)
	require.Equal(t, http.StatusOK, status)
	owner.CloseClientConnections()
	require.Eventually(t, func() bool { return peerClosed(t, pooled()) }, 5*time.Second, time.Millisecond,
		"the owner's close reaches the edge's idle connection")

	status, body := exchange(t, tr, http.MethodPost, owner.URL+"/api/filings", []byte(`{"amount":1}`))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "POST /api/filings", body)
	require.EqualValues(t, 1, posts.Load())
}

func TestTransportPassesOnAnOwnersEarlyRefusalOfALargeBody(t *testing.T) {
	owner := newCountingOwner(t, func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > 1<<10 {
			w.WriteHeader(http.StatusRequestEntityTooLarge) // refused unread, as libs/httpserver does
			return
		}
		echoPath(w, r)
	})
	tr := proxy.NewTransport()
	status, _ := exchange(t, tr, http.MethodPost, owner.URL+"/api/evidence", bytes.Repeat([]byte("a"), 8<<20))
	require.Equal(t, http.StatusRequestEntityTooLarge, status)
	status, body := exchange(t, tr, http.MethodPost, owner.URL+"/api/evidence", []byte("small"))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "POST /api/evidence", body)
}

func TestTransportClosesAConnectionWhoseBodyWasNotReadToTheEnd(t *testing.T) {
	owner := newCountingOwner(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			_, _ = io.WriteString(w, strings.Repeat("x", 1<<20))
			return
		}
		echoPath(w, r)
	})
	tr := proxy.NewTransport()
	req, _ := http.NewRequest(http.MethodGet, owner.URL+"/big", nil)
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	_, err = resp.Body.Read(make([]byte, 10))
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close()) // the rest is never read: that connection cannot carry another exchange

	status, body := exchange(t, tr, http.MethodGet, owner.URL+"/small", nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "GET /small", body)
	require.EqualValues(t, 2, owner.conns.Load())
}

func TestTransportBoundsTheWaitForResponseHeaders(t *testing.T) {
	release := make(chan struct{})
	owner := newCountingOwner(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
	})
	defer close(release)
	tr := proxy.NewTransport()
	tr.ResponseHeaderTimeout = 100 * time.Millisecond
	req, _ := http.NewRequest(http.MethodGet, owner.URL+"/slow", nil)
	_, err := tr.RoundTrip(req)
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "a timeout, got %v", err)
}

func TestTransportStopsWhenTheCallerGoesAway(t *testing.T) {
	release, arrived := make(chan struct{}), make(chan struct{})
	owner := newCountingOwner(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-release
	})
	defer close(release)
	tr := proxy.NewTransport()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, owner.URL+"/slow", nil)
	go func() {
		<-arrived // the owner holds the request: the transport waits for its answer
		cancel()
	}()
	_, err := tr.RoundTrip(req)
	require.ErrorIs(t, err, context.Canceled)
}

// keepDialed makes tr remember the last connection it dialed, and returns
// what reads it.
func keepDialed(tr *proxy.Transport) func() net.Conn {
	var mu sync.Mutex
	var last net.Conn
	dial := tr.Dial
	tr.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		mu.Lock()
		defer mu.Unlock()
		last = c
		return c, err
	}
	return func() net.Conn {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

// peerClosed reports whether the peer's close has reached conn: a peek that
// does not wait finds the end of the stream. It consumes nothing, so the
// transport later sees the same.
func peerClosed(t *testing.T, conn net.Conn) bool {
	t.Helper()
	sc, ok := conn.(syscall.Conn)
	require.True(t, ok, "a TCP connection")
	raw, err := sc.SyscallConn()
	require.NoError(t, err)
	closed := false
	require.NoError(t, raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = n == 0 && err == nil
		return true // never wait for readiness
	}))
	return closed
}

// writeCounter is a connection that counts the writes made on it.
type writeCounter struct {
	net.Conn
	writes *atomic.Int64
}

func (c writeCounter) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// A body the edge read whole (GetBody set, as bufferBody leaves it) goes
// out with its headers in one write: one system call, and an owner that
// reads the request in one piece. A streamed body gets the headers flushed
// alone first, as net/http sends them when it cannot see a body's end.
func TestTransportWritesARequestReadWholeInOneWrite(t *testing.T) {
	owner := newCountingOwner(t, echoPath)
	tr := proxy.NewTransport()
	var writes atomic.Int64
	dial := tr.Dial
	tr.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return writeCounter{Conn: c, writes: &writes}, nil
	}
	body := []byte(`{"claim":"the invoice was never paid"}`)
	send := func(req *http.Request) {
		t.Helper()
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}

	whole, err := http.NewRequest(http.MethodPost, owner.URL+"/api/x402/dispute-readiness", bytes.NewReader(body))
	require.NoError(t, err)
	require.NotNil(t, whole.GetBody)
	send(whole)
	require.EqualValues(t, 1, writes.Load(), "headers and body in one write")

	writes.Store(0)
	streamed, err := http.NewRequest(http.MethodPost, owner.URL+"/api/x402/dispute-readiness", io.MultiReader(bytes.NewReader(body)))
	require.NoError(t, err)
	streamed.ContentLength = int64(len(body))
	send(streamed)
	require.EqualValues(t, 2, writes.Load(), "a streamed body: the headers first, then the body")
}
