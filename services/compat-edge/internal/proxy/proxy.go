// Package proxy is the edge's public HTTP surface: every public /api path
// is normalised, routed to the service that owns it and forwarded (the
// edge's own transport, retrying only what never reached the owner); on
// the way, requests to earlier routes get the compatibility policy's
// announcement headers or its 410, and are recorded in the legacy-use
// ledger. The edge itself serves the API document and the migration guide.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/propagation"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/compat-edge/internal/legacyuse"
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
	// proxies holds one reverse proxy per owner, built once: the
	// per-request state travels in the request's context.
	proxies map[routing.Owner]*httputil.ReverseProxy
}

// NewProxy returns a proxy over the table that applies the compatibility
// policy of compat to earlier routes. Every owner must have an upstream.
func NewProxy(table *routing.Table, upstreams map[routing.Owner]*url.URL, fwd Forwarding, propagator propagation.TextMapPropagator, compat Compat) (*Proxy, error) {
	for _, o := range routing.Owners {
		if upstreams[o] == nil {
			return nil, fmt.Errorf("no upstream URL for %s", o)
		}
	}
	p := &Proxy{
		table:      table,
		upstreams:  upstreams,
		forwarding: fwd,
		propagator: propagator,
		compat:     compat,
		transport:  NewRetryTransport(NewTransport()),
		proxies:    map[routing.Owner]*httputil.ReverseProxy{},
	}
	for _, o := range routing.Owners {
		p.proxies[o] = p.reverseProxy(o, upstreams[o])
	}
	return p, nil
}

// copyBuffers lends the reverse proxies the buffers they copy response
// bodies through, instead of a new 32 KiB one per response.
var copyBuffers = &bufferPool{pool: sync.Pool{New: func() any { return make([]byte, 32<<10) }}}

type bufferPool struct{ pool sync.Pool }

func (b *bufferPool) Get() []byte { return b.pool.Get().([]byte) }

// Put keeps p for the next response. Boxing the slice header costs a few
// bytes per Put, against 32 KiB per response without the pool.
func (b *bufferPool) Put(p []byte) {
	//lint:ignore SA6002 the interface hands over a slice, not a pointer
	b.pool.Put(p)
}

// exchange is one request's state, which the shared reverse proxy's hooks
// find in the request's context.
type exchange struct {
	c     *gin.Context
	ann   *announcement
	owner routing.Owner
}

type exchangeKey struct{}

func (p *Proxy) reverseProxy(owner routing.Owner, target *url.URL) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Transport:  p.transport,
		BufferPool: copyBuffers,
		Rewrite: func(pr *httputil.ProxyRequest) {
			x := pr.In.Context().Value(exchangeKey{}).(*exchange)
			pr.SetURL(target)
			p.setForwarded(pr, httpserver.ClientAddr(pr.In.Context()))
			pr.Out.Host = pr.In.Host // owners build absolute URLs (x402 resource) from the public host
			pr.Out.Header.Set(requestid.Header, requestid.Get(x.c))
			p.propagator.Inject(pr.In.Context(), propagation.HeaderCarrier(pr.Out.Header))
		},
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Del(requestid.Header) // the edge already set the same id
			x := resp.Request.Context().Value(exchangeKey{}).(*exchange)
			if ann := x.ann; ann != nil {
				if ann.decision.Announce {
					ann.setHeaders(resp.Header)
				}
				if ann.route.Successor != "" && p.compat.Record != nil {
					p.compat.Record(legacyuse.Hit{TokenHash: ann.tokenHash, Route: ann.route.Pattern, At: ann.at, RequestID: requestid.Get(x.c)})
				}
			}
			return nil
		},
		ErrorHandler: func(_ http.ResponseWriter, r *http.Request, err error) {
			x := r.Context().Value(exchangeKey{}).(*exchange)
			if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
				x.c.Abort() // the caller went away; nobody to answer
				return
			}
			// The client's body passed the route's limit while streaming
			// (no Content-Length told in advance): the owner saw it cut
			// short, the client hears why.
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				_ = x.c.Error(problem.Newf(problem.BodyTooLarge, "The request body exceeds this route's limit of %d bytes.", tooLarge.Limit).Wrap(err))
				return
			}
			code := UpstreamUnavailable
			if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
				code = UpstreamTimeout
			}
			_ = x.c.Error(problem.Newf(code, "The %s service did not answer; retry shortly.", owner).
				WithHeader("Retry-After", "1").Wrap(err))
		},
	}
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
	x := &exchange{c: c, ann: ann, owner: owner}
	req := c.Request.WithContext(context.WithValue(c.Request.Context(), exchangeKey{}, x))
	p.proxies[owner].ServeHTTP(c.Writer, req)
}

// setForwarded states, from the edge's own knowledge, who the client is,
// which scheme it used and which host it asked for. Whatever the client
// sent under X-Forwarded-* or Forwarded (including X-Forwarded-Prefix,
// which an owner could take for a path to trust) is dropped first: the
// owners believe these headers because they come from the edge.
func (p *Proxy) setForwarded(pr *httputil.ProxyRequest, client string) {
	for name := range pr.Out.Header {
		if strings.HasPrefix(name, "X-Forwarded-") {
			pr.Out.Header.Del(name)
		}
	}
	pr.Out.Header.Del("Forwarded")
	proto := "http"
	if p.forwarding.TLSTerminated || pr.In.TLS != nil {
		proto = "https"
	}
	if client != "" {
		pr.Out.Header.Set("X-Forwarded-For", client)
	}
	pr.Out.Header.Set("X-Forwarded-Proto", proto)
	pr.Out.Header.Set("X-Forwarded-Host", pr.In.Host)
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
