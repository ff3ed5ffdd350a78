package proxy

import (
	"bytes"
	"io"
	"net/url"
	"strings"
	"sync"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/propagation"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
)

// MaxBufferedBody is the largest body, announced by its Content-Length,
// that the edge reads whole before it calls the owner.
const MaxBufferedBody = 64 << 10

// ExchangeBufferSize is the buffer an exchange reads and writes through:
// at 16 KiB a request or an answer of the API's usual size (a case, a
// problem, a 402 challenge with its PAYMENT-REQUIRED header) crosses each
// socket in one system call, where fasthttp's 4 KiB default took a 9 KiB
// challenge three reads from the owner and two writes to the partner. The
// owners' connections take theirs from a pool for each exchange; a
// partner's connection keeps its write buffer while it is open, as
// fasthttp's server does, so a thousand kept-alive partners hold 16 MiB.
const ExchangeBufferSize = 16 << 10

// forward sends the request to its owner and passes the owner's answer
// back. What it does, in order:
//
//   - the owner's request: the partner's method, normalised path and query
//     (without parameters an owner could read differently: a ';', a bad
//     escape), its end-to-end headers (never a hop-by-hop one, one its
//     Connection header names, or a forwarding header the partner sent),
//     then the edge's own: X-Forwarded-For/-Proto/-Host, X-Request-Id and
//     the trace context;
//   - its body: one of at most MaxBufferedBody announced bytes is read
//     whole first, as nginx buffers request bodies, so that the owner gets
//     the request in one write, a partner that goes away mid-body never
//     leaves the owner a body cut short, and a resend sends the same bytes
//     from memory; a larger or chunked one (an exhibit upload) streams,
//     within its route's limit;
//   - no protocol upgrade: no route of the platform offers one, and an
//     Upgrade header (a client's h2c offer) is hop-by-hop, dropped like the
//     others, so the owner answers in HTTP/1.1;
//   - the answer: its status, its end-to-end headers, the compatibility
//     policy's announcement, then its body: one of at most MaxBufferedBody
//     announced bytes read whole, a larger one as it comes (chunked and
//     flushed per piece when the owner streams it without a
//     Content-Length), and its trailers;
//   - an owner that breaks off its body midway is a 502 when the body was
//     small, and otherwise makes the edge close the partner's connection,
//     so the partner sees a truncated answer, never a complete one.
func (p *Proxy) forward(x *exchange, owner *upstream, ann *announcement) *problem.Error {
	in := &x.fc.Request
	out := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(out)
	out.Header.SetMethod(x.method)
	// A request without a Content-Type reaches the owner without one, not
	// with fasthttp's default (application/octet-stream).
	out.Header.SetNoDefaultContentType(true)
	target := x.path
	if q := cleanQuery(x.query); q != "" {
		target += "?" + q
	}
	out.Header.SetRequestURI(target)
	// Owners build absolute URLs (the x402 resource) from the public host.
	out.Header.SetHostBytes(x.host)
	out.UseHostHeader = true
	forwardHeaders(&out.Header, &in.Header)
	p.setForwarded(&out.Header, x)

	resendable := true
	var buffered *[]byte
	switch n := in.Header.ContentLength(); {
	case n == 0 || n == -2: // none (-2: no framing header, which a request may not have a body without)
	case n > 0 && n <= MaxBufferedBody:
		buffered = bodyBuffers.Get().(*[]byte)
		defer bodyBuffers.Put(buffered)
		body := (*buffered)[:n]
		if got, err := io.ReadFull(x.fc.RequestBodyStream(), body); err != nil {
			return problem.Newf(problem.InvalidRequest, "The request body ended after %d of the %d bytes its Content-Length announced.", got, n).Wrap(err)
		}
		out.SetBodyRaw(body)
	default: // announced larger, or chunked (-1)
		resendable = false
		out.SetBodyStream(&limitedBody{r: x.fc.RequestBodyStream(), limit: x.bodyLimit, chunked: n == -1, fc: x.fc}, n)
	}

	out.SetTimeout(x.upstreamTimeout)
	resp := fasthttp.AcquireResponse()
	if err := owner.do(out, resp, resendable); err != nil {
		fasthttp.ReleaseResponse(resp)
		return failed(owner.name, err)
	}

	dst := &x.fc.Response.Header
	copyAnswerHeaders(dst, &resp.Header)
	if ann != nil {
		if ann.decision.Announce {
			ann.setHeaders(dst)
		}
		if ann.route.Successor != "" && p.compat.Record != nil {
			p.compat.Record(ann.hit(x))
		}
	}
	x.fc.SetStatusCode(resp.StatusCode())
	if x.method == fasthttp.MethodHead {
		dst.SetContentLength(resp.Header.ContentLength())
		x.fc.Response.SkipBody = true
		fasthttp.ReleaseResponse(resp)
		return nil
	}
	if n := resp.Header.ContentLength(); n >= 0 && n <= MaxBufferedBody {
		// A small answer (a partner's usual JSON) is read whole now: the
		// owner's connection goes back to its pool at once, and an owner
		// that breaks it off is a 502, not a truncated answer.
		err := readAnswer(x.fc, resp, n)
		fasthttp.ReleaseResponse(resp)
		if err != nil {
			x.fc.Response.Reset()
			x.fc.Response.Header.Set(requestid.Header, x.requestID)
			return failed(owner.name, err)
		}
		return nil
	}
	// A large answer (an exhibit) or one of unknown length (a stream)
	// passes as it comes. The server writes it after the handler returns
	// and then closes the body, which gives the owner's connection back to
	// its pool and the response to fasthttp's.
	x.fc.SetBodyStream(&answerBody{resp: resp, partner: dst}, resp.Header.ContentLength())
	return nil
}

// readAnswer copies the owner's body of n bytes into the partner's answer.
func readAnswer(fc *fasthttp.RequestCtx, resp *fasthttp.Response, n int) error {
	buf := bodyBuffers.Get().(*[]byte)
	defer bodyBuffers.Put(buf)
	body := (*buf)[:n]
	_, err := io.ReadFull(resp.BodyStream(), body)
	if cerr := resp.CloseBodyStream(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fc.SetBody(body)
	return nil
}

// bodyBuffers lend forward the buffers it reads small bodies into,
// instead of a new one per request.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, MaxBufferedBody); return &b }}

// limitedBody passes a streamed request body to the owner and fails it
// past the route's limit (a chunked body announces no length).
// A chunked body whose connection ended is an error, never a shorter body
// that looks complete (cutShort).
type limitedBody struct {
	r       io.Reader
	limit   int64
	n       int64
	chunked bool
	fc      *fasthttp.RequestCtx
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > b.limit {
		return 0, &bodyTooLargeError{limit: b.limit}
	}
	if err == io.EOF && b.chunked && cutShort(b.fc) {
		return n, io.ErrUnexpectedEOF
	}
	return n, err
}

// bodyTooLargeError is a streamed body that passed its route's limit.
type bodyTooLargeError struct{ limit int64 }

func (e *bodyTooLargeError) Error() string { return "the request body passed its limit" }

// answerBody is the owner's answer's body as the partner's server reads
// it: at its end, the owner's trailers are copied to the partner's.
type answerBody struct {
	resp    *fasthttp.Response
	partner *fasthttp.ResponseHeader
	done    bool
}

func (b *answerBody) Read(p []byte) (int, error) {
	n, err := b.resp.BodyStream().Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		for name := range b.resp.Header.Trailers() {
			b.partner.SetBytesKV(name, b.resp.Header.PeekBytes(name))
		}
	}
	return n, err
}

// Close gives the owner's connection back (or closes it, when its body was
// not read to the end) and the response to its pool.
func (b *answerBody) Close() error {
	err := b.resp.CloseBodyStream()
	fasthttp.ReleaseResponse(b.resp)
	return err
}

// setForwarded states, from the edge's own knowledge, who the client is,
// which scheme it used and which host it asked for, with the request's id
// and trace context. Whatever the client sent under X-Forwarded-* or
// Forwarded (including X-Forwarded-Prefix, which an owner could take for a
// path to trust) was dropped with the hop-by-hop headers
// (forwardHeaders): the owners believe these headers because they come
// from the edge.
func (p *Proxy) setForwarded(h *fasthttp.RequestHeader, x *exchange) {
	proto := "http"
	if p.forwarding.TLSTerminated || x.fc.IsTLS() {
		proto = "https"
	}
	if x.client != "" {
		h.Set("X-Forwarded-For", x.client)
	}
	h.Set("X-Forwarded-Proto", proto)
	h.SetBytesV("X-Forwarded-Host", x.host)
	h.Set(requestid.Header, x.requestID)
	p.propagator.Inject(x.ctx, requestCarrier{h})
}

// requestCarrier reads and writes the trace context in fasthttp's request
// headers.
type requestCarrier struct{ h *fasthttp.RequestHeader }

var _ propagation.TextMapCarrier = requestCarrier{}

func (c requestCarrier) Get(key string) string { return string(c.h.Peek(key)) }
func (c requestCarrier) Set(key, value string) { c.h.Set(key, value) }
func (c requestCarrier) Keys() []string {
	var keys []string
	for k := range c.h.All() {
		keys = append(keys, string(k))
	}
	return keys
}

// hopByHop are the headers of one connection, never forwarded (RFC 9110
// section 7.6.1), with Proxy-Connection and Keep-Alive that older clients
// send; Content-Length and Host are the edge's to state.
var hopByHop = [][]byte{
	[]byte("Connection"), []byte("Proxy-Connection"), []byte("Keep-Alive"), []byte("Proxy-Authenticate"),
	[]byte("Proxy-Authorization"), []byte("Te"), []byte("Trailer"), []byte("Transfer-Encoding"), []byte("Upgrade"),
	[]byte("Content-Length"), []byte("Host"),
}

func isHopByHop(name []byte) bool {
	for _, h := range hopByHop {
		if bytes.EqualFold(h, name) {
			return true
		}
	}
	return false
}

var (
	xForwardedPrefix = []byte("X-Forwarded-")
	forwardedName    = []byte("Forwarded")
	requestIDName    = []byte(requestid.Header)
	dateName         = []byte("Date")
)

// forwardHeaders adds the partner's end-to-end headers to the owner's
// request, as they were received: without any the edge states itself
// (setForwarded) or that its Connection header names. A partner asking
// for trailers ("TE: trailers") is told the owner may send them.
func forwardHeaders(out, in *fasthttp.RequestHeader) {
	named := in.PeekAll("Connection")
	for k, v := range in.All() {
		if isHopByHop(k) || hasPrefixFold(k, xForwardedPrefix) || bytes.EqualFold(k, forwardedName) || bytes.EqualFold(k, requestIDName) {
			continue
		}
		if len(named) > 0 && namesToken(named, k) {
			continue
		}
		out.AddBytesKV(k, v)
	}
	for _, te := range in.PeekAll("Te") {
		if containsToken(te, []byte("trailers")) {
			out.Set("Te", "trailers")
			break
		}
	}
}

// copyAnswerHeaders sets the owner's end-to-end answer headers on the
// partner's: not its connection's, not the ones its Connection header
// names, not its framing (the edge frames the answer itself), its date or
// request id (the edge states both).
func copyAnswerHeaders(dst, src *fasthttp.ResponseHeader) {
	named := src.PeekAll("Connection")
	for k, v := range src.All() {
		if isHopByHop(k) || bytes.EqualFold(k, dateName) || bytes.EqualFold(k, requestIDName) {
			continue
		}
		if len(named) > 0 && namesToken(named, k) {
			continue
		}
		dst.AddBytesKV(k, v)
	}
	var trailers []byte
	for name := range src.Trailers() {
		if len(trailers) > 0 {
			trailers = append(trailers, ", "...)
		}
		trailers = append(trailers, name...)
	}
	if len(trailers) > 0 {
		_ = dst.SetTrailerBytes(trailers)
	}
}

// namesToken says whether one of the Connection header's lines names the
// header name.
func namesToken(lines [][]byte, name []byte) bool {
	for _, line := range lines {
		if containsToken(line, name) {
			return true
		}
	}
	return false
}

// containsToken says whether the comma-separated list holds token, in any
// case.
func containsToken(list, token []byte) bool {
	for len(list) > 0 {
		var item []byte
		item, list, _ = bytes.Cut(list, []byte(","))
		if bytes.EqualFold(bytes.TrimSpace(item), token) {
			return true
		}
	}
	return false
}

func hasPrefixFold(s, prefix []byte) bool {
	return len(s) >= len(prefix) && bytes.EqualFold(s[:len(prefix)], prefix)
}

// cleanQuery is the query the owner gets: the partner's, without the
// parameters Go's own parser refuses (a ';' in them, or a bad escape),
// which another reader might take differently. A query with none is
// passed as it is, without a copy.
func cleanQuery(raw string) string {
	if raw == "" || wellFormedQuery(raw) {
		return raw
	}
	kept := make([]string, 0, strings.Count(raw, "&")+1)
	for _, part := range strings.Split(raw, "&") {
		if part == "" || strings.Contains(part, ";") {
			continue
		}
		key, value, _ := strings.Cut(part, "=")
		if _, err := url.QueryUnescape(key); err != nil {
			continue
		}
		if _, err := url.QueryUnescape(value); err != nil {
			continue
		}
		kept = append(kept, part)
	}
	return strings.Join(kept, "&")
}

// wellFormedQuery says whether url.ParseQuery would take raw whole: no
// ';' and every '%' followed by two hexadecimal digits.
func wellFormedQuery(raw string) bool {
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case ';':
			return false
		case '%':
			if i+2 >= len(raw) || !isHex(raw[i+1]) || !isHex(raw[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

func isHex(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
}
