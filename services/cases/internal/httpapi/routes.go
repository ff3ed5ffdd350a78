// Package httpapi is the cases service's HTTP surface: the reads and
// commands of an opened case on its three route families (canonical
// /api/cases, partner /api/v2/cases, website /api/disputes), the rules,
// and a 501 for every route of the inventory not built yet.
package httpapi

import (
	"log/slog"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/cases/internal/afterawardflow"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/evidenceflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/settlementflow"
	"github.com/pcourt/pcourt/services/cases/internal/store"
	"github.com/pcourt/pcourt/services/cases/internal/tribunalflow"
)

// Deps are what the handlers need.
type Deps struct {
	Credentials *auth.Store
	Cases       *store.Cases
	Flow        *caseflow.Service
	Journal     *idempotency.Journal
	Logger      *slog.Logger
	// Tribunal decides the decision's acts; AwardKeys publishes the keys
	// that sign awards.
	Tribunal  *tribunalflow.Service
	AwardKeys KeySet
	// Evidence takes in exhibits and applies the evidence's acts.
	Evidence *evidenceflow.Service
	// Signer signs record bundles' manifests with the award keys.
	Signer Signer
	// AfterAward applies the acts after the award and runs executions.
	AfterAward *afterawardflow.Service
	// PublicBase is the public origin the appeal fee's 402 challenge
	// names its resource with.
	PublicBase x402.PublicBase
	// Settlement applies the settlement binding's acts.
	Settlement *settlementflow.Service
}

type handlers struct {
	credentials *auth.Store
	cases       *store.Cases
	flow        *caseflow.Service
	tribunal    *tribunalflow.Service
	evidence    *evidenceflow.Service
	afterAward  *afterawardflow.Service
	publicBase  x402.PublicBase
	settlement  *settlementflow.Service
	signer      Signer
	keys        KeySet
	logger      *slog.Logger
}

// routeKit is the service's shared middleware, from which every
// subdomain's file registers its own routes: the credential check, the
// website envelope, and the idempotency journal of a command.
type routeKit struct {
	authenticated gin.HandlerFunc
	// withAccounts authenticates partner credentials and also account
	// tokens for the API (docs/accounts.md), on the routes an account acts
	// on; each such route names the scope it needs (reads, acts,
	// filesEvidence, reportsExecutions), which a partner credential
	// passes.
	withAccounts gin.HandlerFunc
	// websiteAccounts is withAccounts on the website routes
	// (/api/disputes/…), which also take a person's account session from
	// its cookie, with the site's same-origin check on every mutation and
	// private answers (auth.AcceptAccountSessions), on the routes whose
	// canonical twins take account tokens.
	websiteAccounts                               gin.HandlerFunc
	reads, acts, filesEvidence, reportsExecutions gin.HandlerFunc
	website                                       gin.HandlerFunc
	// command journals an act under op; a replay is answered only to a
	// caller that still has authority over side.
	command func(op string, side procedure.Side) gin.HandlerFunc
}

// Register adds the service's routes, one subdomain at a time. Each
// subdomain registers its routes (built, or 501 until built) from its own
// file, so none of them grows a hub: routes_case.go (the case and its
// procedure), routes_tribunal.go (tribunal and award), routes_evidence.go
// (evidence), exports.go (evidence-export notifications),
// routes_afteraward.go (appeals, executions), routes_settlement.go
// (settlement binding).
func Register(r *gin.Engine, d Deps) {
	h := &handlers{credentials: d.Credentials, cases: d.Cases, flow: d.Flow, tribunal: d.Tribunal, evidence: d.Evidence, afterAward: d.AfterAward, publicBase: d.PublicBase, settlement: d.Settlement, signer: d.Signer, keys: d.AwardKeys, logger: d.Logger}

	// The site whose pages send account sessions: the public base URL,
	// as the hosted respondent page's (cmd/cases checked it parses).
	site, _ := webpage.NewSite(d.PublicBase.String(), false)
	k := routeKit{
		authenticated:     auth.Middleware(d.Credentials),
		withAccounts:      auth.Middleware(d.Credentials, auth.AcceptAccountTokens(d.PublicBase.String())),
		websiteAccounts:   auth.Middleware(d.Credentials, auth.AcceptAccountTokens(d.PublicBase.String()), auth.AcceptAccountSessions(site.SameOrigin)),
		reads:             auth.RequireScope(auth.ScopeCasesRead),
		acts:              auth.RequireScope(auth.ScopeCasesAct),
		filesEvidence:     auth.RequireScope(auth.ScopeEvidenceFile),
		reportsExecutions: auth.RequireScope(auth.ScopeExecutionsReport),
		website:           websiteEnvelope(),
		command: func(op string, side procedure.Side) gin.HandlerFunc {
			recheck := idempotency.RecheckBeforeReplay(h.recheck(side))
			return func(c *gin.Context) {
				// The journal fingerprints the operation and the body, not
				// the path: naming the case and what in it the path names
				// (a submission, a request, an exhibit, a challenge, a
				// defect report) in the operation makes a key reused on
				// another of them a different request (422), while the
				// aliases of one act still share it.
				// (The evidence's ids are appended only where the path has
				// them, so the earlier routes' operations read as before
				// and a retry across a deployment still matches.)
				target := []string{op, caseID(c), c.Param("submissionId"), c.Param("requestId")}
				for _, p := range []string{"evidenceId", "sourceId", "challengeId", "reportId"} {
					if id := c.Param(p); id != "" {
						target = append(target, p+"="+id)
					}
				}
				if h.refuseArchived(c) {
					return
				}
				d.Journal.Middleware(strings.Join(target, " "), recheck)(c)
			}
		},
	}
	h.registerCase(r, k)
	h.registerTribunal(r, k)
	h.registerEvidence(r, k)
	h.registerExports(r, k)
	h.registerAfterAward(r, k)
	h.registerSettlement(r, k)
	registerRestricted(r, k)
	registerUnbuilt(r, k, Unbuilt)
	// The hosted respondent page (/respond/...) is internal/respond's.
}

// refuseArchived answers a command on an archived case (docs/archiving.md)
// before anything is journalled or decided: 409 case_archived to a caller
// who may see the case, and to anyone else the 404 of a case it cannot
// see, exactly as for a live case. It reports whether it answered. The
// use cases refuse an archived case too (caseflow: store.ErrArchived);
// this answers it first, ahead of any refusal a handler would derive from
// the closed case's state.
func (h *handlers) refuseArchived(c *gin.Context) bool {
	id := caseID(c)
	if id == "" {
		return false
	}
	_, archived, err := h.cases.ArchivedCase(c.Request.Context(), id)
	if err == nil && !archived {
		return false
	}
	if err == nil {
		_, _, err = h.load(c, id)
	}
	if err == nil {
		err = store.ErrArchived
	}
	_ = c.Error(err)
	c.Abort()
	return true
}

// caseID is the case named in the path, whatever the family calls it.
func caseID(c *gin.Context) string {
	if id := c.Param("id"); id != "" {
		return id
	}
	return c.Param("caseId")
}
