package httpapi

import "github.com/gin-gonic/gin"

// Settlement binding (internal/settlement, acted on through
// settlementflow): the sides' proposals of terms and their exact
// acceptance, and the reviewer's record of the agreement as a consent
// award. docs/settlement.md describes each route.

// opSettlement is the idempotency operation of every settlement act, on
// all three routes: one journal, so a retry may cross route families.
const opSettlement = "bindSettlement"

// registerSettlement adds the subdomain's routes.
func (h *handlers) registerSettlement(r gin.IRouter, k routeKit) {
	act := k.command(opSettlement, anySide)
	for _, path := range []string{"/api/cases/:id/settlement-binding", "/api/v2/cases/:caseId/settlement-binding"} {
		r.GET(path, k.authenticated, h.getSettlement)
		r.POST(path, k.authenticated, act, h.settlementAct)
	}
	r.POST("/api/disputes/:id/settle", k.website, k.authenticated, act, h.settlementAct)
}
