// Package admin is the compatibility admin API, on the edge's admin
// listener only: an operator approves extensions, schedules brownouts and
// sets partners' contacts (saved in the durable store, read by every edge
// replica at its policy refresh), and reads the policy in force, the
// notices and the audit. Every change names its actor and is audited. The
// settings saved here rank below a CompatibilityFamily resource's
// (policy.Overlay).
package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/mail"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

// Problem codes of the admin API.
var (
	// ExtensionShortened refuses a change that would bring an approved
	// extension forward or withdraw it.
	ExtensionShortened = problem.Code{Name: "extension_shortened", Status: http.StatusConflict, Title: "Extension cannot be shortened"}
	// InvalidCompatChange refuses a change the policy cannot act on: an
	// unknown family, a malformed date, a brownout that is too long, ends
	// before it starts or starts inside the window, an address that is
	// not one.
	InvalidCompatChange = problem.Code{Name: "invalid_compat_change", Status: http.StatusUnprocessableEntity, Title: "Invalid compatibility change"}
)

// Codes returns the admin API's problem codes, rows of owner compat-edge in
// docs/problems.md.
func Codes() []problem.Code { return []problem.Code{ExtensionShortened, InvalidCompatChange} }

// Prefix is where the admin API lives, on the admin listener only.
const Prefix = "/admin/compatibility/"

// ActorHeader names who makes a change; every change requires it and the
// audit records it.
const ActorHeader = "X-PC-Actor"

// Store is the durable state the admin API reads and changes.
type Store interface {
	Load(ctx context.Context, f inventory.Family) (policy.Settings, error)
	Save(ctx context.Context, f inventory.Family, st policy.Settings) error
	ApproveExtension(ctx context.Context, f inventory.Family, integration string, until policy.Date) error
	SetContact(ctx context.Context, partner, address string) error
	Contacts(ctx context.Context) (map[string]string, error)
	Notices(ctx context.Context, f inventory.Family) ([]store.Notice, error)
	AppendAudit(ctx context.Context, e store.AuditEntry) error
	Audit(ctx context.Context, count int64) ([]store.AuditEntry, error)
}

// API is the compatibility admin API.
type API struct {
	// Token is EDGE_ADMIN_TOKEN; empty refuses every request.
	Token  envconf.Secret
	Store  Store
	Policy func() *policy.Policy
	// Refresh makes this replica act on a change at once; the others
	// follow within the refresh interval.
	Refresh func(ctx context.Context) error
	Now     func() time.Time
	Logger  *slog.Logger
}

// Handler returns the admin API, to mount at Prefix on the admin
// listener.
func (a *API) Handler() http.Handler {
	e := gin.New()
	e.ContextWithFallback = true
	e.Use(requestid.Middleware(), problem.Middleware(a.Logger, a.mapError), a.authenticate, httpserver.BodyLimit(64<<10))
	g := e.Group(strings.TrimSuffix(Prefix, "/"))
	g.GET("/policy", a.getPolicy)
	g.PUT("/families/:family/extensions/:integration", a.approveExtension)
	g.POST("/families/:family/brownouts", a.scheduleBrownout)
	g.GET("/contacts", a.listContacts)
	g.PUT("/contacts/:partner", a.setContact)
	g.GET("/notices", a.listNotices)
	g.GET("/audit", a.listAudit)
	e.NoRoute(func(c *gin.Context) {
		_ = c.Error(problem.Newf(problem.NotFound, "No resource at %s.", problem.Clip(c.Request.URL.Path)))
	})
	return e
}

// authenticate admits the one admin bearer, compared in constant time
// (over digests, so the length does not leak either).
func (a *API) authenticate(c *gin.Context) {
	if a.Token == "" {
		_ = c.Error(problem.New(problem.Forbidden, "The admin API is off: EDGE_ADMIN_TOKEN is not set."))
		c.Abort()
		return
	}
	h := c.Request.Header.Values("Authorization")
	scheme, token, _ := strings.Cut(strings.Join(h, ""), " ")
	if len(h) != 1 || !strings.EqualFold(scheme, "Bearer") || token == "" {
		_ = c.Error(problem.New(problem.Unauthenticated, "Send the admin token as a bearer credential.").WithHeader("WWW-Authenticate", `Bearer realm="compat-edge-admin"`))
		c.Abort()
		return
	}
	got, want := sha256.Sum256([]byte(token)), sha256.Sum256([]byte(a.Token.Reveal()))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		_ = c.Error(problem.New(problem.InvalidCredential, "The admin token is not valid.").WithHeader("WWW-Authenticate", `Bearer realm="compat-edge-admin", error="invalid_token"`))
		c.Abort()
		return
	}
	c.Header("Cache-Control", "no-store")
	c.Next()
}

func (a *API) mapError(err error) *problem.Error {
	var se *store.ShortenedError
	if errors.As(err, &se) {
		return problem.Newf(ExtensionShortened, "The extension of %s in %s is %s; %s would shorten it. Extensions can only be lengthened.",
			problem.Clip(se.Integration), se.Family, se.Current, orNone(se.Requested.String()))
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "withdrawing it"
	}
	return s
}

func invalid(format string, args ...any) *problem.Error {
	return problem.Newf(InvalidCompatChange, format, args...)
}

// actor returns who makes the change, or records the problem.
func actor(c *gin.Context) (string, bool) {
	v := c.GetHeader(ActorHeader)
	if v == "" || len(v) > 200 || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		_ = c.Error(problem.Newf(problem.InvalidRequest, "Name who makes the change in %s (1 to 200 printable characters).", ActorHeader))
		return "", false
	}
	return v, true
}

func family(c *gin.Context) (inventory.Family, bool) {
	f := inventory.Family(c.Param("family"))
	if !f.Valid() {
		_ = c.Error(invalid("Family %q is not v2-filings, v2-cases or website-cases.", problem.Clip(string(f))))
		return "", false
	}
	return f, true
}

// Shapes of the API.
type (
	extensionView struct {
		Integration string `json:"integration"`
		Sunset      string `json:"sunset"`
	}
	spanView struct {
		Start time.Time `json:"start"`
		End   time.Time `json:"end"`
	}
	milestoneView struct {
		Name string    `json:"name"`
		At   time.Time `json:"at"`
	}
	familyView struct {
		Family    inventory.Family `json:"family"`
		GA        string           `json:"generalAvailabilityDate,omitempty"`
		Source    string           `json:"source,omitempty"`
		Invalid   string           `json:"invalidDate,omitempty"`
		Stage     policy.Stage     `json:"stage"`
		WindowEnd string           `json:"windowEnd,omitempty"`
		// IntegrationWindowEnd is the end for the integration asked
		// about, with its extensions.
		IntegrationWindowEnd string          `json:"integrationWindowEnd,omitempty"`
		NextMilestone        *milestoneView  `json:"nextMilestone,omitempty"`
		Brownouts            []spanView      `json:"brownouts"`
		Extensions           []extensionView `json:"extensions"`
	}
	policyView struct {
		Enabled      bool         `json:"enabled"`
		Integrations []string     `json:"integrations,omitempty"`
		Families     []familyView `json:"families"`
	}
)

func toFamilyView(w *policy.Window, ids []string, now time.Time) familyView {
	v := familyView{Family: w.Family, GA: w.GA.String(), Source: w.Source, Invalid: w.Invalid, Stage: w.Stage,
		Brownouts: []spanView{}, Extensions: []extensionView{}}
	for _, b := range w.Brownouts {
		v.Brownouts = append(v.Brownouts, spanView{b.Start, b.End})
	}
	for _, id := range w.SortedExtensions() {
		v.Extensions = append(v.Extensions, extensionView{id, w.Extensions[id].String()})
	}
	if !w.GA.IsZero() {
		v.WindowEnd = w.End(nil).Format(time.DateOnly)
		if len(ids) > 0 {
			v.IntegrationWindowEnd = w.End(ids).Format(time.DateOnly)
		}
		if next, ok := w.NextMilestone(nil, ids, now); ok {
			v.NextMilestone = &milestoneView{string(next.Milestone), next.At}
		}
	}
	return v
}

// getPolicy answers the effective policy, per family; with
// ?integration=<credential or partner id> (repeatable) also that
// integration's window end and next milestone. ?family= narrows it.
func (a *API) getPolicy(c *gin.Context) {
	p := a.Policy()
	ids := c.QueryArray("integration")
	view := policyView{Enabled: p.Enabled, Integrations: ids, Families: []familyView{}}
	only := inventory.Family(c.Query("family"))
	if only != "" && !only.Valid() {
		_ = c.Error(invalid("Family %q is not v2-filings, v2-cases or website-cases.", problem.Clip(string(only))))
		return
	}
	for _, w := range p.Windows() {
		if only == "" || w.Family == only {
			view.Families = append(view.Families, toFamilyView(w, ids, a.Now()))
		}
	}
	c.JSON(http.StatusOK, gin.H{"data": view, "requestId": requestid.Get(c)})
}

type extensionRequest struct {
	Sunset string `json:"sunset"`
}

// approveExtension sets an integration's deadline: later than any already
// approved, never earlier (409 extension_shortened).
func (a *API) approveExtension(c *gin.Context) {
	who, ok := actor(c)
	if !ok {
		return
	}
	f, ok := family(c)
	if !ok {
		return
	}
	integration := c.Param("integration")
	if integration == "" || len(integration) > policy.MaxIntegrationBytes {
		_ = c.Error(invalid("The integration id must be 1 to %d bytes.", policy.MaxIntegrationBytes))
		return
	}
	var req extensionRequest
	if err := httpserver.DecodeJSON(c, &req); err != nil {
		_ = c.Error(err)
		return
	}
	until, err := policy.ParseDate(req.Sunset)
	if err != nil {
		_ = c.Error(invalid("sunset: %s", err))
		return
	}
	if w := a.Policy().Window(f); !w.GA.IsZero() && !until.Time().After(w.End(nil)) {
		_ = c.Error(invalid("sunset %s is not after the window's end, %s: it would extend nothing.", until, w.End(nil).Format(time.DateOnly)))
		return
	}
	if err := a.Store.ApproveExtension(c, f, integration, until); err != nil {
		_ = c.Error(err)
		return
	}
	a.applied(c, who, "extension.approve", string(f)+"/"+integration, req)
}

type brownoutRequest struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// scheduleBrownout adds a brownout: at most 24 hours, after the family's
// window ends (the policy would never act on one inside it).
func (a *API) scheduleBrownout(c *gin.Context) {
	who, ok := actor(c)
	if !ok {
		return
	}
	f, ok := family(c)
	if !ok {
		return
	}
	var req brownoutRequest
	if err := httpserver.DecodeJSON(c, &req); err != nil {
		_ = c.Error(err)
		return
	}
	span := policy.Span{Start: req.Start.UTC(), End: req.End.UTC()}
	w := a.Policy().Window(f)
	switch {
	case !span.End.After(span.Start) || span.End.Sub(span.Start) > policy.MaxBrownout:
		_ = c.Error(invalid("A brownout ends after it starts and lasts at most %s.", policy.MaxBrownout))
		return
	case w.GA.IsZero():
		_ = c.Error(invalid("Family %s has no general availability date, so no window to end.", f))
		return
	case span.Start.Before(w.End(nil)):
		_ = c.Error(invalid("A brownout starts after the window ends (%s).", w.End(nil).Format(time.RFC3339)))
		return
	case !span.End.After(a.Now()):
		_ = c.Error(invalid("The brownout is over already."))
		return
	}
	st, err := a.Store.Load(c, f)
	if err != nil {
		_ = c.Error(err)
		return
	}
	st.Brownouts = append(st.Brownouts, span)
	if err := a.Store.Save(c, f, st); err != nil {
		_ = c.Error(err)
		return
	}
	a.applied(c, who, "brownout.schedule", string(f), spanView(span))
}

type contactRequest struct {
	Email string `json:"email"`
}

// setContact sets the address a partner's notices go to ("" removes it).
func (a *API) setContact(c *gin.Context) {
	who, ok := actor(c)
	if !ok {
		return
	}
	partner := c.Param("partner")
	if partner == "" || len(partner) > policy.MaxIntegrationBytes {
		_ = c.Error(invalid("The partner id must be 1 to %d bytes.", policy.MaxIntegrationBytes))
		return
	}
	var req contactRequest
	if err := httpserver.DecodeJSON(c, &req); err != nil {
		_ = c.Error(err)
		return
	}
	if req.Email != "" && !mail.ValidAddress(req.Email) {
		_ = c.Error(invalid("email %q is not a plain address.", problem.Clip(req.Email)))
		return
	}
	if err := a.Store.SetContact(c, partner, req.Email); err != nil {
		_ = c.Error(err)
		return
	}
	a.applied(c, who, "contact.set", partner, req)
}

// applied audits a change that was made, acts on it here, and answers.
// The change and its audit entry are two writes (the family's key and the
// stream are in different slots): a change whose entry cannot be written
// is answered 500 and logged with everything the entry would have held.
func (a *API) applied(c *gin.Context, who, action, target string, change any) {
	raw, _ := json.Marshal(change)
	entry := store.AuditEntry{Actor: who, At: a.Now().UTC(), Action: action, Target: target, Change: raw}
	if err := a.Store.AppendAudit(c, entry); err != nil {
		a.Logger.Error("compatibility change made but not audited", "actor", who, "action", action, "target", target, "change", string(raw), "err", err)
		_ = c.Error(err)
		return
	}
	a.Logger.Info("compatibility change", "actor", who, "action", action, "target", target, "change", string(raw))
	if a.Refresh != nil {
		if err := a.Refresh(c); err != nil {
			a.Logger.Warn("compatibility change stored; this replica acts on it at the next refresh", "err", err)
		}
	}
	c.JSON(http.StatusOK, gin.H{"data": entry, "requestId": requestid.Get(c)})
}

func (a *API) listContacts(c *gin.Context) {
	m, err := a.Store.Contacts(c)
	if err != nil {
		_ = c.Error(err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"data": m, "requestId": requestid.Get(c)})
}

// listNotices lists every notice recorded (sent, failed, undeliverable,
// possibly sent), optionally of one family and in one state.
func (a *API) listNotices(c *gin.Context) {
	families := inventory.Families
	if f := inventory.Family(c.Query("family")); f != "" {
		if !f.Valid() {
			_ = c.Error(invalid("Family %q is not v2-filings, v2-cases or website-cases.", problem.Clip(string(f))))
			return
		}
		families = []inventory.Family{f}
	}
	state := store.NoticeState(c.Query("state"))
	out := []store.Notice{}
	for _, f := range families {
		ns, err := a.Store.Notices(c, f)
		if err != nil {
			_ = c.Error(err)
			return
		}
		for _, n := range ns {
			if state == "" || n.State == state {
				out = append(out, n)
			}
		}
	}
	c.JSON(http.StatusOK, gin.H{"data": out, "requestId": requestid.Get(c)})
}

// listAudit answers the newest changes first (?count=, 1 to 1000, 100).
func (a *API) listAudit(c *gin.Context) {
	count := int64(100)
	if v := c.Query("count"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > 1000 {
			_ = c.Error(problem.New(problem.InvalidRequest, "count is 1 to 1000."))
			return
		}
		count = n
	}
	entries, err := a.Store.Audit(c, count)
	if err != nil {
		_ = c.Error(err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"data": entries, "requestId": requestid.Get(c)})
}
