// Package httpapi is the filings service's HTTP surface: routes, JSON shapes
// and the mapping of domain errors to problems.
package httpapi

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
	"github.com/pcourt/pcourt/services/filings/internal/filing"
)

// Deps are what the handlers need.
type Deps struct {
	Credentials *auth.Store
	Journal     *idempotency.Journal
	Rules       draft.Rules
	// PublicBase is the public origin of the API, the only source of a
	// fee's x402 resource URL.
	PublicBase x402.PublicBase
	// Filings reads and changes drafts and pays fees; its clock is the
	// handlers' clock.
	Filings *filing.Service
	Logger  *slog.Logger
}

type handlers struct {
	credentials *auth.Store
	filings     *filing.Service
	rules       draft.Rules
	publicBase  x402.PublicBase
	logger      *slog.Logger
	now         func() time.Time
}

func newHandlers(d Deps) *handlers {
	return &handlers{
		credentials: d.Credentials, filings: d.Filings, rules: d.Rules, publicBase: d.PublicBase,
		logger: d.Logger, now: d.Filings.Now,
	}
}

// The idempotency operations. The v2 and canonical routes of one act share
// an operation, and so one journal: a retry may cross between them, and is
// answered in the view of the route it arrives on.
const (
	opPrepare       = "prepareCaseDraft"
	opConfirm       = "confirmCaseDraft"
	opLegacyPrepare = "prepareFilingLegacy"
	opLegacyConfirm = "confirmFilingLegacy"
	opConsent       = "recordConsent"
	opGrant         = "grantAuthority"
	opRevokeGrant   = "revokeAuthority"
	opCheckout      = "checkoutFee"
	opCardCheckout  = "cardCheckoutFee"
)

// Register adds the service's routes.
func Register(r *gin.Engine, d Deps) {
	h := newHandlers(d)
	authenticated := auth.Middleware(d.Credentials)
	preparer := auth.RequireRole(auth.RolePlatformOrchestrator, auth.RoleClaimantAgent)
	recheck := idempotency.RecheckBeforeReplay(h.recheckConfirmation)
	// A replay answers in the view of the route it arrives on.
	view := func(route draft.Route) idempotency.Option { return idempotency.RenderOnReplay(h.renderReplay(route)) }

	r.GET("/api/v2/integration", authenticated, getIntegration)

	// The draft routes also take account tokens for the API
	// (docs/accounts.md): a verified agent's account prepares a draft for
	// itself with cases:act, reads the drafts it takes part in with
	// cases:read and confirms its own participant with cases:act.
	withAccounts := auth.Middleware(d.Credentials, auth.AcceptAccountTokens(d.PublicBase.String()))
	accountPreparer := auth.RequireRoleOrScope(auth.ScopeCasesAct, auth.RolePlatformOrchestrator, auth.RoleClaimantAgent)
	reads, acts := auth.RequireScope(auth.ScopeCasesRead), auth.RequireScope(auth.ScopeCasesAct)
	for _, family := range []struct {
		prefix string
		route  draft.Route
	}{{"/api/v2/case-drafts", draft.RouteV2}, {"/api/filings", draft.RouteCanonical}} {
		r.POST(family.prefix, withAccounts, accountPreparer, d.Journal.Middleware(opPrepare, view(family.route)), h.prepare(family.route))
		r.GET(family.prefix+"/:id", withAccounts, reads, h.read(family.route))
		r.POST(family.prefix+"/:id/confirmations", withAccounts, acts, d.Journal.Middleware(opConfirm, recheck, view(family.route)), h.confirm(family.route))
	}

	orchestrator := auth.RequireRole(auth.RolePlatformOrchestrator)
	for _, prefix := range []string{"/api/v2/authorizations", "/api/authorizations"} {
		route := draft.RouteV2
		if prefix == "/api/authorizations" {
			route = draft.RouteCanonical
		}
		r.POST(prefix+"/consents", authenticated, orchestrator, d.Journal.Middleware(opConsent, view(route)), h.recordConsent(route))
		r.GET(prefix+"/authority-grants", authenticated, orchestrator, h.listAuthority)
		r.POST(prefix+"/authority-grants", authenticated, orchestrator, d.Journal.Middleware(opGrant), h.grantAuthority)
		r.DELETE(prefix+"/authority-grants", authenticated, orchestrator, d.Journal.Middleware(opRevokeGrant), h.revokeAuthority)
	}

	// Agent commerce: a draft prepared from AP2 or UCP objects, confirmed
	// on the v2 draft routes (agentcommerce.go).
	r.POST("/api/v2/ap2/resolution-requests", authenticated, preparer, d.Journal.Middleware(opAP2Resolution, view(draft.RouteV2)), h.ap2Resolution)
	r.POST("/api/v2/ucp/resolution-requests", authenticated, preparer, d.Journal.Middleware(opUCPResolution, view(draft.RouteV2)), h.ucpResolution)

	r.GET("/api/fees/:feeId", authenticated, h.getFee)
	r.POST("/api/fees/:feeId/checkout", authenticated, d.Journal.Middleware(opCheckout), h.checkout)
	// The card checkout alias keeps its own journal (the spec guarantees
	// no replay across routes here).
	r.POST("/api/v2/fees/processor/checkout", authenticated, d.Journal.Middleware(opCardCheckout), h.cardCheckout)
	r.POST("/api/fees/:feeId/x402", authenticated, h.payFee)
	r.POST("/api/v2/fees/quote", authenticated, h.quoteFee)

	// Routes of the specification filings has not built: 501 naming them
	// (docs/not-built.md), never a fake success.
	for _, route := range []struct{ method, path string }{
		{http.MethodGet, "/api/v2/fee-referrals"},
		{http.MethodPost, "/api/v2/fee-referrals"},
		{http.MethodGet, "/api/v2/sponsorship-referrals"},
		{http.MethodPost, "/api/v2/sponsorship-referrals"},
	} {
		r.Handle(route.method, route.path, httpserver.NotAvailable(route.method+" "+route.path))
	}

	// The earlier prepare/confirm pair: drafts prepared here finish here.
	r.POST("/api/v2/filings/prepare", authenticated, preparer, d.Journal.Middleware(opLegacyPrepare, view(draft.RouteLegacy)), h.prepare(draft.RouteLegacy))
	r.POST("/api/v2/filings/:id/confirm", authenticated, d.Journal.Middleware(opLegacyConfirm, recheck, view(draft.RouteLegacy)), h.confirm(draft.RouteLegacy))
}
