package proxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"syscall"
	"time"
)

// Transport is the edge's upstream client: plain HTTP/1.1 keep-alive
// connections to the owners, pooled by the edge, each carrying one exchange
// at a time in the goroutine of the request that holds it. The standard
// http.Transport hands every exchange to two goroutines per connection (one
// writes the request, one reads the response) and back over channels; on
// the edge's small requests those hand-offs cost as much as the proxying.
// Writing and parsing stay net/http's own (Request.Write,
// http.ReadResponse).
//
// Upgrades (101 Switching Protocols) and anything but http:// go through
// Fallback, the standard transport.
type Transport struct {
	// Dial opens a connection to an owner.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxIdlePerHost bounds the warm connections kept per owner; the pool
	// is sized for the in-flight limit so that a burst does not dial and
	// then close its connections.
	MaxIdlePerHost int
	// IdleTimeout closes a connection unused this long, before the owner's
	// own idle timeout (120 s) can close it under the edge.
	IdleTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for an owner's response
	// headers once the request is written.
	ResponseHeaderTimeout time.Duration
	// Fallback serves upgrades and non-http URLs.
	Fallback http.RoundTripper

	mu   sync.Mutex
	idle map[string][]*upstreamConn // per host:port, most recently used last
}

// upstreamConn is one pooled connection with its buffers.
type upstreamConn struct {
	addr      string // the pool's key: the URL's host:port
	conn      net.Conn
	br        *bufio.Reader
	bw        *bufio.Writer
	idleSince time.Time
}

// NewTransport is the edge's upstream transport. Partners send many small
// requests: keep plenty of warm connections per service, bound every wait,
// and pass bodies through untouched (no transparent gzip: the owner's
// encoding reaches the client as is).
func NewTransport() *Transport {
	dialer := &net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}
	return &Transport{
		Dial:                  dialer.DialContext,
		MaxIdlePerHost:        1024,
		IdleTimeout:           90 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		Fallback: &http.Transport{
			DialContext:           dialer.DialContext,
			MaxIdleConnsPerHost:   16,
			IdleConnTimeout:       90 * time.Second,
			ResponseHeaderTimeout: 30 * time.Second,
			DisableCompression:    true,
		},
	}
}

// aLongTimeAgo is a deadline that makes every pending read or write on a
// connection return at once.
var aLongTimeAgo = time.Unix(1, 0)

// RoundTrip sends req on a pooled connection, or a new one, and returns the
// owner's response; the connection returns to the pool when the body has
// been read to its end. A request that failed on a reused connection before
// any answer (the owner closed it while idle) is sent once more on a new
// connection when it can be replayed: no body or one read whole, and a method that is safe to
// repeat or an Idempotency-Key, as net/http decides.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" || req.Header.Get("Upgrade") != "" {
		return t.Fallback.RoundTrip(req)
	}
	// The hooks of a caller's httptrace.ClientTrace that tell what reached
	// the owner (RetryTransport's): the connection taken, and the first
	// byte of an answer.
	trace := httptrace.ContextClientTrace(req.Context())
	for attempt := 0; ; attempt++ {
		uc, reused, err := t.conn(req.Context(), req.URL.Host, req)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		if trace != nil && trace.GotConn != nil {
			trace.GotConn(httptrace.GotConnInfo{Conn: uc.conn, Reused: reused})
		}
		resp, err := t.exchange(req, uc, trace)
		if err == nil {
			return resp, nil
		}
		if reused && attempt == 0 && replayable(req) && nothingAnswered(err) {
			continue
		}
		closeBody(req)
		return nil, err
	}
}

// closeBody closes the request's body after a failed attempt, as every
// RoundTripper must (Request.Write closes it once it was called; a dial
// that failed never calls it). RetryTransport replays a streamed body only
// once the first attempt has closed it: left open, a dial's failure became
// a 502 for a request no owner saw.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// exchange writes req and reads the response on uc. It owns uc: on error
// the connection is closed; on success the response body returns it.
func (t *Transport) exchange(req *http.Request, uc *upstreamConn, trace *httptrace.ClientTrace) (*http.Response, error) {
	ctx := req.Context()
	// A caller that goes away (or a deadline) interrupts the I/O.
	stop := context.AfterFunc(ctx, func() { _ = uc.conn.SetDeadline(aLongTimeAgo) })
	fail := func(err error) (*http.Response, error) {
		stop()
		_ = uc.conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	out, src := req, (*sourceBody)(nil)
	if req.Body != nil && req.Body != http.NoBody {
		shallow := *req // Write reads Body; a shallow copy keeps req the caller's
		if req.GetBody != nil {
			// A body the edge read whole (bufferBody): from memory,
			// Request.Write sends it with the headers in one write (a body
			// it cannot see the end of gets the headers flushed alone
			// first), and it cannot fail.
			body, err := req.GetBody()
			if err != nil {
				return fail(err)
			}
			shallow.Body = body
		} else {
			src = &sourceBody{ReadCloser: req.Body}
			shallow.Body = src
		}
		out = &shallow
	}
	writeErr := out.Write(uc.bw)
	if writeErr == nil {
		writeErr = uc.bw.Flush()
	}
	// The client's body failed (it went away mid-upload, or passed the
	// route's limit): the request cannot be completed, and the owner,
	// still waiting for the rest, would never answer. Closing the
	// connection makes the owner see a body cut short, never a complete
	// one that it could act on.
	if src != nil && src.err != nil {
		return fail(src.err)
	}
	// An owner may answer (413, 401) and close before reading a whole
	// body: its answer is still worth reading when the write failed.
	if t.ResponseHeaderTimeout > 0 {
		_ = uc.conn.SetReadDeadline(time.Now().Add(t.ResponseHeaderTimeout))
	}
	// Peek first: a connection the owner closed unused answers io.EOF here,
	// where http.ReadResponse would say io.ErrUnexpectedEOF.
	_, err := uc.br.Peek(1)
	if err != nil {
		if writeErr != nil {
			return fail(writeErr)
		}
		return fail(err)
	}
	if trace != nil && trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
	resp, err := readFinalResponse(uc.br, req)
	if err != nil {
		if writeErr != nil {
			return fail(writeErr)
		}
		return fail(err)
	}
	_ = uc.conn.SetReadDeadline(time.Time{})
	keep := writeErr == nil && !resp.Close && !req.Close
	if resp.Body == http.NoBody || resp.Body == nil {
		t.finish(uc, stop, keep)
		return resp, nil
	}
	resp.Body = &pooledBody{body: resp.Body, t: t, uc: uc, stop: stop, keep: keep}
	return resp, nil
}

// sourceBody is the client's request body as the edge streams it to an
// owner; it remembers the error a read of it returned, which Request.Write
// cannot tell apart from a failed write to the owner.
type sourceBody struct {
	io.ReadCloser
	err error
}

func (b *sourceBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// readFinalResponse reads past informational (1xx) responses, which the
// owner may send before its answer (100 Continue).
func readFinalResponse(br *bufio.Reader, req *http.Request) (*http.Response, error) {
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
		_ = resp.Body.Close()
	}
}

// finish ends an exchange: the connection goes back to the pool when it
// can carry another, and is closed otherwise.
func (t *Transport) finish(uc *upstreamConn, stop func() bool, keep bool) {
	if !stop() || !keep { // the deadline was forced: the connection is spent
		_ = uc.conn.Close()
		return
	}
	t.put(uc)
}

// conn returns an idle connection to addr, or dials one. A connection
// unused past IdleTimeout is closed, not reused. A request that cannot be
// replayed takes only a connection the owner has not closed meanwhile.
func (t *Transport) conn(ctx context.Context, addr string, req *http.Request) (*upstreamConn, bool, error) {
	now := time.Now()
	for {
		uc := t.take(addr)
		if uc == nil {
			break
		}
		if now.Sub(uc.idleSince) > t.IdleTimeout || (!replayable(req) && closedByPeer(uc)) {
			_ = uc.conn.Close()
			continue
		}
		return uc, true, nil
	}
	c, err := t.Dial(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	return &upstreamConn{addr: addr, conn: c, br: bufio.NewReaderSize(c, 16<<10), bw: bufio.NewWriterSize(c, 16<<10)}, false, nil
}

func (t *Transport) take(addr string) *upstreamConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	conns := t.idle[addr]
	if len(conns) == 0 {
		return nil
	}
	uc := conns[len(conns)-1]
	conns[len(conns)-1] = nil
	t.idle[addr] = conns[:len(conns)-1]
	return uc
}

// put returns uc to the pool, and closes the least recently used connection
// when it has been idle past IdleTimeout (the pool sheds a burst's
// connections as the load falls) or when the pool is full.
func (t *Transport) put(uc *upstreamConn) {
	uc.idleSince = time.Now()
	addr := uc.addr
	var closing *upstreamConn
	t.mu.Lock()
	if t.idle == nil {
		t.idle = map[string][]*upstreamConn{}
	}
	conns := t.idle[addr]
	if len(conns) > 0 && (len(conns) >= t.MaxIdlePerHost || uc.idleSince.Sub(conns[0].idleSince) > t.IdleTimeout) {
		closing = conns[0]
		conns = append(conns[:0], conns[1:]...)
	}
	t.idle[addr] = append(conns, uc)
	t.mu.Unlock()
	if closing != nil {
		_ = closing.conn.Close()
	}
}

// CloseIdleConnections closes every pooled connection.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, conns := range idle {
		for _, uc := range conns {
			_ = uc.conn.Close()
		}
	}
	if f, ok := t.Fallback.(interface{ CloseIdleConnections() }); ok {
		f.CloseIdleConnections()
	}
}

// closedByPeer reports whether the owner has closed an idle connection (or
// sent on it unasked, which leaves it unusable too): a peek at the socket
// that must not wait finds EOF or data instead of nothing. One system call,
// paid only by requests that cannot be sent twice.
func closedByPeer(uc *upstreamConn) bool {
	if uc.br.Buffered() > 0 {
		return true
	}
	sc, ok := uc.conn.(syscall.Conn)
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

// replayable says whether req may be sent again after a connection failed
// before any answer, by net/http's rule: no body or one it can read again
// (GetBody: the edge read it whole), and a safe method or an idempotency
// key.
func replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	_, key := req.Header["Idempotency-Key"]
	_, xkey := req.Header["X-Idempotency-Key"]
	return key || xkey
}

// nothingAnswered says whether err means the owner closed the connection
// without a byte of answer.
func nothingAnswered(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// pooledBody is an owner's response body; read to its end, it gives the
// connection back to the pool, closed early, it closes the connection (the
// rest of the body would have to be read first).
type pooledBody struct {
	body io.ReadCloser
	t    *Transport
	uc   *upstreamConn
	stop func() bool
	keep bool
	done bool
}

func (b *pooledBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	n, err := b.body.Read(p)
	if err == io.EOF {
		b.done = true
		b.t.finish(b.uc, b.stop, b.keep)
	}
	return n, err
}

func (b *pooledBody) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	b.t.finish(b.uc, b.stop, false)
	return nil
}
