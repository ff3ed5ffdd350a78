package respond

import (
	"errors"
	"fmt"
	"time"

	"github.com/pcourt/pcourt/libs/webpage"
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
	if _, err := webpage.NewSite(c.PublicBaseURL, c.SecureCookie); err != nil {
		errs = append(errs, err)
	}
	if c.SessionTTL < MinSessionTTL || c.SessionTTL > MaxSessionTTL {
		errs = append(errs, fmt.Errorf("respondent session TTL %s not within %s..%s", c.SessionTTL, MinSessionTTL, MaxSessionTTL))
	}
	return errors.Join(errs...)
}
