// Package usage is the partner-scoped read of the legacy-use ledger:
// GET /api/compatibility/usage answers which deprecated routes the calling
// partner's own credentials called, with each route's successor and the
// Sunset, extension and brownouts the policy gives that partner. The edge
// serves it itself (the ledger and the policy are the edge's); the partner
// console and a partner's backend read it with a bearer credential.
//
// The scope is the credential's tenant, environment and partner: the
// credentials of that partner in that environment, or the calling
// credential alone when it belongs to no partner. Nothing of another
// partner's use is ever read.
package usage

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

// Path is the route of the read.
const Path = "/api/compatibility/usage"

// Reader answers the read.
type Reader struct {
	Credentials *auth.Store
	// Uses reads one credential's legacy use (store.Store.Uses).
	Uses   func(ctx context.Context, subject string) ([]store.Use, error)
	Policy func() *policy.Policy

	once   sync.Once
	engine *gin.Engine
}

// Serve answers Path ahead of the edge's proxy, which owns every other
// /api path: gin cannot register a static route beside the proxy's
// catch-all, so the read takes its path in a middleware, answers it from
// its own small router (where auth.Middleware's chain ends at the read,
// not at the proxy), and passes every other request on.
func (rd *Reader) Serve(c *gin.Context) {
	if c.Request.URL.Path != Path {
		c.Next()
		return
	}
	rd.once.Do(rd.build)
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), outerKey{}, c))
	rd.engine.ServeHTTP(c.Writer, c.Request)
	c.Abort()
}

type outerKey struct{}

// build makes the read's router. Its first handler carries the outer
// request's settings (problem mapper and logger, request id) over.
func (rd *Reader) build() {
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.Use(func(c *gin.Context) {
		if outer, ok := c.Request.Context().Value(outerKey{}).(*gin.Context); ok {
			for k, v := range outer.Keys {
				c.Set(k, v)
			}
		}
		c.Header("Cache-Control", "private, no-store")
	})
	r.GET(Path, auth.Middleware(rd.Credentials), rd.answer)
	r.NoMethod(func(c *gin.Context) {
		problem.Write(c, problem.Newf(problem.MethodNotAllowed, "%s is not allowed on %s.", c.Request.Method, Path))
	})
	rd.engine = r
}

func (rd *Reader) answer(c *gin.Context) {
	caller, _ := auth.CredentialFrom(c.Request.Context())
	u, err := rd.read(c.Request.Context(), caller)
	if err != nil {
		problem.Render(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"data": u, "requestId": requestid.Get(c)})
}

// Usage is the answer's data.
type Usage struct {
	// AnnouncementsEnabled is false when the deployment announces no
	// retirement (SERVICE_API_CANONICAL_ROUTES is not true).
	AnnouncementsEnabled bool        `json:"announcementsEnabled"`
	Routes               []RouteUse  `json:"routes"`
	Families             []FamilyNow `json:"families"`
}

// FamilyNow is a family's current phase as the policy holds it.
type FamilyNow struct {
	Family string     `json:"family"`
	GA     *time.Time `json:"generalAvailability"`
	Stage  string     `json:"stage"`
}

// RouteUse is one deprecated route the partner's credentials called.
type RouteUse struct {
	Route        string    `json:"route"`
	Family       string    `json:"family,omitempty"`
	Successor    string    `json:"successor,omitempty"`
	FirstCallAt  time.Time `json:"firstCallAt"`
	LastCallAt   time.Time `json:"lastCallAt"`
	Calls        int64     `json:"calls"`
	CallsLast24h int64     `json:"callsLast24h"`
	CallsLast30d int64     `json:"callsLast30d"`
	// CallsByDay are the calls of each of the 30 UTC days of CallsLast30d,
	// oldest first.
	CallsByDay      []DayCalls   `json:"callsByDay"`
	SampleRequestID string       `json:"sampleRequestId,omitempty"`
	Credentials     []Credential `json:"credentials"`
	// Sunset is set when a retirement date is announced for the route.
	Sunset *time.Time `json:"sunset,omitempty"`
	// Extension is an approved later deadline for this partner.
	Extension *time.Time `json:"extension,omitempty"`
	Stage     string     `json:"stage,omitempty"`
	Brownouts []Span     `json:"brownouts"`

	sampleAt time.Time
}

// DayCalls are a route's calls on one UTC day.
type DayCalls struct {
	Day   string `json:"day"` // YYYY-MM-DD
	Calls int64  `json:"calls"`
}

// Credential names one of the partner's credentials that called a route.
type Credential struct {
	ID    string `json:"id"`
	Label string `json:"label,omitempty"`
}

// Span is a brownout, [start, end).
type Span struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// scope lists the credentials whose use the caller may read: its
// partner's in its tenant and environment, or itself alone.
func (rd *Reader) scope(ctx context.Context, caller auth.Credential) ([]auth.Credential, error) {
	if caller.PartnerID == "" {
		return []auth.Credential{caller}, nil
	}
	all, err := rd.Credentials.List(ctx, caller.Tenant)
	if err != nil {
		return nil, err
	}
	var mine []auth.Credential
	for _, cr := range all {
		if cr.Environment == caller.Environment && cr.PartnerID == caller.PartnerID {
			mine = append(mine, cr)
		}
	}
	return mine, nil
}

func (rd *Reader) read(ctx context.Context, caller auth.Credential) (Usage, error) {
	creds, err := rd.scope(ctx, caller)
	if err != nil {
		return Usage{}, err
	}
	pol := rd.Policy()
	if pol == nil {
		return Usage{}, errors.New("no compatibility policy loaded")
	}
	out := Usage{AnnouncementsEnabled: pol.Enabled, Routes: []RouteUse{}, Families: []FamilyNow{}}
	for _, w := range pol.Windows() {
		f := FamilyNow{Family: string(w.Family), Stage: string(w.Stage)}
		if !w.GA.IsZero() {
			t := w.GA.Time()
			f.GA = &t
		}
		out.Families = append(out.Families, f)
	}
	ids := []string{}
	for _, cr := range creds {
		ids = append(ids, cr.PublicID)
	}
	if caller.PartnerID != "" {
		ids = append(ids, caller.PartnerID)
	}
	byRoute := map[string]*RouteUse{}
	for _, cr := range creds {
		uses, err := rd.Uses(ctx, cr.PublicID)
		if err != nil {
			return Usage{}, err
		}
		for _, u := range uses {
			r := byRoute[u.Route]
			if r == nil {
				r = &RouteUse{Route: u.Route, FirstCallAt: u.First, LastCallAt: u.Last, Brownouts: []Span{}}
				byRoute[u.Route] = r
			}
			if u.First.Before(r.FirstCallAt) {
				r.FirstCallAt = u.First
			}
			if u.Last.After(r.LastCallAt) {
				r.LastCallAt = u.Last
			}
			if u.Sample != "" && !u.Last.Before(r.sampleAt) {
				r.SampleRequestID, r.sampleAt = u.Sample, u.Last
			}
			r.Calls += u.Count
			r.CallsLast24h += u.Last24h
			r.CallsLast30d += u.Last30d
			if r.CallsByDay == nil {
				r.CallsByDay = make([]DayCalls, len(u.Days))
				for i, d := range u.Days {
					r.CallsByDay[i].Day = d.Day.Format(time.DateOnly)
				}
			}
			for i, d := range u.Days {
				r.CallsByDay[i].Calls += d.Calls
			}
			r.Credentials = append(r.Credentials, Credential{ID: cr.PublicID, Label: cr.Label})
		}
	}
	for _, r := range byRoute {
		if route := findRoute(r.Route); route != nil {
			r.Family, r.Successor = string(route.Family), route.Successor
			if w := pol.Window(route.Family); pol.Enabled && route.Eligible && w != nil && !w.GA.IsZero() {
				sunset := w.RouteEnd(route, ids) // a route added later has a window of its own
				r.Sunset = &sunset
				var ext time.Time
				for _, id := range ids {
					if d, ok := w.Extensions[id]; ok && d.Time().After(ext) {
						ext = d.Time()
					}
				}
				if !ext.IsZero() {
					r.Extension = &ext
				}
				r.Stage = string(w.Stage)
				for _, b := range w.Brownouts {
					r.Brownouts = append(r.Brownouts, Span{Start: b.Start, End: b.End})
				}
			}
		}
		out.Routes = append(out.Routes, *r)
	}
	sort.Slice(out.Routes, func(i, j int) bool {
		if !out.Routes[i].LastCallAt.Equal(out.Routes[j].LastCallAt) {
			return out.Routes[i].LastCallAt.After(out.Routes[j].LastCallAt)
		}
		return out.Routes[i].Route < out.Routes[j].Route
	})
	return out, nil
}

func findRoute(pattern string) *inventory.Route {
	i := slices.IndexFunc(inventory.Routes, func(r inventory.Route) bool { return r.Pattern == pattern })
	if i < 0 {
		return nil
	}
	return &inventory.Routes[i]
}
