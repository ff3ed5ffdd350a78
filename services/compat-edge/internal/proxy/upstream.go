package proxy

import (
	"context"
	"errors"
	"net"
	"net/url"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

// Upstream timeouts: a dial, an exchange with an owner (writing the
// request and reading the whole answer, which the partner's side bounds
// the same way; a transfer's is the transfer timeout, Config.timeout), an
// idle pooled connection (closed before the owners' own idle timeout,
// 120 s, can close it under the edge).
const (
	dialTimeout      = 2 * time.Second
	upstreamTimeout  = 30 * time.Second
	upstreamIdleTime = 90 * time.Second
)

// upstream is one owner as the edge calls it: HTTP/1.1 keep-alive
// connections pooled by fasthttp's HostClient, whose exchanges reuse
// their buffers instead of allocating per request, and a second client
// for the one resend the retry rules allow.
//
// The retry rules (do): a request is sent again, once and on a fresh
// connection, when the owner provably never acted on it:
//
//   - any request whose connection could not be dialled (nothing was
//     sent: docker's DNS, or a Service's endpoints for a moment, still
//     names a stopped replica);
//   - any request with its body in memory whose pooled connection the
//     owner had closed while it was idle (ownerConn finds it closed before
//     a byte is written: a draining replica closes its idle connections
//     first);
//   - a request that may be sent twice (GET, HEAD, OPTIONS, TRACE, or any
//     method with an Idempotency-Key, which the owners deduplicate) whose
//     connection was closed or reset before it answered (a draining
//     replica closes its pooled connections as the edge writes on them),
//     when its body is in memory;
//
// and never otherwise: a POST without an Idempotency-Key that was written
// may have been acted on, and a streamed body (an upload) that was read
// cannot be sent again. The resend dials the owner's addresses with the
// one that just failed last, and closes its connection after the answer.
type upstream struct {
	name   routing.Owner
	pooled *fasthttp.HostClient
	fresh  *fasthttp.HostClient
	dialer *addressDialer
}

func newUpstream(name routing.Owner, target *url.URL, maxConns int) *upstream {
	addr := target.Host
	if target.Port() == "" {
		port := "80"
		if target.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(target.Hostname(), port)
	}
	d := &addressDialer{}
	client := func(dial fasthttp.DialFunc) *fasthttp.HostClient {
		return &fasthttp.HostClient{
			Addr:                addr,
			IsTLS:               target.Scheme == "https",
			Dial:                dial,
			MaxConns:            maxConns,
			MaxConnWaitTimeout:  dialTimeout,
			MaxIdleConnDuration: upstreamIdleTime,
			// Each request's own deadline bounds its exchange
			// (Request.SetTimeout in forward).
			// The retry is upstream.do's, on its own rules: fasthttp's
			// would resend what the owner may have acted on.
			MaxIdemponentCallAttempts: 1,
			RetryIfErr:                func(*fasthttp.Request, int, error) (bool, bool) { return false, false },
			// Answers stream to the partner as they come: an exhibit
			// download is never held whole.
			StreamResponseBody: true,
			// The path is the edge's normal form already; the owner gets
			// it byte for byte.
			DisablePathNormalizing:   true,
			NoDefaultUserAgentHeader: true,
			// An answer's header and a body of a few KiB (a 402
			// challenge is 9 KiB) are read in one system call, and the
			// request written in one; the read buffer also bounds the
			// owner's header block, which fasthttp's 4 KiB default would
			// refuse at a large challenge.
			ReadBufferSize:  ExchangeBufferSize,
			WriteBufferSize: ExchangeBufferSize,
		}
	}
	return &upstream{
		name:   name,
		pooled: client(d.dialPooled),
		fresh:  client(d.dialFresh),
		dialer: d,
	}
}

// do sends req to the owner and reads the head of its answer into resp,
// whose body then streams (resp.BodyStream). resendable says the request's
// body, if any, is in memory.
func (u *upstream) do(req *fasthttp.Request, resp *fasthttp.Response, resendable bool) error {
	err := u.pooled.Do(req, resp)
	if err == nil || !neverActedOn(req, err, resendable) {
		return err
	}
	if addr := resp.RemoteAddr(); addr != nil {
		u.dialer.failed(addr.String())
	}
	req.SetConnectionClose()
	if retryErr := u.fresh.Do(req, resp); retryErr != nil {
		return &retryError{first: err, last: retryErr}
	}
	return nil
}

// retryError is a resend that failed too; it reads as the last failure.
type retryError struct{ first, last error }

func (e *retryError) Error() string { return e.last.Error() + " (after " + e.first.Error() + ")" }
func (e *retryError) Unwrap() error { return e.last }

// neverActedOn says whether err proves the owner never acted on req, so
// that it may be sent again (the rules on upstream).
func neverActedOn(req *fasthttp.Request, err error, resendable bool) bool {
	var dial *dialError
	if errors.As(err, &dial) {
		return true // nothing was sent, not even a streamed body's first byte
	}
	if errors.Is(err, errClosedByOwner) {
		return resendable // nothing was written; a streamed body may have been read
	}
	if !resendable || !mayResend(req) {
		return false
	}
	// fasthttp reports a connection that ended before the first byte of
	// an answer (closed or reset) as ErrConnectionClosed; one that ended
	// within the answer's head wraps the read's error instead, and is not
	// resent: the owner read the request.
	if errors.Is(err, fasthttp.ErrConnectionClosed) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "write" // the owner closed it as the request was written
}

// mayResend says whether the request may reach the owner twice: safe
// methods, and requests the owner deduplicates by their Idempotency-Key.
func mayResend(req *fasthttp.Request) bool {
	switch string(req.Header.Method()) {
	case fasthttp.MethodGet, fasthttp.MethodHead, fasthttp.MethodOptions, fasthttp.MethodTrace:
		return true
	}
	return len(req.Header.Peek("Idempotency-Key")) > 0
}

// dialError is a connection that could not be opened: nothing was sent.
type dialError struct{ err error }

func (e *dialError) Error() string { return "dial: " + e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// Timeout reports a dial that timed out as the timeout it is.
func (e *dialError) Timeout() bool {
	var ne net.Error
	return errors.As(e.err, &ne) && ne.Timeout()
}

// addressDialer dials an owner's name: the pooled client in the
// resolver's order, the resend with the address that failed last moved to
// the end (it may be the only one).
type addressDialer struct {
	dialer     net.Dialer
	resolver   net.Resolver
	lastFailed atomic.Pointer[string]
}

func (d *addressDialer) failed(addr string) { d.lastFailed.Store(&addr) }

func (d *addressDialer) dialPooled(addr string) (net.Conn, error) { return d.dial(addr, "") }

func (d *addressDialer) dialFresh(addr string) (net.Conn, error) {
	avoid := ""
	if p := d.lastFailed.Load(); p != nil {
		avoid = *p
	}
	return d.dial(addr, avoid)
}

func (d *addressDialer) dial(address, avoid string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	defer cancel()
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, &dialError{err}
	}
	ips, err := d.resolver.LookupHost(ctx, host)
	if err != nil {
		return nil, &dialError{err}
	}
	var firstErr error
	for _, addr := range preferOtherAddresses(ips, port, avoid) {
		conn, err := d.dialer.DialContext(ctx, "tcp", addr)
		if err == nil {
			return &ownerConn{Conn: conn}, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if failed, ok := firstErr.(*net.OpError); ok && failed.Addr != nil {
		d.failed(failed.Addr.String())
	}
	return nil, &dialError{firstErr}
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

// errClosedByOwner is a pooled connection the owner closed while it was
// idle, found before the request's first byte was written on it.
var errClosedByOwner = errors.New("the owner had closed the pooled connection")

// ownerConn is a connection to an owner. The first write of each exchange
// after the first looks at the socket without waiting, and refuses to
// write when the owner has closed it (or sent on it unasked, which leaves
// it unusable too): one system call per reused connection, so that a
// draining replica's closed connections never take a request they would
// lose.
type ownerConn struct {
	net.Conn
	readSinceWrite bool
}

func (c *ownerConn) Read(p []byte) (int, error) {
	c.readSinceWrite = true
	return c.Conn.Read(p)
}

func (c *ownerConn) Write(p []byte) (int, error) {
	if c.readSinceWrite {
		c.readSinceWrite = false
		if closedByPeer(c.Conn) {
			return 0, errClosedByOwner
		}
	}
	return c.Conn.Write(p)
}

// closedByPeer reports whether the socket has EOF or unread data waiting:
// a peek that must not wait finds nothing on a healthy idle connection.
func closedByPeer(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	closed := false
	err = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = n > 0 || (n == 0 && err == nil) || (err != nil && !errors.Is(err, syscall.EAGAIN))
		return true // never wait for readiness
	})
	return closed || err != nil
}
