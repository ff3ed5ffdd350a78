package proxy_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

// drainingReplica is an upstream that behaves as a replica shutting down
// behind a pooled connection: it answers the first request of each
// connection, keeping it alive, and when the next request arrives on it
// closes the connection without reading or answering it.
type drainingReplica struct {
	url      *url.URL
	accepted atomic.Int32
	dropped  atomic.Int32 // requests that arrived on a kept-alive connection and were not read

	mu       sync.Mutex
	answered []string // "Idempotency-Key body" of each request answered
}

func newDrainingReplica(t *testing.T) *drainingReplica {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	d := &drainingReplica{url: &url.URL{Scheme: "http", Host: ln.Addr().String()}}
	var (
		serving sync.WaitGroup
		mu      sync.Mutex
		open    []net.Conn
	)
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range open {
			_ = c.Close()
		}
		mu.Unlock()
		serving.Wait()
	})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			d.accepted.Add(1)
			mu.Lock()
			open = append(open, conn)
			mu.Unlock()
			serving.Go(func() { d.serve(conn) })
		}
	}()
	return d
}

func (d *drainingReplica) serve(conn net.Conn) {
	defer conn.Close()
	br := bufio.NewReader(conn)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return
	}
	d.mu.Lock()
	d.answered = append(d.answered, req.Header.Get("Idempotency-Key")+" "+string(body))
	d.mu.Unlock()
	resp := &http.Response{StatusCode: http.StatusCreated, ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{"Content-Type": {"application/json"}},
		ContentLength: int64(len(body)), Body: io.NopCloser(strings.NewReader(string(body)))}
	if resp.Write(conn) != nil {
		return
	}
	if _, err := br.Peek(1); err == nil { // the next request arrives: close instead of serving it
		d.dropped.Add(1)
	}
}

func (d *drainingReplica) answers() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.answered...)
}

func TestTheEdgeResendsAKeyedRequestTheDrainingReplicaNeverRead(t *testing.T) {
	replica := newDrainingReplica(t)
	ups := allUpstreams(t)
	ups[routing.Filings] = replica.url
	e := newEdge(t, ups)

	for i, key := range []string{"key-1", "key-2"} {
		body := `{"draft":` + string(rune('1'+i)) + `}`
		req, _ := http.NewRequest(http.MethodPost, e.url+"/api/v2/case-drafts", strings.NewReader(body))
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusCreated, resp.StatusCode, "request %d: %s", i+1, got)
		require.Equal(t, body, string(got), "the replica received the whole body")
	}
	// The first request opened a connection; the second broke it as the
	// replica closed it and was sent again, once, on a fresh one.
	require.Equal(t, []string{`key-1 {"draft":1}`, `key-2 {"draft":2}`}, replica.answers())
	require.EqualValues(t, 2, replica.accepted.Load())
	require.EqualValues(t, 1, replica.dropped.Load(), "the second request met the closing connection")
}

func TestTheEdgeDoesNotResendAWrittenPostWithoutIdempotencyKey(t *testing.T) {
	replica := newDrainingReplica(t)
	ups := allUpstreams(t)
	ups[routing.Readiness] = replica.url
	e := newEdge(t, ups)

	for _, want := range []int{http.StatusCreated, http.StatusBadGateway} {
		resp, err := http.Post(e.url+"/api/x402/dispute-readiness", "application/json", strings.NewReader(`{"claim":1}`))
		require.NoError(t, err)
		if want == http.StatusBadGateway {
			require.Equal(t, "upstream_unavailable", problemOf(t, resp).Code)
		}
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode)
	}
	require.Len(t, replica.answers(), 1)
	require.EqualValues(t, 1, replica.dropped.Load())
	require.EqualValues(t, 1, replica.accepted.Load(), "no second connection: the request was written and may have been acted on")
}

func TestTheEdgeDoesNotResendARequestWhoseAnswerHadBegun(t *testing.T) {
	// The owner read a keyed POST, acted on it and began its answer, then
	// the connection broke: the request was provably read, so it is not
	// sent again (the partner's retry, with its key, is the recovery).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	var read atomic.Int32
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				read.Add(1)
				_, _ = io.WriteString(conn, "HTTP/1.1 201 Created\r\nContent-Type: appl")
			}()
		}
	}()
	ups := allUpstreams(t)
	ups[routing.Filings] = &url.URL{Scheme: "http", Host: ln.Addr().String()}
	e := newEdge(t, ups)

	req, _ := http.NewRequest(http.MethodPost, e.url+"/api/v2/case-drafts", strings.NewReader(`{"draft":1}`))
	req.Header.Set("Idempotency-Key", "key-1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadGateway, resp.StatusCode)
	require.EqualValues(t, 1, read.Load(), "the owner read the request once")
}

// A draining replica closes its idle connections first: a POST without an
// Idempotency-Key that would have been written on one is sent on a fresh
// connection instead, because the edge finds the pooled one closed before
// it writes a byte.
func TestAPostIsNeverWrittenOnAConnectionTheOwnerClosedWhileIdle(t *testing.T) {
	var got atomic.Int32
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(owner.Close)
	ownerURL, _ := url.Parse(owner.URL)
	ups := allUpstreams(t)
	ups[routing.Readiness] = ownerURL
	e := newEdge(t, ups)

	post := func() int {
		resp, err := http.Post(e.url+"/api/x402/dispute-readiness", "application/json", strings.NewReader(`{"claim":1}`))
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusCreated, post())
	owner.Config.SetKeepAlivesEnabled(false) // closes the idle connection to the edge, as Shutdown does
	time.Sleep(50 * time.Millisecond)        // the owner's FIN reaches the edge's pooled connection
	require.Equal(t, http.StatusCreated, post(), "sent on a fresh connection, never a 502")
	require.EqualValues(t, 2, got.Load(), "the owner got each POST once")
}
