// Package policy decides, for one request to an earlier route, what the
// edge announces (Deprecation, Sunset, the successor) and whether it
// answers 410 instead of forwarding. It is pure: the layers it is built
// from (the durable family settings, the environment) are handed to
// Resolve, and the edge swaps the resulting *Policy whenever a layer
// changes. The CompatibilityFamily resources, written to the store by the
// compat-controller, are Settings too, laid over the admin API's by
// Overlay.
package policy

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
)

// BaseWindow is the spec's window: an alias is announced from its family's
// general availability date and sunsets 180 days later, unless the
// integration has an approved later deadline.
const BaseWindow = 180 * 24 * time.Hour

// MaxBrownout bounds one brownout: brownouts are short, a reminder that
// breaks a client for minutes, not a retirement by other means.
const MaxBrownout = 24 * time.Hour

// Date is a calendar day in UTC, from strict YYYY-MM-DD text. The zero
// Date is "not set".
type Date struct{ t time.Time }

// ParseDate reads exactly YYYY-MM-DD, a real day, as midnight UTC.
func ParseDate(s string) (Date, error) {
	if len(s) != len("2006-01-02") {
		return Date{}, fmt.Errorf("date %q is not YYYY-MM-DD", s)
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || t.Format(time.DateOnly) != s {
		return Date{}, fmt.Errorf("date %q is not a YYYY-MM-DD day", s)
	}
	return Date{t}, nil
}

// IsZero reports an unset date.
func (d Date) IsZero() bool { return d.t.IsZero() }

// Time is the start of the day, UTC.
func (d Date) Time() time.Time { return d.t }

// String is YYYY-MM-DD, or "" when unset.
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return d.t.Format(time.DateOnly)
}

// Stage is how far a family's retirement has gone. It only acts after the
// window ends (for each integration, at its own deadline).
type Stage string

// The stages, in order.
const (
	// Warn serves every alias, with its announcement. The default.
	Warn Stage = "warn"
	// Brownout answers 410 during the scheduled brownouts that fall after
	// the window's end, and serves otherwise.
	Brownout Stage = "brownout"
	// Retired answers 410 from the window's end on.
	Retired Stage = "retired"
)

// Valid reports a known stage.
func (s Stage) Valid() bool { return s == Warn || s == Brownout || s == Retired }

// Span is a brownout: [Start, End).
type Span struct {
	Start time.Time
	End   time.Time
}

// Settings is a family's durable configuration: what an administrator
// decided. Every field is optional; the zero value is the spec's default
// (no date, stage warn, nothing scheduled).
type Settings struct {
	// GA is the general availability date; unset leaves it to the
	// environment.
	GA        Date
	Stage     Stage
	Brownouts []Span
	// Extensions are approved later deadlines, by integration: a
	// credential's public id or a partner id.
	Extensions map[string]Date
	// Source names where the settings come from, for logs and the admin
	// API ("CompatibilityFamily <namespace>/<name>"); "" is the durable
	// store. It is not stored.
	Source string
}

// MaxIntegrationBytes bounds an integration id.
const MaxIntegrationBytes = 200

// Validate reports a setting the policy cannot act on.
func (s Settings) Validate() error {
	var errs []error
	if s.Stage != "" && !s.Stage.Valid() {
		errs = append(errs, fmt.Errorf("stage %q is not warn, brownout or retired", s.Stage))
	}
	for _, b := range s.Brownouts {
		if !b.End.After(b.Start) || b.End.Sub(b.Start) > MaxBrownout {
			errs = append(errs, fmt.Errorf("brownout %s–%s must end after it starts and last at most %s",
				b.Start.Format(time.RFC3339), b.End.Format(time.RFC3339), MaxBrownout))
		}
	}
	for id, until := range s.Extensions {
		if id == "" || len(id) > MaxIntegrationBytes {
			errs = append(errs, fmt.Errorf("extension integration %q must be 1 to %d bytes", id, MaxIntegrationBytes))
		}
		if until.IsZero() {
			errs = append(errs, fmt.Errorf("extension of %s has no date", id))
		}
	}
	return errors.Join(errs...)
}

// The environment variables of the spec, one per family, then the shared
// cohort start, and the switch.
const (
	EnvCanonicalRoutes    = "SERVICE_API_CANONICAL_ROUTES"
	EnvCompatibilityStart = "SERVICE_API_COMPATIBILITY_START"
)

// EnvGA names each family's general availability variable.
var EnvGA = map[inventory.Family]string{
	inventory.V2Filings:    "SERVICE_API_V2_FILINGS_GA",
	inventory.V2Cases:      "SERVICE_API_V2_CASES_GA",
	inventory.WebsiteCases: "SERVICE_API_WEBSITE_CASES_GA",
}

// Env is the environment's layer, as read: raw values, "" when unset.
type Env struct {
	CanonicalRoutes    string
	FamilyGA           map[inventory.Family]string
	CompatibilityStart string
}

// EnvFrom reads the spec's variables.
func EnvFrom(getenv func(string) string) Env {
	e := Env{
		CanonicalRoutes:    getenv(EnvCanonicalRoutes),
		CompatibilityStart: getenv(EnvCompatibilityStart),
		FamilyGA:           map[inventory.Family]string{},
	}
	for f, name := range EnvGA {
		e.FamilyGA[f] = getenv(name)
	}
	return e
}

// Window is one family's effective configuration.
type Window struct {
	Family inventory.Family
	// GA is the effective date; zero announces nothing.
	GA Date
	// Source names the layer GA came from: "store", a variable name, or ""
	// when no layer set one.
	Source string
	// Invalid is set when the first layer that set a date set an invalid
	// one: the family then announces nothing rather than fall through to a
	// later layer, whose (shared, earlier) date the operator did not mean
	// for it. A deadline once announced cannot be taken back.
	Invalid   string
	Stage     Stage
	Brownouts []Span
	// Extensions by integration.
	Extensions map[string]Date
}

// End is the window's end for an integration known by ids (its
// credential's public id, its partner id): the base end, or the latest
// approved extension among ids when later. It is the end for the routes
// present at general availability; RouteEnd is a route's own.
func (w *Window) End(ids []string) time.Time {
	return w.endFrom(w.GA.Time(), ids)
}

// Start is when route's window starts: the family's general availability,
// or the route's own since-date when the route joined the family later. A
// capability added later does not inherit an elapsed window: it gets the
// whole of its own.
func (w *Window) Start(route *inventory.Route) time.Time {
	start := w.GA.Time()
	if route != nil && route.Since != "" {
		if since, err := ParseDate(route.Since); err == nil && since.Time().After(start) {
			start = since.Time() // inventory.NewIndex refuses a since that is no day
		}
	}
	return start
}

// RouteEnd is the end of route's window for an integration known by ids:
// its own start plus the base window, or the latest approved extension
// among ids when later.
func (w *Window) RouteEnd(route *inventory.Route, ids []string) time.Time {
	return w.endFrom(w.Start(route), ids)
}

func (w *Window) endFrom(start time.Time, ids []string) time.Time {
	end := start.Add(BaseWindow)
	for _, id := range ids {
		if d, ok := w.Extensions[id]; ok && d.Time().After(end) {
			end = d.Time()
		}
	}
	return end
}

// Policy is the whole policy at one moment; immutable, shared by every
// request.
type Policy struct {
	// Enabled is SERVICE_API_CANONICAL_ROUTES set to exactly "true".
	Enabled bool
	windows map[inventory.Family]*Window
}

// Resolve builds the policy from its layers, in the spec's precedence for
// each family's date: the durable settings, then the family's variable,
// then SERVICE_API_COMPATIBILITY_START. Stage, brownouts and extensions
// come from the durable settings only.
func Resolve(env Env, durable map[inventory.Family]Settings) *Policy {
	p := &Policy{Enabled: env.CanonicalRoutes == "true", windows: map[inventory.Family]*Window{}}
	for _, f := range inventory.Families {
		s := durable[f]
		w := &Window{Family: f, Stage: s.Stage, Brownouts: s.Brownouts, Extensions: s.Extensions}
		if w.Stage == "" {
			w.Stage = Warn
		}
		switch {
		case !s.GA.IsZero():
			w.GA, w.Source = s.GA, "store"
			if s.Source != "" {
				w.Source = s.Source
			}
		case env.FamilyGA[f] != "":
			w.Source = EnvGA[f]
			w.GA, w.Invalid = parseOrInvalid(env.FamilyGA[f])
		case env.CompatibilityStart != "":
			w.Source = EnvCompatibilityStart
			w.GA, w.Invalid = parseOrInvalid(env.CompatibilityStart)
		}
		p.windows[f] = w
	}
	return p
}

func parseOrInvalid(raw string) (Date, string) {
	d, err := ParseDate(raw)
	if err != nil {
		return Date{}, raw
	}
	return d, ""
}

// Window returns a family's effective window.
func (p *Policy) Window(f inventory.Family) *Window { return p.windows[f] }

// Windows returns every family's window, in inventory.Families order.
func (p *Policy) Windows() []*Window {
	out := make([]*Window, 0, len(p.windows))
	for _, f := range inventory.Families {
		out = append(out, p.windows[f])
	}
	return out
}

// Decision is what the edge does with one request.
type Decision struct {
	// Announce sends Deprecation, Sunset and the successor Link.
	Announce    bool
	Deprecation time.Time
	Sunset      time.Time
	// Refuse answers 410 alias_retired without calling the owner; Brownout
	// says the refusal is a scheduled brownout, not the retirement.
	Refuse   bool
	Brownout bool
}

// Decide returns what to do with a request to route at now, by the route's
// own window (Start, RouteEnd): a route added after its family's general
// availability is announced from its since-date, and neither a brownout
// nor the retired stage refuses it before its own window ends. integrations
// is asked only when the family has extensions, for the ids the request's
// integration is known by; it is where the caller spends a credential
// lookup. When it fails the request is announced with the base window but
// never refused: an integration that may hold an extension is not cut off
// because its credential could not be read.
func (p *Policy) Decide(route *inventory.Route, now time.Time, integrations func() ([]string, error)) Decision {
	if !p.Enabled || route == nil || !route.Eligible {
		return Decision{}
	}
	w := p.windows[route.Family]
	if w == nil || w.GA.IsZero() {
		return Decision{}
	}
	var ids []string
	var unknown error
	if len(w.Extensions) > 0 && integrations != nil {
		ids, unknown = integrations()
	}
	d := Decision{Announce: true, Deprecation: w.Start(route), Sunset: w.RouteEnd(route, ids)}
	if now.Before(d.Sunset) || unknown != nil {
		return d // inside the route's window nothing is refused, whatever the stage
	}
	switch w.Stage {
	case Retired:
		d.Refuse = true
	case Brownout:
		for _, b := range w.Brownouts {
			if !now.Before(b.Start) && now.Before(b.End) {
				d.Refuse, d.Brownout = true, true
			}
		}
	}
	return d
}

// SortedExtensions returns the extensions ordered by integration, for
// stable output.
func (w *Window) SortedExtensions() []string {
	ids := make([]string, 0, len(w.Extensions))
	for id := range w.Extensions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
