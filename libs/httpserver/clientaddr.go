package httpserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/gin-gonic/gin"
)

type clientAddrKey struct{}

// ClientAddr returns the address of the client behind the request, as the
// server's middleware resolved it, or "" outside a request.
func ClientAddr(ctx context.Context) string {
	a, _ := ctx.Value(clientAddrKey{}).(string)
	return a
}

// WithClientAddr returns ctx carrying addr as the client address, for tests
// of code that reads ClientAddr.
func WithClientAddr(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, clientAddrKey{}, addr)
}

func clientAddress(p *Platform) gin.HandlerFunc {
	return func(c *gin.Context) {
		addr := p.ClientAddr(c.Request.RemoteAddr, c.Request.Header.Values("X-Forwarded-For"))
		c.Request = c.Request.WithContext(WithClientAddr(c.Request.Context(), addr))
		c.Next()
	}
}

// ResolveClientAddr names the client of r. X-Forwarded-For is believed
// only on a request whose peer is a trusted proxy (an address in trusted):
// anyone else can write the header, so a request that reached the server
// directly, past the proxies, is counted under its own peer address.
//
//   - peer not trusted (or nothing trusted): the peer address, whatever
//     X-Forwarded-For says, and whatever hops is;
//   - peer trusted and hops > 0 (that many proxies in front, each
//     appending the address it saw): the entry hops places from the right;
//     a chain shorter than that did not come through them all, so the peer;
//   - peer trusted and hops == 0: the rightmost entry that is not itself a
//     trusted proxy.
func ResolveClientAddr(r *http.Request, trusted []netip.Prefix, hops int) string {
	return ClientAddrOf(r.RemoteAddr, r.Header.Values("X-Forwarded-For"), trusted, hops)
}

// ClientAddrOf is ResolveClientAddr for a server that is not net/http's:
// the peer's address (host:port) and the request's X-Forwarded-For lines.
func ClientAddrOf(remoteAddr string, forwardedForLines []string, trusted []netip.Prefix, hops int) string {
	peer := peerAddr(remoteAddr)
	if !peer.IsValid() || !contains(trusted, peer) {
		return addrString(peer, remoteAddr)
	}
	chain, ok := forwardedFor(forwardedForLines)
	if !ok {
		return addrString(peer, remoteAddr)
	}
	if hops > 0 {
		if len(chain) < hops {
			return addrString(peer, remoteAddr)
		}
		return chain[len(chain)-hops].String()
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if !contains(trusted, chain[i]) {
			return chain[i].String()
		}
	}
	if len(chain) > 0 {
		return chain[0].String()
	}
	return addrString(peer, remoteAddr)
}

// forwardedFor parses every X-Forwarded-For line; one unparsable entry
// makes the whole chain untrustworthy.
func forwardedFor(lines []string) ([]netip.Addr, bool) {
	var out []netip.Addr
	for _, line := range lines {
		for part := range strings.SplitSeq(line, ",") {
			a, err := netip.ParseAddr(strings.TrimSpace(part))
			if err != nil {
				return nil, false
			}
			out = append(out, a.Unmap())
		}
	}
	return out, true
}

func peerAddr(remote string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap()
	}
	if host, _, err := net.SplitHostPort(remote); err == nil {
		if a, err := netip.ParseAddr(host); err == nil {
			return a.Unmap()
		}
	}
	return netip.Addr{}
}

func addrString(a netip.Addr, raw string) string {
	if a.IsValid() {
		return a.String()
	}
	return raw
}

func contains(prefixes []netip.Prefix, a netip.Addr) bool {
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parsePrefixes reads IPs and CIDRs ("10.0.0.0/8", "127.0.0.1").
func parsePrefixes(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR", s)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
