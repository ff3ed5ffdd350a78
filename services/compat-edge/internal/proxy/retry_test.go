package proxy_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/compat-edge/internal/proxy"
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

// post sends a proxied-style POST through rt: like a request the edge
// received, its body cannot be rewound (no GetBody).
func post(t *testing.T, rt http.RoundTripper, target, key, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, target, strings.NewReader(body))
	require.NoError(t, err)
	req.GetBody = nil
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	return rt.RoundTrip(req)
}

func TestAReusedConnectionClosedByADrainingReplicaFailsWithoutTheRetry(t *testing.T) {
	replica := newDrainingReplica(t)
	rt := proxy.NewTransport()
	t.Cleanup(rt.CloseIdleConnections)
	target := replica.url.String() + "/api/v2/case-drafts"

	resp, err := post(t, rt, target, "key-1", `{"n":1}`)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	_, err = post(t, rt, target, "key-2", `{"n":2}`)
	require.Error(t, err, "the pooled connection broke under the request: this is the edge's 502 the retry removes")
	require.Equal(t, []string{`key-1 {"n":1}`}, replica.answers())
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

func TestAnyRequestIsResentWhenItsConnectionCouldNotBeDialled(t *testing.T) {
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	}))
	t.Cleanup(owner.Close)
	stopped, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	stale := stopped.Addr().String()
	require.NoError(t, stopped.Close())
	// The pooled transport dials the address a stale DNS answer named, a
	// replica that has stopped: the connection is refused, nothing is sent.
	pooled := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, stale)
	}}
	t.Cleanup(pooled.CloseIdleConnections)

	_, err = post(t, pooled, owner.URL+"/api/x402/dispute-readiness", "", `{"claim":1}`)
	var op *net.OpError
	require.True(t, errors.As(err, &op) && op.Op == "dial", "without the retry: %v", err)

	resp, err := post(t, proxy.NewRetryTransport(pooled), owner.URL+"/api/x402/dispute-readiness", "", `{"claim":1}`)
	require.NoError(t, err)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.Equal(t, `{"claim":1}`, string(got), "a POST without a key is sent again when it was never sent")
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

// A request whose connection could not be dialled is sent again on
// another, whatever it is: nothing was sent. For a streamed body (no
// Content-Length, so the edge does not read it whole) that needs the
// transport to close the body of the failed attempt, as every
// RoundTripper must, which is what lets RetryTransport hand it to the
// second: before, the dial's failure left it open, the replay was
// refused, and the partner got a 502 for a request no owner saw.
func TestAStreamedRequestIsResentWhenItsConnectionCouldNotBeDialled(t *testing.T) {
	got := make(chan string, 2)
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- string(b)
		_, _ = io.WriteString(w, "opened")
	}))
	t.Cleanup(owner.Close)
	inner := proxy.NewTransport()
	var dials atomic.Int32
	dial := inner.Dial
	inner.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
		}
		return dial(ctx, network, addr)
	}
	tr := proxy.NewRetryTransport(inner)
	req, err := http.NewRequest(http.MethodPost, owner.URL+"/api/v2/case-drafts", io.MultiReader(strings.NewReader(`{"claim":"unpaid"}`)))
	require.NoError(t, err)
	require.Nil(t, req.GetBody, "a streamed body")
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, "opened", string(body))
	require.Equal(t, `{"claim":"unpaid"}`, <-got, "the owner got it once, whole")
	require.Empty(t, got)
}
