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
	// CheckAddr refuses literal IP hosts the dial guard would refuse; nil
	// checks nothing here (the dial guard still does at send time).
	CheckAddr func(netip.Addr) error
}

// ValidateURL checks a URL for an endpoint of environment env and returns
// it normalised (scheme and host lower-case).
func (r URLRules) ValidateURL(raw, env string) (string, error) {
	if raw == "" {
		return "", invalid("url", "url is required")
	}
	if len(raw) > MaxURLLength {
		return "", invalid("url", "url is longer than %d characters", MaxURLLength)
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
	if r.CheckAddr != nil {
		addr, err := netip.ParseAddr(host)
		if err != nil && (host == "localhost" || strings.HasSuffix(host, ".localhost")) {
			addr, err = netip.MustParseAddr("127.0.0.1"), nil
		}
		if err == nil {
			if cerr := r.CheckAddr(addr); cerr != nil {
				return "", fmt.Errorf("%w: %w", ErrURLForbidden, cerr)
			}
		}
	}
	return u.String(), nil
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
