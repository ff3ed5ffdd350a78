// Package endpoints is the pure rule set of partner webhook endpoints: what a
// registration may say (URL rules, event type filters, description), the
// status an endpoint is in and the moves between statuses.
package endpoints

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
)

// Status is an endpoint's delivery status.
type Status string

// The statuses. Only enabled endpoints receive deliveries.
const (
	Enabled               Status = "enabled"
	DisabledByPartner     Status = "disabled_by_partner"
	DisabledAfterFailures Status = "disabled_after_failures"
)

// Scope is whose endpoint it is: every read and write is confined to one.
type Scope struct {
	Tenant      string
	Environment string // sandbox or live
	PartnerID   string
}

// Endpoint is a registered partner endpoint.
type Endpoint struct {
	ID             string
	Scope          Scope
	URL            string
	EventTypes     []string // empty: every type
	Description    string
	Status         Status
	DisabledReason string // why, when disabled: partner, failures or gone
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Health         delivery.Health
	// Events are the operational events of the endpoint, oldest first,
	// the last MaxEvents kept: what the service did to it on its own.
	Events  []Event
	Version int64 // optimistic concurrency counter of the store
}

// Event is an operational event of an endpoint: the service disabled it,
// and why. It is kept on the endpoint, so the partner reads it with the
// endpoint, and logged.
type Event struct {
	Type         string    // EventDisabled
	At           time.Time // when
	Reason       string    // failures or gone
	FailingSince time.Time // the streak's first failure (failures)
	Failures     int       // failures in the streak
}

// EventDisabled is the service disabling an endpoint.
const EventDisabled = "endpoint.disabled"

// MaxEvents is how many operational events an endpoint keeps.
const MaxEvents = 20

// Wants reports whether the endpoint is enabled and subscribed to type t.
func (e Endpoint) Wants(eventType string) bool {
	return e.Status == Enabled && (len(e.EventTypes) == 0 || slices.Contains(e.EventTypes, eventType))
}

// Limits of a registration.
const (
	MaxURLLength         = 2048
	MaxDescriptionLength = 500
	MaxEventTypes        = 50
	MaxPerPartner        = 20
)

// ValidationError is a registration that breaks a rule; Field names the
// JSON member.
type ValidationError struct {
	Field  string
	Detail string
}

// Error returns the detail.
func (e *ValidationError) Error() string { return e.Field + ": " + e.Detail }

// Sentinels of refused acts.
var (
	ErrNotFound     = errors.New("endpoint not found")
	ErrTooMany      = errors.New("endpoint limit reached")
	ErrConflict     = errors.New("endpoint changed concurrently")
	ErrURLForbidden = errors.New("endpoint url forbidden")
)

func invalid(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Detail: fmt.Sprintf(format, args...)}
}

// URLRules are the deployment's URL policy.
type URLRules struct {
	// AllowHTTP lets sandbox endpoints use http://; live always needs https.
	AllowHTTP bool
	// CheckAddr refuses the IP addresses the dial guard of the endpoint's
	// environment would refuse (egress.Policy.CheckFor); nil checks nothing
	// here (the dial guard still does at send time).
	CheckAddr func(env string, addr netip.Addr) error
}

// ValidateURL checks a URL for an endpoint of environment env and returns
// it normalised (scheme and host lower-case).
//
// The host is read as the dialer will read it: a literal IPv6 address
// (with or without a zone), an IPv4 address in any spelling the system
// resolver accepts (127.1, 2130706433, 0x7f000001, 0177.0.0.1, a trailing
// dot), or localhost and its subdomains, which name loopback. Any of them
// that names an address the environment may not reach is ErrURLForbidden;
// an allowed IPv4 address must be written in dotted decimal. A name is not
// resolved here (it may resolve elsewhere later): the dial guard checks
// the address of every connection.
func (r URLRules) ValidateURL(raw, env string) (string, error) {
	if raw == "" {
		return "", invalid("url", "url is required")
	}
	if len(raw) > MaxURLLength {
		return "", invalid("url", "url is longer than %d characters", MaxURLLength)
	}
	if err := checkURIChars(raw); err != nil {
		return "", err
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return "", invalid("url", "url must be an absolute http(s) URL")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && r.AllowHTTP && env != "live":
	case u.Scheme == "http" && env == "live":
		return "", invalid("url", "live endpoints must use https")
	case u.Scheme == "http":
		return "", invalid("url", "endpoints must use https")
	default:
		return "", invalid("url", "scheme %q is not allowed; use https", u.Scheme)
	}
	if u.User != nil {
		return "", invalid("url", "url must not carry credentials")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return "", invalid("url", "url must not have a fragment")
	}
	host := u.Hostname()
	if host == "" {
		return "", invalid("url", "url has no host")
	}
	if p := u.Port(); p != "" {
		if n, err := net.LookupPort("tcp", p); err != nil || n < 1 {
			return "", invalid("url", "port %q is invalid", p)
		}
	}
	u.Host = strings.ToLower(u.Host)
	host = strings.ToLower(host)
	addr, spelling, err := hostAddr(host)
	if err != nil {
		return "", err
	}
	if addr.IsValid() && r.CheckAddr != nil {
		if cerr := r.CheckAddr(env, addr); cerr != nil {
			return "", fmt.Errorf("%w: %s endpoint: %w", ErrURLForbidden, env, cerr)
		}
	}
	if spelling == ipv4Unusual {
		return "", invalid("url", "host %q is the IPv4 address %s: write it in dotted decimal", host, addr)
	}
	return u.String(), nil
}

// checkURIChars refuses what RFC 3986 does not allow in a URI: a space,
// <, >, ", {, }, |, \, ^, `, controls, non-ASCII, and % not followed by two
// hex digits. Go's parser keeps such bytes of a query as they are, and
// they would be written unescaped into the request line.
func checkURIChars(raw string) error {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '%':
			if i+2 >= len(raw) || !isHex(raw[i+1]) || !isHex(raw[i+2]) {
				return invalid("url", "url has %% at byte %d not followed by two hex digits", i)
			}
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0:
		default:
			return invalid("url", "url has %q at byte %d: a URI allows only RFC 3986 characters; percent-encode the others (a space is %%20)", c, i)
		}
	}
	return nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// spelling says how a host names its address.
type spelling int

const (
	hostName    spelling = iota // a DNS name: no address known here
	ipLiteral                   // a dotted-decimal IPv4 or an IPv6 literal
	ipv4Unusual                 // an IPv4 address spelled another way (127.1, 0x7f000001, a trailing dot, …)
	localName                   // localhost or a subdomain of it: loopback
)

// hostAddr returns the address host names, read as a resolver would read
// it, and how it is spelled. A host whose last label is a number (decimal,
// 0x hexadecimal or 0 octal, as inet_aton reads it) is an IPv4 address or
// invalid, as in the WHATWG URL standard; it is never looked up as a name.
func hostAddr(host string) (netip.Addr, spelling, error) {
	if addr, err := netip.ParseAddr(host); err == nil {
		return addr, ipLiteral, nil
	}
	if strings.Contains(host, ":") {
		return netip.Addr{}, hostName, invalid("url", "host %q is not an IPv6 address", host)
	}
	name := strings.TrimSuffix(host, ".")
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return netip.AddrFrom4([4]byte{127, 0, 0, 1}), localName, nil
	}
	labels := strings.Split(name, ".")
	if !numericLabel(labels[len(labels)-1]) {
		return netip.Addr{}, hostName, nil
	}
	addr, ok := parseInetAton(labels)
	if !ok {
		return netip.Addr{}, hostName, invalid("url", "host %q ends in a number but is not an IPv4 address", host)
	}
	return addr, ipv4Unusual, nil
}

// numericLabel reports whether a label reads as a number: decimal digits,
// or 0x followed by hex digits (none: zero).
func numericLabel(l string) bool {
	if h, ok := strings.CutPrefix(l, "0x"); ok {
		return strings.TrimLeft(h, "0123456789abcdef") == ""
	}
	return l != "" && strings.TrimLeft(l, "0123456789") == ""
}

// parseInetAton reads one to four numeric parts as inet_aton does: each
// decimal, 0x hexadecimal or 0-prefixed octal; the last part fills the
// bytes the others leave.
func parseInetAton(parts []string) (netip.Addr, bool) {
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseAtonPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 0xff {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(4-i)) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func parseAtonPart(p string) (uint64, bool) {
	base := 10
	switch {
	case strings.HasPrefix(p, "0x"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	if p == "" || len(p) > 12 {
		return 0, false
	}
	n, err := strconv.ParseUint(p, base, 64)
	return n, err == nil
}

var eventTypePattern = regexp.MustCompile(`^[a-z][a-z0-9_.]{0,79}$`)

// ValidateEventTypes checks and de-duplicates a filter, keeping its order.
func ValidateEventTypes(types []string) ([]string, error) {
	if len(types) > MaxEventTypes {
		return nil, invalid("eventTypes", "at most %d event types", MaxEventTypes)
	}
	out := make([]string, 0, len(types))
	for _, t := range types {
		if !eventTypePattern.MatchString(t) {
			return nil, invalid("eventTypes", "event type %q must be lower-case letters, digits, _ and . (1 to 80)", t)
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// ValidateDescription checks a description.
func ValidateDescription(d string) error {
	if len([]rune(d)) > MaxDescriptionLength {
		return invalid("description", "at most %d characters", MaxDescriptionLength)
	}
	for _, r := range d {
		if r < 0x20 && r != '\t' {
			return invalid("description", "control characters are not allowed")
		}
	}
	return nil
}

// Registration is a validated create request.
type Registration struct {
	URL         string
	EventTypes  []string
	Description string
}

// NewRegistration validates a create request.
func (r URLRules) NewRegistration(env, rawURL string, types []string, description string) (Registration, error) {
	u, err := r.ValidateURL(rawURL, env)
	if err != nil {
		return Registration{}, err
	}
	ts, err := ValidateEventTypes(types)
	if err != nil {
		return Registration{}, err
	}
	if err := ValidateDescription(description); err != nil {
		return Registration{}, err
	}
	return Registration{URL: u, EventTypes: ts, Description: description}, nil
}

// New is a fresh, enabled endpoint.
func New(id string, scope Scope, reg Registration, now time.Time) Endpoint {
	return Endpoint{ID: id, Scope: scope, URL: reg.URL, EventTypes: reg.EventTypes, Description: reg.Description,
		Status: Enabled, CreatedAt: now, UpdatedAt: now}
}

// Patch is a partial update; nil fields are unchanged. An empty EventTypes
// slice (not nil) means every type.
type Patch struct {
	URL         *string
	EventTypes  *[]string
	Description *string
}

// Apply validates and applies p to e.
func (r URLRules) Apply(e Endpoint, p Patch, now time.Time) (Endpoint, error) {
	if p.URL != nil {
		u, err := r.ValidateURL(*p.URL, e.Scope.Environment)
		if err != nil {
			return e, err
		}
		e.URL = u
	}
	if p.EventTypes != nil {
		ts, err := ValidateEventTypes(*p.EventTypes)
		if err != nil {
			return e, err
		}
		e.EventTypes = ts
	}
	if p.Description != nil {
		if err := ValidateDescription(*p.Description); err != nil {
			return e, err
		}
		e.Description = *p.Description
	}
	e.UpdatedAt = now
	return e, nil
}

// Disable is the partner turning deliveries off.
func Disable(e Endpoint, now time.Time) Endpoint {
	if e.Status == DisabledByPartner {
		return e
	}
	e.Status, e.DisabledReason, e.UpdatedAt = DisabledByPartner, "partner", now
	return e
}

// Enable turns deliveries back on, whatever disabled them, with a fresh
// failure streak.
func Enable(e Endpoint, now time.Time) Endpoint {
	if e.Status == Enabled {
		return e
	}
	e.Status, e.DisabledReason, e.Health, e.UpdatedAt = Enabled, "", delivery.Health{}, now
	return e
}

// RecordAttempt folds an attempt's kind into the endpoint's health and
// disables it when the policy says so. changed reports whether the status
// moved.
func RecordAttempt(e Endpoint, p delivery.HealthPolicy, k delivery.Kind, now time.Time) (Endpoint, bool) {
	h, verdict := p.Record(e.Health, k, now)
	e.Health = h
	if e.Status != Enabled {
		return e, false
	}
	reason := ""
	switch verdict {
	case delivery.DisableForFailures:
		reason = "failures"
	case delivery.DisableGone:
		reason = "gone"
	default:
		return e, false
	}
	e.Status, e.DisabledReason, e.UpdatedAt = DisabledAfterFailures, reason, now
	ev := Event{Type: EventDisabled, At: now, Reason: reason, FailingSince: h.FailingSince, Failures: h.Failures}
	e.Events = append(e.Events[max(0, len(e.Events)+1-MaxEvents):len(e.Events):len(e.Events)], ev)
	return e, true
}
