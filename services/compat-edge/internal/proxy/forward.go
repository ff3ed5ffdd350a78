package proxy

import (
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"
	"golang.org/x/net/http/httpguts"
)

// forward sends the request to its owner and copies the owner's answer
// back: what httputil.ReverseProxy did for the edge, written for the
// edge's one kind of exchange so that a partner's request costs no more
// than it must (docs/compatibility.md, "Performance (measured)"). It builds
// the owner's request once, from the partner's, instead of cloning it and
// deleting what the owner must not see; it never parses the answer's media
// type; and it keeps no per-request hooks in the request's context. What
// it does, in order:
//
//   - the owner's request: the partner's method, normalised path and query
//     (without parameters an owner could read differently: a ';', a bad
//     escape), its end-to-end headers (never a hop-by-hop one, one its
//     Connection header names, or a forwarding header the partner sent),
//     then the edge's own: X-Forwarded-For/-Proto/-Host, X-Request-Id and
//     the trace context;
//   - no protocol upgrade: no route of the platform offers one, and an
//     Upgrade header (a client's h2c offer) is hop-by-hop, dropped like the
//     others, so the owner answers in HTTP/1.1;
//   - the answer: its status, its end-to-end headers, the compatibility
//     policy's announcement, then its body, flushed as it comes when the
//     owner streams it (no Content-Length), and its trailers;
//   - an owner that breaks off its body midway aborts the partner's
//     connection, so the partner sees a truncated answer, never a complete
//     one.
func (p *Proxy) forward(c *gin.Context, owner ownerRoute) {
	in := c.Request
	out := &http.Request{
		Method:        in.Method,
		URL:           &url.URL{Scheme: owner.target.Scheme, Host: owner.target.Host, Path: in.URL.Path, RawPath: in.URL.RawPath, RawQuery: cleanQuery(in.URL.RawQuery)},
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        forwardHeaders(in.Header),
		Host:          in.Host, // owners build absolute URLs (x402 resource) from the public host
		ContentLength: in.ContentLength,
		GetBody:       in.GetBody,
	}
	if in.ContentLength != 0 && in.Body != nil && in.Body != http.NoBody {
		// The transports may close a body they failed to send; the
		// server's own request body is the server's to close.
		out.Body = io.NopCloser(in.Body)
	}
	out = out.WithContext(in.Context())
	p.setForwarded(out.Header, in)
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		p.failed(c, owner.name, err)
		return
	}
	defer resp.Body.Close()

	removeHopByHop(resp.Header)
	resp.Header.Del(requestIDHeader) // the edge already set the same id
	if ann := owner.ann; ann != nil {
		if ann.decision.Announce {
			ann.setHeaders(resp.Header)
		}
		if ann.route.Successor != "" && p.compat.Record != nil {
			p.compat.Record(ann.hit(c))
		}
	}
	dst := c.Writer.Header()
	for k, vv := range resp.Header {
		dst[k] = append(dst[k], vv...)
	}
	if len(resp.Trailer) > 0 {
		names := make([]string, 0, len(resp.Trailer))
		for k := range resp.Trailer {
			names = append(names, k)
		}
		dst["Trailer"] = []string{strings.Join(names, ", ")}
	}
	c.Status(resp.StatusCode)
	c.Writer.WriteHeaderNow()
	if err := copyBody(c.Writer, resp.Body, resp.ContentLength < 0); err != nil {
		// The owner broke off its answer: abort the partner's connection
		// rather than end the answer as if it were whole.
		panic(http.ErrAbortHandler)
	}
	_ = resp.Body.Close() // now: the trailers are read at the body's end
	for k, vv := range resp.Trailer {
		dst[http.TrailerPrefix+k] = vv
	}
}

// copyBody copies an owner's body to the partner through a pooled buffer,
// flushing after each piece when the owner streams (no Content-Length). It
// returns the owner's read error; a write error means the partner went
// away, and the copy just stops.
func copyBody(w gin.ResponseWriter, body io.Reader, stream bool) error {
	buf := copyBuffers.Get()
	defer copyBuffers.Put(buf)
	for {
		n, rerr := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return nil
			}
			if stream {
				w.Flush()
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// hopByHop are the headers of one connection, never forwarded (RFC 9110
// section 7.6.1), with Proxy-Connection and Keep-Alive that older clients
// send.
var hopByHop = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func isHopByHop(name string) bool {
	for _, h := range hopByHop {
		if h == name {
			return true
		}
	}
	return false
}

// forwardHeaders is the partner's headers the owner gets: its end-to-end
// ones (the value slices shared, never changed), without any the edge
// states itself (setForwarded) or that its Connection header names. A
// partner asking for trailers ("TE: trailers") is told the owner may send
// them.
func forwardHeaders(in http.Header) http.Header {
	out := make(http.Header, len(in)+4)
	named := in["Connection"]
	for k, vv := range in {
		if isHopByHop(k) || strings.HasPrefix(k, "X-Forwarded-") || k == "Forwarded" || k == requestIDHeader {
			continue
		}
		if len(named) > 0 && httpguts.HeaderValuesContainsToken(named, k) {
			continue
		}
		out[k] = vv
	}
	if httpguts.HeaderValuesContainsToken(in["Te"], "trailers") {
		out["Te"] = []string{"trailers"}
	}
	if _, ok := out["User-Agent"]; !ok {
		out["User-Agent"] = []string{""} // none, rather than Go's own
	}
	return out
}

// removeHopByHop drops an owner's connection headers from its answer.
func removeHopByHop(h http.Header) {
	for _, f := range h["Connection"] {
		for _, name := range strings.Split(f, ",") {
			if name = strings.TrimSpace(name); name != "" {
				h.Del(name)
			}
		}
	}
	for _, name := range hopByHop {
		delete(h, name)
	}
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
