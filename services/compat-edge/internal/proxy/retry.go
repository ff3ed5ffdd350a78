package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// MaxReplayBytes bounds the streamed body (one without a Content-Length;
// bodies that have one and are this small the edge reads whole first,
// bufferBody) the edge keeps so that it can send a request again. A larger
// body that was already written is not replayed (the caller's own retry
// covers it), and nothing is kept for a request that may not be sent twice.
const MaxReplayBytes = MaxBufferedBody

// RetryTransport sends a request again, once and on a fresh connection,
// when the upstream provably never read it: a draining replica closes its
// pooled connections as the edge writes on them, and docker's DNS (or a
// Service's endpoints, for a moment) still names a stopped replica. It
// retries
//
//   - any request whose connection could not be dialled (nothing was sent);
//   - a request that may be sent twice (GET, HEAD, OPTIONS, TRACE, or any
//     method with an Idempotency-Key, which the owners deduplicate) whose
//     connection was closed or reset before any byte of a response,
//
// as net/http's own transport does for the requests it can rewind, which
// a proxied request is not. A POST without an Idempotency-Key that was
// written is never sent again: the owner may have acted on it.
//
// It wraps whatever transport carries the edge's traffic; the retry uses
// its own connection, never a pooled one, dialled to another address of
// the upstream's name when there is one.
type RetryTransport struct {
	next  http.RoundTripper
	fresh *http.Transport
}

// NewRetryTransport returns next with the retry of requests the upstream
// never read.
func NewRetryTransport(next http.RoundTripper) *RetryTransport {
	return &RetryTransport{
		next: next,
		fresh: &http.Transport{
			Proxy:                 nil,
			DialContext:           (&addressDialer{dialer: net.Dialer{Timeout: 2 * time.Second}}).DialContext,
			DisableKeepAlives:     true, // one request on its own connection, then closed
			ResponseHeaderTimeout: 30 * time.Second,
			ExpectContinueTimeout: time.Second,
			DisableCompression:    true,
		},
	}
}

// RoundTrip sends req through the wrapped transport and, when the upstream
// never read it, once more on a fresh connection.
func (t *RetryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var seen attemptTrace
	first := req.WithContext(httptrace.WithClientTrace(req.Context(), seen.clientTrace()))
	var body *replayableBody
	// A body the edge read whole is sent again from memory (GetBody); a
	// streamed one is kept as the first attempt reads it.
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		keep := 0
		if mayResend(req) {
			keep = MaxReplayBytes
		}
		body = &replayableBody{src: req.Body, limit: keep}
		first.Body = body
	}
	resp, err := t.next.RoundTrip(first)
	if err == nil {
		body.settle()
		return resp, nil
	}
	if req.Context().Err() != nil || !neverRead(req, err, &seen) {
		body.settle()
		return nil, err
	}
	second := req.WithContext(context.WithValue(req.Context(), avoidAddrKey{}, seen.failedAddr(err)))
	if req.GetBody != nil {
		replay, gerr := req.GetBody()
		if gerr != nil {
			return nil, err
		}
		second.Body = replay
	} else if body != nil {
		replay, ok := body.replay()
		if !ok {
			body.settle()
			return nil, err
		}
		second.Body = replay
	}
	resp, retryErr := t.fresh.RoundTrip(second)
	if retryErr != nil {
		return nil, fmt.Errorf("%w (after %v)", retryErr, err)
	}
	return resp, nil
}

// mayResend says whether the request may reach the owner twice: safe
// methods, and requests the owner deduplicates by their Idempotency-Key.
func mayResend(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return req.Header.Get("Idempotency-Key") != ""
}

// neverRead says whether err proves the upstream application never saw
// the request, or saw it at most on a connection that broke before it
// answered anything and the request may be sent twice.
func neverRead(req *http.Request, err error, seen *attemptTrace) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	if !mayResend(req) || seen.gotResponseByte.Load() {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED) ||
		// The transport closed the connection under the request's write
		// because the upstream had closed it.
		errors.Is(err, net.ErrClosed) ||
		// net/http's errServerClosedIdle, unexported: the upstream closed
		// a pooled connection as the request was put on it.
		strings.Contains(err.Error(), "server closed idle connection")
}

// attemptTrace records, from the transport's trace hooks, which address
// the attempt reached and whether any byte of a response came back.
type attemptTrace struct {
	addr            atomic.Pointer[string]
	gotResponseByte atomic.Bool
}

func (a *attemptTrace) clientTrace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			addr := info.Conn.RemoteAddr().String()
			a.addr.Store(&addr)
		},
		GotFirstResponseByte: func() { a.gotResponseByte.Store(true) },
	}
}

// failedAddr is the address the attempt failed on, "" when unknown.
func (a *attemptTrace) failedAddr(err error) string {
	if addr := a.addr.Load(); addr != nil {
		return *addr
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Addr != nil {
		return op.Addr.String()
	}
	return ""
}

type avoidAddrKey struct{}

// addressDialer dials the addresses of a name in the resolver's order,
// except that the address the first attempt failed on comes last.
type addressDialer struct {
	dialer   net.Dialer
	resolver net.Resolver
}

func (d *addressDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	ips, err := d.resolver.LookupHost(ctx, host)
	if err != nil {
		return nil, err
	}
	avoid, _ := ctx.Value(avoidAddrKey{}).(string)
	var firstErr error
	for _, addr := range preferOtherAddresses(ips, port, avoid) {
		conn, err := d.dialer.DialContext(ctx, network, addr)
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// preferOtherAddresses returns host:port for each of ips, in order, with
// avoid (the address that just failed) moved last: it may be the only one.
func preferOtherAddresses(ips []string, port, avoid string) []string {
	addrs := make([]string, 0, len(ips))
	for _, ip := range ips {
		addrs = append(addrs, net.JoinHostPort(ip, port))
	}
	if i := slices.Index(addrs, avoid); i >= 0 {
		addrs = append(slices.Delete(addrs, i, i+1), avoid)
	}
	return addrs
}

// replayableBody passes a request body to the first attempt and keeps what
// that attempt read, up to limit, so that a second attempt can send the
// same bytes followed by the rest. The source stays open until no attempt
// needs it: the first attempt's Close only says it reads no more.
type replayableBody struct {
	src   io.ReadCloser
	limit int

	mu       sync.Mutex
	kept     []byte
	overflow bool // more than limit bytes were read: no replay
	closed   bool // the first attempt closed the body: it reads no more
	settled  bool // no second attempt: a Close goes to the source
	detached bool // a second attempt took the source
}

func (b *replayableBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	gone := b.closed || b.detached
	b.mu.Unlock()
	if gone {
		return 0, http.ErrBodyReadAfterClose
	}
	n, err := b.src.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > 0 && !b.overflow {
		if len(b.kept)+n > b.limit {
			b.overflow, b.kept = true, nil
		} else {
			b.kept = append(b.kept, p[:n]...)
		}
	}
	return n, err
}

func (b *replayableBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.detached {
		return nil
	}
	b.closed = true
	if b.settled {
		return b.src.Close()
	}
	return nil
}

// settle says no second attempt will come: the source is closed now if
// the first attempt is done with it, or when it closes the body.
func (b *replayableBody) settle() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.settled = true
	if b.closed {
		_ = b.src.Close()
	}
}

// replay hands the source to a second attempt, after the bytes the first
// one read. It refuses while the first attempt may still read (it has not
// closed the body) or when it read more than it could keep.
func (b *replayableBody) replay() (io.ReadCloser, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed || b.overflow {
		return nil, false
	}
	b.detached = true
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b.kept), b.src), b.src}, true
}
