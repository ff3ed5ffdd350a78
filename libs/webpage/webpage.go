// Package webpage holds the rules every server-rendered page of the
// platform keeps (the respondent page of cases, the partner console): the
// security headers and content security policy, the body limit, the
// same-origin check on form posts, the CSRF guard, the single-use link a
// person confirms and exchanges for a cookie session, sign-out, and the
// one stylesheet every page is drawn with (Stylesheet).
//
// It decides nothing about what a page shows or whom a link signs in as:
// each service keeps its own store step (spending the link and creating the
// session is one Redis script over the service's own keys) and its own
// refusal pages. The checks here return errors the service maps to a page;
// they never write a response themselves, except LimitBody, which calls
// the service's refusal.
package webpage

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"
)

// ContentSecurityPolicy allows a page its own modules and stylesheets,
// forms posting to itself and its modules' requests to its own origin
// (an upload's progress, a recovery's figures followed live, the passkey
// pages' WebAuthn ceremonies), and nothing
// else: no inline script, no images, no framing, no base rewriting, no
// request to any other origin.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Headers sets the policy headers on every response of a page, refusals
// and redirects included. no-referrer keeps the page's address (and
// anything in it) out of every request the page makes; private, no-store
// keeps what the page shows out of every cache.
func Headers(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, no-store")
	c.Next()
}

// LimitBody caps a request body at limit bytes. A request that announces a
// larger Content-Length is answered by tooLarge (the service's refusal
// page) and aborted before anything reads it; a body that grows past the
// limit unannounced makes ReadForm fail with ErrFormTooLarge.
func LimitBody(limit int64, tooLarge gin.HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > limit {
			tooLarge(c)
			c.Abort()
			return
		}
		if c.Request.Body != nil {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
		}
		c.Next()
	}
}

// Site is where browsers reach the pages: the public base URL, split.
type Site struct {
	// Origin is the only origin whose form posts are accepted, serialized
	// as a browser sends it in Origin (lowercase host, no default port).
	Origin string
	// Prefix is the base URL's path without its trailing slash ("" for
	// none): it prefixes the pages' links and their cookies' Path.
	Prefix string
	// SecureCookie marks the session cookies Secure.
	SecureCookie bool
}

// NewSite checks a public base URL and the cookie's Secure flag together.
// The base URL comes from configuration, never from a request's Host or
// X-Forwarded-* headers, which a client chooses. It must be an absolute
// http or https URL with a host and no user information, query or
// fragment. Over https the cookie must be Secure (or any plain-http
// request to the host would carry it); over plain http it must not be,
// loopback aside (a browser drops a Secure cookie set over http, and the
// page would sign nobody in).
func NewSite(publicBaseURL string, secureCookie bool) (Site, error) {
	u, err := url.Parse(publicBaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" {
		return Site{}, fmt.Errorf("public base URL %q must be an absolute http or https URL with a host and no user, query or fragment", publicBaseURL)
	}
	switch {
	case secureCookie && u.Scheme == "http" && !Loopback(u.Hostname()):
		return Site{}, fmt.Errorf("a Secure session cookie needs an https public base URL, not %q", publicBaseURL)
	case !secureCookie && u.Scheme == "https":
		return Site{}, fmt.Errorf("the session cookie must be Secure when the public base URL %q is https", publicBaseURL)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Host), map[string]string{"http": ":80", "https": ":443"}[u.Scheme])
	return Site{Origin: u.Scheme + "://" + host, Prefix: strings.TrimRight(u.EscapedPath(), "/"), SecureCookie: secureCookie}, nil
}

// Loopback reports a host name of this machine, where plain http is safe.
func Loopback(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}

// Refusals of a form post, in the order CheckPost and CheckCSRF test them.
var (
	ErrCrossOrigin  = errors.New("form not posted from the page's own origin")
	ErrFormTooLarge = errors.New("form too large")
	ErrBadForm      = errors.New("form unreadable")
	ErrCSRFMismatch = errors.New("form's CSRF token is not the session's")
)

// SameOrigin admits a post sent from the site's origin. The pages send
// Referrer-Policy: no-referrer, under which a browser sends "Origin: null"
// even for their own form posts; then Sec-Fetch-Site, which no script can
// set, must say same-origin. A post with neither is refused: a browser too
// old to send either cannot use the pages.
func (s Site) SameOrigin(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" && o != "null" {
		return o == s.Origin
	}
	return r.Header.Get("Sec-Fetch-Site") == "same-origin"
}

// CheckPost admits a form post before anything reads a session: it must
// come from the site's origin (ErrCrossOrigin) and its form must be
// readable within the body limit (ErrFormTooLarge, ErrBadForm). The form
// is then in r.PostForm.
func (s Site) CheckPost(r *http.Request) error {
	if !s.SameOrigin(r) {
		return ErrCrossOrigin
	}
	return ReadForm(r)
}

// ReadForm parses a posted form, telling a body past LimitBody's limit
// (ErrFormTooLarge) from an unreadable one (ErrBadForm).
func ReadForm(r *http.Request) error {
	err := r.ParseForm()
	var tooLarge *http.MaxBytesError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &tooLarge):
		return fmt.Errorf("%w: %w", ErrFormTooLarge, err)
	default:
		return fmt.Errorf("%w: %w", ErrBadForm, err)
	}
}

// CSRFField is the form field that carries a session's CSRF token.
const CSRFField = "csrf"

// CheckCSRF admits a parsed form whose CSRF field is the session's token
// (ErrCSRFMismatch otherwise, an empty one included).
func CheckCSRF(r *http.Request, sessionCSRF string) error {
	if !Equal(r.PostForm.Get(CSRFField), sessionCSRF) {
		return ErrCSRFMismatch
	}
	return nil
}

// Equal compares two secrets (or their hashes) in constant time; an empty
// one equals nothing, so a missing field never matches a missing record.
func Equal(a, b string) bool {
	return a != "" && b != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
