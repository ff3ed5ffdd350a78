package x402

import (
	"fmt"
	"net/url"
	"strings"
)

// DefaultPublicBaseURL is where the development stack's ingress listens.
const DefaultPublicBaseURL = "http://127.0.0.1:8080"

// PublicBase is the configured public origin of the API, the only source of
// the absolute resource URLs a 402 challenge names. A URL built from the
// request's Host or X-Forwarded-* headers would let any client choose the
// resource a payer is asked to sign for; configuration cannot be forged.
type PublicBase struct {
	base string // scheme://host[:port][/prefix], no trailing slash
}

// ParsePublicBase validates a configured base URL: absolute http or https,
// a host, no user information, query or fragment. A path is kept as a
// prefix (an ingress that mounts the API under one).
func ParsePublicBase(s string) (PublicBase, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" {
		return PublicBase{}, fmt.Errorf("public base URL %q must be an absolute http or https URL with a host and no user, query or fragment", s)
	}
	return PublicBase{base: strings.TrimRight(u.Scheme+"://"+u.Host+u.EscapedPath(), "/")}, nil
}

// URL returns the absolute URL of path, which starts with a slash.
func (b PublicBase) URL(path string) string { return b.base + path }

// String returns the base URL.
func (b PublicBase) String() string { return b.base }

// MarshalText writes the base URL, so configuration logged at start shows it.
func (b PublicBase) MarshalText() ([]byte, error) { return []byte(b.base), nil }
