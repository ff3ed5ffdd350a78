package respond

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Config is the hosted page's configuration.
type Config struct {
	// PublicBaseURL is the address browsers reach the platform at (the
	// ingress in front of the edge). Its origin is the only one whose form
	// posts are accepted; its path, if any, prefixes the page's links and
	// the session cookie's Path. It comes from configuration, never from
	// the request's Host or X-Forwarded-* headers, which a client chooses.
	PublicBaseURL string
	// SecureCookie marks the session cookie Secure. Production serves the
	// page over https and must set it; loadConfig defaults it to true unless
	// PublicBaseURL is http:// (development), where it may still be set
	// for a loopback address.
	SecureCookie bool
	// SessionTTL is how long a session lasts from the login exchange. It
	// does not slide: the cookie and the Redis key end together.
	SessionTTL time.Duration
}

// DefaultPublicBaseURL is where the development stack's edge listens.
const DefaultPublicBaseURL = "http://127.0.0.1:8080"

// DefaultConfig returns the defaults: the development edge, a plain-http
// cookie (the development edge has no TLS), sessions of eight hours (a
// working day to write the answer in).
func DefaultConfig() Config {
	return Config{PublicBaseURL: DefaultPublicBaseURL, SecureCookie: false, SessionTTL: 8 * time.Hour}
}

// Bounds of SessionTTL.
const (
	MinSessionTTL = time.Minute
	MaxSessionTTL = 24 * time.Hour
)

// Validate reports every unusable setting.
func (c Config) Validate() error {
	var errs []error
	u, err := parseBase(c.PublicBaseURL)
	if err != nil {
		errs = append(errs, err)
	} else {
		switch {
		case c.SecureCookie && u.Scheme == "http" && !loopback(u.Hostname()):
			// A browser drops a Secure cookie set over plain http (loopback
			// aside): the page would sign nobody in.
			errs = append(errs, fmt.Errorf("a Secure session cookie needs an https public base URL, not %q", c.PublicBaseURL))
		case !c.SecureCookie && u.Scheme == "https":
			// Served over https, a cookie without Secure would still be
			// sent over any plain-http request to the host.
			errs = append(errs, fmt.Errorf("the session cookie must be Secure when the public base URL %q is https", c.PublicBaseURL))
		}
	}
	if c.SessionTTL < MinSessionTTL || c.SessionTTL > MaxSessionTTL {
		errs = append(errs, fmt.Errorf("respondent session TTL %s not within %s..%s", c.SessionTTL, MinSessionTTL, MaxSessionTTL))
	}
	return errors.Join(errs...)
}

// parseBase accepts an absolute http or https URL with a host and no user
// information, query or fragment.
func parseBase(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" {
		return nil, fmt.Errorf("public base URL %q must be an absolute http or https URL with a host and no user, query or fragment", s)
	}
	return u, nil
}

func loopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// originAndPrefix splits a valid base URL into its origin, serialized as
// a browser sends it in Origin (lowercase host, no default port), and its
// path without the trailing slash ("" for none).
func originAndPrefix(base string) (string, string) {
	u, _ := parseBase(base)
	host := strings.ToLower(u.Host)
	host = strings.TrimSuffix(host, map[string]string{"http": ":80", "https": ":443"}[u.Scheme])
	return u.Scheme + "://" + host, strings.TrimRight(u.EscapedPath(), "/")
}
