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
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
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
