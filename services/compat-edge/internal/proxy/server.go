package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

// Server is the edge's public listener: fasthttp's server, whose
// connections reuse their request and response objects and buffers
// instead of allocating them per request, with the platform's checks of
// libs/httpserver (its Platform: request id, client address, header,
// in-flight and address limits, the RED histogram, the access log, the
// server span, problems) applied on the proxy path itself: /api and every
// other path a family of the routing table owns (/respond, /console,
// /oauth, the authorization server's metadata), the paths the owners
// answer. Everything else (the API document, the migration guide, the
// compatibility usage read, the probes, 404s) goes to the edge's gin engine, which applies the same checks with
// its middleware (docs/compatibility.md, "Performance (measured)").
//
// HTTP/1.1 only, as behind an ingress: a request line fasthttp cannot
// frame unambiguously (two Content-Lengths, a Transfer-Encoding other than
// chunked, an HTTP/2 preface) is refused with 400 and its connection
// closed; with both Transfer-Encoding and Content-Length the chunked
// framing is the one read (RFC 9112, section 6.3) and the owner gets the
// edge's own framing, never the partner's.
type Server struct {
	platform  *httpserver.Platform
	proxy     *Proxy
	routes    Config
	ownPaths  map[string]bool
	own       fasthttp.RequestHandler
	base      context.Context
	fast      *fasthttp.Server
	idleMu    sync.Mutex
	idleConns map[net.Conn]struct{}
}

// ServerDeps are what the edge's public server is made of.
type ServerDeps struct {
	// Platform is the gin server's, so that both count against the same
	// limits and record the same series.
	Platform *httpserver.Platform
	Proxy    *Proxy
	Routes   Config
	// Own answers every request outside the proxy path, and OwnPaths
	// inside it (normalised paths the edge answers itself).
	Own      http.Handler
	OwnPaths []string
}

// NewServer returns the edge's public server.
func NewServer(d ServerDeps) *Server {
	cfg := d.Platform.Config()
	s := &Server{
		platform: d.Platform, proxy: d.Proxy, routes: d.Routes, ownPaths: map[string]bool{},
		own: fasthttpadaptor.NewFastHTTPHandler(d.Own), base: context.Background(), idleConns: map[net.Conn]struct{}{},
	}
	for _, p := range d.OwnPaths {
		s.ownPaths[p] = true
	}
	s.fast = &fasthttp.Server{
		Handler:        s.serve,
		ErrorHandler:   s.unreadable,
		HeaderReceived: s.requestConfig,
		ExpectHandler:  s.expect,
		// Up to twice the header limit is read, so that a request over
		// the limit still gets a 431 problem naming it; beyond that the
		// connection is answered 431 and closed, and holds no more.
		ReadBufferSize: 2 * cfg.MaxHeaderBytes,
		// An answer of a few KiB leaves in one write, as nginx's does,
		// not in one per 4 KiB (fasthttp's default).
		WriteBufferSize: ExchangeBufferSize,
		// The header must arrive within ReadHeaderTimeout; requestConfig
		// then gives the body the read timeout.
		ReadTimeout:  cfg.ReadHeaderTimeout,
		WriteTimeout: cfg.WriteTimeout,
		IdleTimeout:  cfg.IdleTimeout,
		// The body is the owner's to read: streamed to it as it arrives,
		// never parsed (multipart uploads) or held whole by the server.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		NoDefaultServerHeader:        true,
		NoDefaultContentType:         true,
		CloseOnShutdown:              true,
		ConnState:                    s.connState,
		Logger:                       fastLogger{d.Platform.Logger()},
	}
	return s
}

// Serve serves ln until Shutdown; then it returns http.ErrServerClosed, as
// net/http's server does.
func (s *Server) Serve(ln net.Listener) error {
	err := s.fast.Serve(peerListener{ln})
	if err == nil {
		return http.ErrServerClosed
	}
	return err
}

// Shutdown stops accepting, closes idle connections and waits for the
// requests in flight, or for ctx.
func (s *Server) Shutdown(ctx context.Context) error { return s.fast.ShutdownWithContext(ctx) }

// Close stops accepting and returns without waiting for the requests in
// flight (fasthttp closes no busy connection itself; the process is about
// to exit when the server is closed).
func (s *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.fast.ShutdownWithContext(ctx)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// CloseIdle closes the connections that wait between requests, to make
// room when the listener is at its connection cap.
func (s *Server) CloseIdle() {
	s.idleMu.Lock()
	defer s.idleMu.Unlock()
	for c := range s.idleConns {
		_ = c.Close()
		delete(s.idleConns, c)
	}
}

func (s *Server) connState(c net.Conn, state fasthttp.ConnState) {
	s.idleMu.Lock()
	if state == fasthttp.StateIdle {
		s.idleConns[c] = struct{}{}
	} else {
		delete(s.idleConns, c)
	}
	s.idleMu.Unlock()
}

// exchange is one request on the proxy path.
type exchange struct {
	fc        *fasthttp.RequestCtx
	ctx       context.Context // the request id, the client address, the span
	requestID string
	client    string
	method    string
	host      []byte
	path      string // the normal form (routing.Normalize), escaped
	query     string
	route     string // the RED label
	bodyLimit int64
	// upstreamTimeout bounds the exchange with the owner.
	upstreamTimeout time.Duration
}

// serve answers one request: on the proxy path here, anything else with
// the edge's gin engine.
func (s *Server) serve(fc *fasthttp.RequestCtx) {
	if string(fc.Method()) == "PRI" { // HTTP/2's connection preface
		fc.SetConnectionClose()
		s.refuseUnread(fc, problem.New(problem.InvalidRequest, "The edge serves HTTP/1.1; HTTP/2 is the ingress's to speak."))
		return
	}
	rawPath, query := splitTarget(fc.Request.Header.RequestURI())
	normal, pathErr := routing.Normalize(rawPath)
	if pathErr == nil && (!s.proxied(normal) || s.ownPaths[normal]) {
		s.serveOwn(fc)
		return
	}
	start := time.Now()
	x := &exchange{
		fc: fc, method: string(fc.Method()), host: fc.Host(), path: normal, query: query,
		route: httpserver.UnmatchedRoute,
	}
	x.requestID = string(fc.Request.Header.Peek(requestid.Header))
	if !requestid.WellFormed(x.requestID) {
		x.requestID = requestid.New()
	}
	fc.Response.Header.Set(requestid.Header, x.requestID)
	x.client = s.platform.ClientAddr(fc.RemoteAddr().String(), forwardedForLines(&fc.Request.Header))
	ctx := httpserver.WithClientAddr(requestid.NewContext(s.base, x.requestID), x.client)
	ctx = s.platform.Propagator().Extract(ctx, requestCarrier{&fc.Request.Header})
	ctx, span := s.platform.Tracer().Start(ctx, "HTTP "+httpserver.MethodLabel(x.method), trace.WithSpanKind(trace.SpanKindServer))
	x.ctx = ctx
	recording := span.IsRecording()
	if recording {
		span.SetAttributes(s.requestAttributes(x)...)
	}
	defer func() {
		if r := recover(); r != nil {
			err := fmt.Errorf("panic: %v\n%s", r, debug.Stack())
			fc.Response.Reset()
			fc.Response.Header.Set(requestid.Header, x.requestID)
			s.writeProblem(x, &problem.Error{Code: problem.Internal, Detail: "The server could not complete the request.", Err: err})
		}
		discardBody(fc)
		s.finish(x, span, recording, start)
	}()

	if refused := s.check(x, pathErr); refused != nil {
		s.writeProblem(x, refused)
		return
	}
	defer s.platform.Leave()
	if refused := s.proxy.handle(x); refused != nil {
		s.writeProblem(x, refused)
	}
}

// check applies the platform's limits in the gin chain's order (header,
// in flight, address, then the path and the body's limit), and takes an
// in-flight slot when it admits the request.
func (s *Server) check(x *exchange, pathErr error) *problem.Error {
	if refused := s.platform.HeaderTooLarge(headerSize(&x.fc.Request.Header)); refused != nil {
		return refused
	}
	if refused := s.platform.Admit(); refused != nil {
		return refused
	}
	if refused := s.platform.AllowAddress(x.ctx, x.client); refused != nil {
		s.platform.Leave()
		return refused
	}
	if pathErr != nil {
		s.platform.Leave()
		return invalidPath(pathErr)
	}
	x.bodyLimit = s.routes.bodyLimit(x.method, x.path)
	x.upstreamTimeout = s.routes.upstreamTimeout(x.method, x.path)
	return nil
}

// discardBody reads what is left of a request body the answer did not
// need (a refusal, a 410, an owner that answered before it read it all),
// up to MaxBufferedBody, and closes the connection after the answer when
// more is left: fasthttp would otherwise read the rest as the next
// request on the connection, which a partner could use to smuggle one
// past the edge's checks.
func discardBody(fc *fasthttp.RequestCtx) {
	stream := fc.RequestBodyStream()
	if stream == nil {
		return
	}
	n, err := io.CopyN(io.Discard, stream, MaxBufferedBody+1)
	if n > MaxBufferedBody || (err != nil && err != io.EOF) {
		fc.SetConnectionClose()
	}
}

// finish records the request: its span's name and outcome, the RED
// histogram and the access line.
func (s *Server) finish(x *exchange, span trace.Span, recording bool, start time.Time) {
	status := x.fc.Response.StatusCode()
	size := answerSize(&x.fc.Response)
	if recording {
		span.SetName(httpserver.MethodLabel(x.method) + " " + x.route)
		span.SetAttributes(semconv.HTTPRoute(x.route), semconv.HTTPResponseStatusCode(status))
		if size >= 0 {
			span.SetAttributes(attribute.Int("http.response.body.size", size))
		}
		if status >= http.StatusInternalServerError {
			span.SetStatus(codes.Error, strconv.Itoa(status))
		}
	}
	span.End()
	f := httpserver.Finished{Method: x.method, Route: x.route, Path: x.path, Client: x.client, Status: status, Bytes: max(size, 0), Start: start}
	s.platform.Record(x.ctx, f)
	s.platform.Log(x.ctx, f)
}

// answerSize is the length of the answer's body: a body in memory's own
// (fasthttp states its Content-Length only as it writes the answer, after
// finish), a streamed one's stated length, -1 for a stream of unknown
// length.
func answerSize(r *fasthttp.Response) int {
	if r.IsBodyStream() {
		return r.Header.ContentLength()
	}
	return len(r.Body())
}

// writeProblem answers p, as problem.Write does on gin.
func (s *Server) writeProblem(x *exchange, p *problem.Error) {
	problem.Report(x.ctx, s.platform.Logger(), p)
	h := &x.fc.Response.Header
	for k, vs := range p.Header {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	h.SetContentType(problem.ContentType)
	h.Set("Cache-Control", "no-store")
	x.fc.SetStatusCode(p.Code.Status)
	x.fc.SetBody(problem.Encode(p, x.requestID))
}

// serveOwn hands the request to the gin engine, with its body read whole
// within the server's limit first (the edge's own routes take none).
func (s *Server) serveOwn(fc *fasthttp.RequestCtx) {
	if stream := fc.RequestBodyStream(); stream != nil {
		limit := s.platform.Config().MaxBodyBytes
		body, err := io.ReadAll(io.LimitReader(stream, limit+1))
		if err != nil || int64(len(body)) > limit {
			x := &exchange{fc: fc, ctx: s.base, requestID: requestid.New()}
			fc.Response.Header.Set(requestid.Header, x.requestID)
			if err != nil {
				s.writeProblem(x, problem.New(problem.InvalidRequest, "The request body could not be read.").Wrap(err))
			} else {
				s.writeProblem(x, tooLarge(limit))
			}
			fc.SetConnectionClose()
			return
		}
		fc.Request.SetBody(body)
	}
	s.own(fc)
}

// requestConfig gives a request, once its header is in, the deadlines of
// its route: an upload the transfer timeout to arrive and be answered, an
// exhibit download or a stream the transfer timeout to be sent, anything
// else the
// server's read and write timeouts.
func (s *Server) requestConfig(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	cfg := s.platform.Config()
	// A body is read ahead by one byte only: forward reads a small one
	// whole itself, and can tell how much of it arrived.
	rc := fasthttp.RequestConfig{ReadTimeout: cfg.ReadTimeout, WriteTimeout: cfg.WriteTimeout, MaxRequestBodySize: 1}
	if t := s.routes.TransferTimeout; t > 0 {
		rawPath, _ := splitTarget(h.RequestURI())
		if normal, err := routing.Normalize(rawPath); err == nil {
			switch method := string(h.Method()); {
			case isUpload(method, normal):
				rc.ReadTimeout, rc.WriteTimeout = t, t
			case isDownload(method, normal), isStream(method, normal):
				rc.WriteTimeout = t
			}
		}
	}
	return rc
}

// unreadable answers a request fasthttp could not read: its header over
// the read buffer (431), a framing it refuses, a malformed line or a body
// that ended early (400), a client too slow. The connection is closed
// after it.
func (s *Server) unreadable(fc *fasthttp.RequestCtx, err error) {
	if isTimeout(err) && silent(fc) {
		// A connection that sent nothing before its deadline asked for
		// nothing: it is closed without an answer, as net/http closes it.
		// A client's pool that dialed ahead of need would otherwise find
		// a 400 on a connection it had not used, and a load balancer's
		// idle probe connection a response it did not expect. fasthttp
		// writes whatever the handler leaves; on a closed connection that
		// write fails, unseen.
		_ = fc.Conn().Close()
		return
	}
	var small *fasthttp.ErrSmallBuffer
	var p *problem.Error
	switch {
	case errors.As(err, &small) || errors.Is(err, fasthttp.ErrSmallReadBuffer):
		p = problem.Newf(problem.HeaderTooLarge, "The request line and headers exceed %d bytes.", s.platform.Config().MaxHeaderBytes)
	case isTimeout(err):
		p = problem.New(problem.InvalidRequest, "The request did not arrive in time.")
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		p = problem.New(problem.InvalidRequest, "The request ended before the body its headers announced.")
	default:
		p = problem.New(problem.InvalidRequest, "The request could not be read as HTTP/1.1: "+err.Error()+".")
	}
	s.refuseUnread(fc, p.Wrap(err))
}

// expect answers a request that asked to be told before it sends its body
// (Expect: 100-continue): 100, or the 413 its Content-Length already
// earns, so that the body is never sent.
func (s *Server) expect(fc *fasthttp.RequestCtx) int {
	rawPath, _ := splitTarget(fc.Request.Header.RequestURI())
	normal, err := routing.Normalize(rawPath)
	if err != nil {
		return fasthttp.StatusContinue // refused as the request it is
	}
	limit := s.platform.Config().MaxBodyBytes
	if s.proxied(normal) && !s.ownPaths[normal] {
		limit = s.routes.bodyLimit(string(fc.Method()), normal)
	}
	if int64(fc.Request.Header.ContentLength()) <= limit {
		return fasthttp.StatusContinue
	}
	s.refuseUnread(fc, tooLarge(limit))
	return http.StatusRequestEntityTooLarge
}

// refuseUnread answers p to a request the server refuses before its
// handler runs, counted and logged as unmatched.
func (s *Server) refuseUnread(fc *fasthttp.RequestCtx, p *problem.Error) {
	start := time.Now()
	x := &exchange{fc: fc, ctx: s.base, requestID: requestid.New(), method: string(fc.Method()), route: httpserver.UnmatchedRoute}
	x.client = s.platform.ClientAddr(fc.RemoteAddr().String(), nil)
	fc.Response.Header.Set(requestid.Header, x.requestID)
	s.writeProblem(x, p)
	f := httpserver.Finished{Method: x.method, Route: x.route, Client: x.client, Status: p.Code.Status, Start: start}
	s.platform.Record(x.ctx, f)
	s.platform.Log(x.ctx, f)
}

// requestAttributes are the HTTP semantic conventions' request attributes
// of a recorded server span.
func (s *Server) requestAttributes(x *exchange) []attribute.KeyValue {
	scheme := "http"
	if x.fc.IsTLS() {
		scheme = "https"
	}
	attrs := []attribute.KeyValue{
		semconv.HTTPRequestMethodKey.String(httpserver.MethodLabel(x.method)),
		semconv.URLPath(x.path),
		semconv.URLScheme(scheme),
		semconv.ServerAddress(string(x.host)),
		semconv.NetworkProtocolVersion("1.1"),
	}
	if x.client != "" {
		attrs = append(attrs, semconv.ClientAddress(x.client))
	}
	if ua := x.fc.Request.Header.UserAgent(); len(ua) > 0 {
		attrs = append(attrs, semconv.UserAgentOriginal(string(ua)))
	}
	return attrs
}

// proxied says whether the owners answer path, so that the edge forwards
// it: every path under /api/ (one that no family owns is the proxy's 404),
// and any other path a family of the routing table owns (/respond/…,
// /console/…, /oauth/…, /.well-known/oauth-authorization-server). Which
// paths leave the edge is the table's to say, not a list of its own here.
func (s *Server) proxied(path string) bool {
	if strings.HasPrefix(path, "/api/") {
		return true
	}
	_, owned := s.proxy.table.Owner(path)
	return owned
}

// splitTarget splits a request target into its path, as sent, and its
// query. An absolute-form target (a proxy's) gives its path.
func splitTarget(uri []byte) (path, query string) {
	target := string(uri)
	if i := strings.Index(target, "://"); i > 0 && !strings.HasPrefix(target, "/") {
		rest := target[i+3:]
		if j := strings.IndexAny(rest, "/?"); j >= 0 {
			target = rest[j:]
		} else {
			target = "/"
		}
		if strings.HasPrefix(target, "?") {
			target = "/" + target
		}
	}
	path, query, _ = strings.Cut(target, "?")
	return path, query
}

// headerSize is the request line and headers' size as received.
func headerSize(h *fasthttp.RequestHeader) int {
	return len(h.Method()) + len(h.RequestURI()) + len(h.Protocol()) + 4 + len(h.RawHeaders())
}

// forwardedForLines are the request's X-Forwarded-For lines.
func forwardedForLines(h *fasthttp.RequestHeader) []string {
	values := h.PeekAll("X-Forwarded-For")
	if len(values) == 0 {
		return nil
	}
	lines := make([]string, len(values))
	for i, v := range values {
		lines[i] = string(v)
	}
	return lines
}

// fastLogger writes what fasthttp's server reports (connections it could
// not serve) to the edge's log, at debug: a client that breaks off is
// not the edge's failure.
type fastLogger struct{ l *slog.Logger }

func (f fastLogger) Printf(format string, args ...any) {
	f.l.Debug("fasthttp", "message", fmt.Sprintf(format, args...))
}

// peerListener marks every connection it accepts with whether its peer has
// ended it (peerConn).
type peerListener struct{ net.Listener }

func (l peerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &peerConn{Conn: c}, nil
}

// peerConn records that a read on the connection failed: the partner
// closed it or it broke. fasthttp reports a chunked body whose connection
// ended at a chunk's boundary as a body that ended (io.EOF); a body that
// really ended was read from bytes already received, without another read
// on the connection, so a failed read says the body was cut short.
type peerConn struct {
	net.Conn
	ended atomic.Bool
	spoke atomic.Bool // the client sent at least one byte
}

func (c *peerConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.spoke.Store(true)
	}
	if err != nil {
		c.ended.Store(true)
	}
	return n, err
}

// silent says whether the request's connection has sent nothing yet.
func silent(fc *fasthttp.RequestCtx) bool {
	c, ok := fc.Conn().(*peerConn)
	return ok && !c.spoke.Load()
}

// cutShort says whether the request's chunked body that just ended in
// io.EOF was cut short by its connection's end.
func cutShort(fc *fasthttp.RequestCtx) bool {
	c, ok := fc.Conn().(*peerConn)
	return ok && c.ended.Load()
}
