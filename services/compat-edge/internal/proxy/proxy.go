// Package proxy is the edge's public HTTP surface: every public /api path
// is normalised, routed to the service that owns it and forwarded (the
// edge's own transport, retrying only what never reached the owner); on
// the way, requests to earlier routes get the compatibility policy's
// announcement headers or its 410, and are recorded in the legacy-use
// ledger. The edge itself serves the API document and the migration guide.
package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/propagation"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

// Problem codes of the edge.
var (
	UpstreamUnavailable = problem.Code{Name: "upstream_unavailable", Status: http.StatusBadGateway, Title: "Upstream service unavailable"}
	UpstreamTimeout     = problem.Code{Name: "upstream_timeout", Status: http.StatusGatewayTimeout, Title: "Upstream service timed out"}
)

// Forwarding is what the edge knows about how requests reach it, from
// which it states X-Forwarded-* to the owners.
type Forwarding struct {
	// TLSTerminated says TLS ends in front of the edge (the ingress), so
	// every request it receives was https for the client.
	TLSTerminated bool
}

// Codes returns the proxy's problem codes; with admin.Codes, the rows of
// owner compat-edge in docs/problems.md.
func Codes() []problem.Code {
	return []problem.Code{UpstreamUnavailable, UpstreamTimeout, AliasRetired, InvalidPath}
}

// Proxy forwards requests to the owning service.
type Proxy struct {
	table      *routing.Table
	upstreams  map[routing.Owner]*url.URL
	forwarding Forwarding
	transport  http.RoundTripper
	propagator propagation.TextMapPropagator
	compat     Compat
}

// NewProxy returns a proxy over the table that applies the compatibility
// policy of compat to earlier routes. Every owner must have an upstream:
// an http(s) URL of its scheme and host alone (the partner's path is the
// owner's).
func NewProxy(table *routing.Table, upstreams map[routing.Owner]*url.URL, fwd Forwarding, propagator propagation.TextMapPropagator, compat Compat) (*Proxy, error) {
	for _, o := range routing.Owners {
		u := upstreams[o]
		if u == nil {
			return nil, fmt.Errorf("no upstream URL for %s", o)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return nil, fmt.Errorf("the upstream URL of %s must be http(s)://host[:port], not %q", o, u.String())
		}
	}
	return &Proxy{
		table:      table,
		upstreams:  upstreams,
		forwarding: fwd,
		propagator: propagator,
		compat:     compat,
		transport:  NewRetryTransport(NewTransport()),
	}, nil
}

// copyBuffers lends forward the buffers it copies response bodies
// through, instead of a new 32 KiB one per response.
var copyBuffers = &bufferPool{pool: sync.Pool{New: func() any { return make([]byte, 32<<10) }}}

type bufferPool struct{ pool sync.Pool }

func (b *bufferPool) Get() []byte { return b.pool.Get().([]byte) }

// Put keeps p for the next response. Boxing the slice header costs a few
// bytes per Put, against 32 KiB per response without the pool.
func (b *bufferPool) Put(p []byte) {
	//lint:ignore SA6002 the pool hands over a slice, not a pointer
	b.pool.Put(p)
}

// ownerRoute is where one request goes: its owner, the owner's URL, and
// the compatibility policy's announcement for it (nil for a current
// route).
type ownerRoute struct {
	name   routing.Owner
	target *url.URL
	ann    *announcement
}

// requestIDHeader is the request id's header, canonical as map keys are.
const requestIDHeader = requestid.Header

// failed answers a request the owner could not take: 413 for a body that
// passed its route's limit while streaming, 504 when the owner did not
// answer in time, 502 otherwise, nothing to a caller that went away.
func (p *Proxy) failed(c *gin.Context, owner routing.Owner, err error) {
	if errors.Is(err, context.Canceled) && c.Request.Context().Err() != nil {
		c.Abort() // the caller went away; nobody to answer
		return
	}
	// The client's body passed the route's limit while streaming (no
	// Content-Length told in advance): the owner saw it cut short, the
	// client hears why.
	if tooLarge := bodyTooLarge(err); tooLarge != nil {
		_ = c.Error(tooLarge)
		return
	}
	code := UpstreamUnavailable
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		code = UpstreamTimeout
	}
	_ = c.Error(problem.Newf(code, "The %s service did not answer; retry shortly.", owner).
		WithHeader("Retry-After", "1").Wrap(err))
}

// Handle proxies the request, or answers 404 when no service owns the path.
// A request to an earlier route gets the policy's announcement on the
// owner's response, or, retired or in a brownout, a 410 from the edge that
// the owner never sees. Mutations are forwarded, never redirected.
func (p *Proxy) Handle(c *gin.Context) {
	owner, ok := p.table.Owner(c.Request.URL.Path)
	if !ok {
		httpserver.LabelRoute(c, httpserver.UnmatchedRoute)
		_ = c.Error(problem.Newf(problem.NotFound, "No resource at %s.", problem.Clip(c.Request.URL.Path)))
		return
	}
	ann := p.decide(c.Request)
	httpserver.LabelRoute(c, routeLabel(owner, ann))
	if ann != nil && ann.decision.Refuse {
		ann.refuse(c) // not legacy use: nothing was served
		return
	}
	if err := bufferBody(c.Request); err != nil {
		// Answered even when the caller has gone: one that only closed
		// its sending half still reads why.
		_ = c.Error(err)
		return
	}
	p.forward(c, ownerRoute{name: owner, target: p.upstreams[owner], ann: ann})
}

// MaxBufferedBody is the largest body, announced by its Content-Length,
// that the edge reads whole before it calls the owner.
const MaxBufferedBody = 64 << 10

// bufferBody reads a body of at most MaxBufferedBody announced bytes whole,
// as nginx buffers request bodies, and makes it readable again (GetBody).
// Partner requests are small JSON documents; for them this means that the
// owner gets the request in one write, where net/http sends the headers
// alone first when it cannot see a body's end (a second system call on
// both sides, and the owner reading a request in two parts); that a client
// that goes away mid-body never leaves the owner a body cut short; and that
// a resend (RetryTransport) sends the same bytes from memory. Larger and
// chunked bodies (exhibit uploads) stream.
func bufferBody(r *http.Request) error {
	n := r.ContentLength
	if n <= 0 || n > MaxBufferedBody || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	buf := make([]byte, n)
	if got, err := io.ReadFull(r.Body, buf); err != nil {
		if tooLarge := bodyTooLarge(err); tooLarge != nil {
			return tooLarge
		}
		return problem.Newf(problem.InvalidRequest, "The request body ended after %d of the %d bytes its Content-Length announced.", got, n).Wrap(err)
	}
	r.Body = io.NopCloser(bytes.NewReader(buf))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf)), nil }
	return nil
}

// bodyTooLarge is the 413 of a body that passed its route's limit while
// it was read, nil for any other error.
func bodyTooLarge(err error) *problem.Error {
	var tooLarge *http.MaxBytesError
	if !errors.As(err, &tooLarge) {
		return nil
	}
	return problem.Newf(problem.BodyTooLarge, "The request body exceeds this route's limit of %d bytes.", tooLarge.Limit).Wrap(err)
}

// setForwarded states, from the edge's own knowledge, who the client is,
// which scheme it used and which host it asked for, with the request's id
// and trace context. Whatever the client sent under X-Forwarded-* or
// Forwarded (including X-Forwarded-Prefix, which an owner could take for a
// path to trust) was dropped with the hop-by-hop headers
// (forwardHeaders): the owners believe these headers because they come
// from the edge.
func (p *Proxy) setForwarded(h http.Header, in *http.Request) {
	proto := "http"
	if p.forwarding.TLSTerminated || in.TLS != nil {
		proto = "https"
	}
	if client := httpserver.ClientAddr(in.Context()); client != "" {
		h["X-Forwarded-For"] = []string{client}
	}
	h["X-Forwarded-Proto"] = []string{proto}
	h["X-Forwarded-Host"] = []string{in.Host}
	h[requestIDHeader] = []string{requestid.FromContext(in.Context())}
	p.propagator.Inject(in.Context(), propagation.HeaderCarrier(h))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// routeLabel is the route template the edge counts a request under
// (httpserver's RED histogram): the inventory row it matched, or, for a
// path or method no row lists, its owner alone. Never the raw path, so the
// series stay as many as the inventory's rows.
func routeLabel(owner routing.Owner, ann *announcement) string {
	if ann != nil {
		return ann.route.Pattern
	}
	return "unlisted (" + string(owner) + ")"
}
