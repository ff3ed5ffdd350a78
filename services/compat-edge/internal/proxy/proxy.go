// Package proxy is the edge's public HTTP surface: every public /api path
// is normalised, routed to the service that owns it and forwarded (the
// edge's own server and upstream clients on fasthttp, retrying only what
// never reached the owner); on
// the way, requests to earlier routes get the compatibility policy's
// announcement headers or its 410, and are recorded in the legacy-use
// ledger. The edge itself serves the API document and the migration guide.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/propagation"

	"github.com/pcourt/pcourt/libs/problem"
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
	upstreams  map[routing.Owner]*upstream
	forwarding Forwarding
	propagator propagation.TextMapPropagator
	compat     Compat
}

// maxConnsPerOwner bounds the connections the edge opens to one owner:
// the edge's in-flight limit (httpserver's default MaxInFlight). It opens
// no more than it has requests in flight to that owner; past the bound a
// request waits up to the dial timeout for one to come free.
const maxConnsPerOwner = 1024

// NewProxy returns a proxy over the table that applies the compatibility
// policy of compat to earlier routes. Every owner must have an upstream:
// an http(s) URL of its scheme and host alone (the partner's path is the
// owner's).
func NewProxy(table *routing.Table, upstreams map[routing.Owner]*url.URL, fwd Forwarding, propagator propagation.TextMapPropagator, compat Compat) (*Proxy, error) {
	clients := map[routing.Owner]*upstream{}
	for _, o := range routing.Owners {
		u := upstreams[o]
		if u == nil {
			return nil, fmt.Errorf("no upstream URL for %s", o)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return nil, fmt.Errorf("the upstream URL of %s must be http(s)://host[:port], not %q", o, u.String())
		}
		clients[o] = newUpstream(o, u, maxConnsPerOwner)
	}
	if propagator == nil {
		propagator = propagation.TraceContext{}
	}
	return &Proxy{
		table:      table,
		upstreams:  clients,
		forwarding: fwd,
		propagator: propagator,
		compat:     compat,
	}, nil
}

// handle proxies the request, or answers 404 when no service owns the
// path. A request to an earlier route gets the policy's announcement on
// the owner's response, or, retired or in a brownout, a 410 from the edge
// that the owner never sees. Mutations are forwarded, never redirected.
// It returns the problem to answer instead, if any.
func (p *Proxy) handle(x *exchange) *problem.Error {
	if n := x.fc.Request.Header.ContentLength(); int64(n) > x.bodyLimit {
		return tooLarge(x.bodyLimit)
	}
	owner, ok := p.table.Owner(x.path)
	if !ok {
		return problem.Newf(problem.NotFound, "No resource at %s.", problem.Clip(x.path))
	}
	ann := p.decide(x)
	x.route = routeLabel(owner, ann)
	if ann != nil && ann.decision.Refuse {
		ann.refuse(x) // not legacy use: nothing was served
		return nil
	}
	return p.forward(x, p.upstreams[owner], ann)
}

// failed is the problem of a request the owner could not take: 413 for a
// body that passed its route's limit while streaming, 504 when the owner
// did not answer in time, 502 otherwise.
func failed(owner routing.Owner, err error) *problem.Error {
	var over *bodyTooLargeError
	if errors.As(err, &over) {
		return tooLarge(over.limit).Wrap(err)
	}
	code := UpstreamUnavailable
	if isTimeout(err) {
		code = UpstreamTimeout
	}
	return problem.Newf(code, "The %s service did not answer; retry shortly.", owner).
		WithHeader("Retry-After", "1").Wrap(err)
}

// tooLarge is the 413 of a body over its route's limit.
func tooLarge(limit int64) *problem.Error {
	return problem.Newf(problem.BodyTooLarge, "The request body exceeds this route's limit of %d bytes.", limit)
}

func isTimeout(err error) bool {
	if errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne interface{ Timeout() bool }
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
