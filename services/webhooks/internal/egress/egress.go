// Package egress is how the webhooks service reaches partner endpoints: an
// HTTP client that never follows redirects, never uses a proxy, and refuses
// at dial time any address a partner must not make the service call.
//
// The check runs in the net.Dialer Control hook, on the IP address actually
// being connected to after resolution, so a hostname that resolves (or
// re-resolves, DNS rebinding) to an internal address is refused as surely as
// a literal one. A deployment may allow prefixes explicitly (Policy.Allow),
// for example 127.0.0.0/8 in development; nothing is allowed by default, and
// the allowlist applies to sandbox only (Policy.ForEnvironment): live never
// dials an internal address. A connection the allowlist let through is
// marked (Allowlisted), so the sender keeps nothing of its answer.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// ForbiddenError is a refused address. It satisfies the delivery package's
// ForbiddenAddress interface.
type ForbiddenError struct {
	Addr   netip.Addr
	Reason string // e.g. "loopback", "private", "metadata"
}

// Error names the address and its class.
func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("address %s is forbidden (%s)", e.Addr, e.Reason)
}

// AddressForbidden marks the error as a refused address.
func (e *ForbiddenError) AddressForbidden() bool { return true }

type rule struct {
	prefix netip.Prefix
	reason string
}

func rules(specs ...string) []rule {
	out := make([]rule, 0, len(specs)/2)
	for i := 0; i < len(specs); i += 2 {
		out = append(out, rule{netip.MustParsePrefix(specs[i]), specs[i+1]})
	}
	return out
}

// forbiddenV4 and forbiddenV6 are the special-purpose ranges (IANA registries
// and RFC 6890) a delivery may never reach. Order matters only for the reason
// reported: the metadata address comes before link-local.
var (
	forbiddenV4 = rules(
		"169.254.169.254/32", "metadata",
		"0.0.0.0/8", "unspecified",
		"10.0.0.0/8", "private",
		"100.64.0.0/10", "cgnat",
		"127.0.0.0/8", "loopback",
		"169.254.0.0/16", "link_local",
		"172.16.0.0/12", "private",
		"192.0.0.0/24", "reserved",
		"192.0.2.0/24", "reserved",
		"192.88.99.0/24", "reserved",
		"192.168.0.0/16", "private",
		"198.18.0.0/15", "reserved",
		"198.51.100.0/24", "reserved",
		"203.0.113.0/24", "reserved",
		"224.0.0.0/4", "multicast",
		"240.0.0.0/4", "reserved",
	)
	forbiddenV6 = rules(
		"::/128", "unspecified",
		"::1/128", "loopback",
		"::/96", "reserved", // IPv4-compatible, deprecated
		"64:ff9b:1::/48", "reserved", // local-use NAT64
		"100::/64", "reserved",
		"2001::/23", "reserved", // IETF protocol assignments, Teredo included
		"2001:db8::/32", "reserved",
		"fc00::/7", "unique_local",
		"fe80::/10", "link_local",
		"fec0::/10", "reserved",
		"ff00::/8", "multicast",
	)
	mappedV4  = netip.MustParsePrefix("::ffff:0:0/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
)

// Policy decides which addresses may be dialed.
type Policy struct {
	// Allow lists prefixes that are dialed even though they are forbidden,
	// for a deployment that needs it (development: 127.0.0.0/8). Empty by
	// default. It applies to sandbox endpoints only (ForEnvironment).
	Allow []netip.Prefix
}

// ForEnvironment returns the policy of an environment's endpoints: p for
// sandbox, and p without its allowlist for live (and anything else). A
// development allowlist must never let a live credential's endpoint reach
// the deployment's own internal services.
func (p Policy) ForEnvironment(env string) Policy {
	if env == "sandbox" {
		return p
	}
	return Policy{}
}

// CheckFor is ForEnvironment(env).Check(addr): the check of registration.
func (p Policy) CheckFor(env string, addr netip.Addr) error {
	return p.ForEnvironment(env).Check(addr)
}

// allowlisted reports whether addr is internal and dialed only because the
// allowlist lets it.
func (p Policy) allowlisted(addr netip.Addr) bool {
	addr = addr.WithZone("")
	return forbiddenReason(addr) != "" && p.Check(addr) == nil
}

// Check returns nil when addr may be dialed, or a *ForbiddenError.
func (p Policy) Check(addr netip.Addr) error {
	addr = addr.WithZone("")
	for _, a := range p.Allow {
		if a.Contains(addr) || (addr.Is4In6() && a.Contains(addr.Unmap())) {
			return nil
		}
	}
	reason := forbiddenReason(addr)
	if reason == "" {
		return nil
	}
	return &ForbiddenError{Addr: addr, Reason: reason}
}

func forbiddenReason(addr netip.Addr) string {
	if !addr.IsValid() {
		return "invalid"
	}
	if addr.Is4In6() {
		if r := forbiddenReason(addr.Unmap()); r != "" {
			return "ipv4_mapped_" + r
		}
		return ""
	}
	if addr.Is4() {
		for _, r := range forbiddenV4 {
			if r.prefix.Contains(addr) {
				return r.reason
			}
		}
		return ""
	}
	b := addr.As16()
	switch {
	case sixToFour.Contains(addr):
		if r := forbiddenReason(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})); r != "" {
			return "6to4_" + r
		}
		return ""
	case nat64.Contains(addr):
		if r := forbiddenReason(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})); r != "" {
			return "nat64_" + r
		}
		return ""
	case mappedV4.Contains(addr):
		return "ipv4_mapped"
	}
	for _, r := range forbiddenV6 {
		if r.prefix.Contains(addr) {
			return r.reason
		}
	}
	return ""
}

// Control is a net.Dialer Control hook that refuses forbidden addresses.
func (p Policy) Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &ForbiddenError{Reason: "unparsable " + address}
	}
	return p.Check(ap.Addr())
}

// Resolver looks up a host's addresses; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer dials only addresses the policy allows.
type Dialer struct {
	policy   Policy
	resolver Resolver
	dialer   net.Dialer
}

// NewDialer returns a guarded dialer. A nil resolver is net.DefaultResolver.
func NewDialer(policy Policy, resolver Resolver, timeout time.Duration) *Dialer {
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	return &Dialer{policy: policy, resolver: resolver, dialer: net.Dialer{Timeout: timeout, Control: policy.Control}}
}

// DialContext resolves host and dials its addresses in turn; every
// connection goes through the Control hook, so the address checked is the
// address connected to.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	portNum, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", port, err)
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		addrs, err = d.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	var errs []error
	for _, a := range addrs {
		conn, err := d.dialer.DialContext(ctx, network, netip.AddrPortFrom(a.Unmap(), uint16(portNum)).String())
		if err == nil {
			if d.policy.allowlisted(a.Unmap()) {
				return allowlistedConn{conn}, nil
			}
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// allowlistedConn is a connection to an internal address the allowlist let
// through.
type allowlistedConn struct{ net.Conn }

// Allowlisted reports whether c (or the connection a TLS connection runs
// over) was dialed to an internal address only because the allowlist lets
// it: what answers there is the deployment's own network, so the sender
// keeps none of its answer (an endpoint at a debug port would otherwise
// read the port's output back from its delivery record).
func Allowlisted(c net.Conn) bool {
	for c != nil {
		if _, ok := c.(allowlistedConn); ok {
			return true
		}
		inner, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return false
		}
		c = inner.NetConn()
	}
	return false
}

// NewClient returns the client deliveries are sent with: the guarded
// dialer, no proxy (a proxy would dial on our behalf, past the guard), no
// redirects (a 3xx is returned as the response), and timeout per request.
// It keeps up to idlePerHost connections to each host alive between sends:
// the sender's concurrency, since every send in flight may go to one host
// (many endpoints of a partner share it). Fewer makes a busy host's
// connections close and open again with every burst: a dial, and a TLS
// handshake, per delivery.
func NewClient(d *Dialer, timeout time.Duration, idlePerHost int) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           d.DialContext,
			ForceAttemptHTTP2:     true,
			TLSHandshakeTimeout:   timeout,
			ResponseHeaderTimeout: timeout,
			MaxIdleConns:          max(100, idlePerHost),
			MaxIdleConnsPerHost:   idlePerHost,
			IdleConnTimeout:       90 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
