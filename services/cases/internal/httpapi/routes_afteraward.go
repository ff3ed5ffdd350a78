package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
)

// After the award (internal/afteraward, acted on through afterawardflow):
// post-award requests and their decision, the waiver of recourse,
// finality, appeals, and executions with the historical
// settlement-executions alias. docs/after-award.md describes each route;
// settlement binding has its own file (routes_settlement.go).

// The idempotency operations of the after-award commands.
const (
	opPostAwardRequest = "filePostAwardRequest"
	opDecideRequest    = "decidePostAwardRequest"
	opWaive            = "waivePostAwardRecourse"
	opExecute          = "executeAward"
)

// registerAfterAward adds the subdomain's routes.
func (h *handlers) registerAfterAward(r gin.IRouter, k routeKit) {
	side := func(op string) gin.HandlerFunc { return k.command(op, anySide) }
	member := side
	ok, created := http.StatusOK, http.StatusCreated
	file := h.afterAwardSideAct(created, readPostAwardRequest)
	execute := h.executionCommand(readExecution, renderExecution)
	settlement := h.executionCommand(readSettlementExecution, renderSettlementExecution)

	r.GET("/api/cases/:id/post-award-requests", k.authenticated, h.getPostAward)
	r.POST("/api/cases/:id/post-award-requests", k.authenticated, side(opPostAwardRequest), file)
	r.PATCH("/api/cases/:id/post-award-requests", k.authenticated, member(opDecideRequest), h.decideRequest)
	r.GET("/api/cases/:id/executions", k.withAccounts, k.reads, h.listExecutions)
	r.POST("/api/cases/:id/executions", k.withAccounts, k.reportsExecutions, side(opExecute), execute)
	r.GET("/api/executions/:executionId", k.authenticated, h.getExecution)
	for _, path := range []string{"/api/cases/:id/settlement-executions", "/api/v2/cases/:caseId/settlement-executions"} {
		r.GET(path, k.authenticated, h.listSettlementExecutions)
		r.POST(path, k.authenticated, side(opExecute), settlement)
	}

	r.GET("/api/cases/:id/appeals", k.authenticated, h.listAppeals)
	r.POST("/api/cases/:id/appeals", k.authenticated, side(opFileAppeal), h.fileAppeal)
	r.POST("/api/cases/:id/appeals/:appealId/answers", k.authenticated, side(opAnswerAppeal), h.answerAppeal)
	// The fee's x402 resource takes no Idempotency-Key: the signed
	// payment is the operation's identity, and the settlement journal
	// replays it.
	r.POST("/api/cases/:id/appeals/:appealId/fee", k.authenticated, h.payAppealFee)

	w := func(path string) string { return "/api/disputes/:id/" + path }
	r.GET(w("appeal"), k.website, k.authenticated, h.listAppeals)
	r.POST(w("appeal"), k.website, k.authenticated, side(opFileAppeal), h.fileAppeal)
	r.POST(w("appeal/answer"), k.website, k.authenticated, side(opAnswerAppeal), h.answerAppeal)
	r.POST(w("appeal/close-briefing"), k.website, k.authenticated, member(opCloseBriefing), h.closeBriefing)
	r.GET(w("appeal/confirm-fee"), k.website, k.authenticated, h.appealFeeStatus)
	r.POST(w("appeal/confirm-fee"), k.website, k.authenticated, h.appealFeeStatus)
	r.POST(w("appeal/decide"), k.website, k.authenticated, member(opDecideAppeal), h.decideAppeal)
	r.POST(w("post-award-request"), k.website, k.authenticated, side(opPostAwardRequest), file)
	r.POST(w("correct"), k.website, k.authenticated, side(opPostAwardRequest+"Correction"), h.afterAwardSideAct(created, readRequestOfKind(afteraward.Correction)))
	r.POST(w("additional-award"), k.website, k.authenticated, side(opPostAwardRequest+"AdditionalAward"), h.afterAwardSideAct(created, readRequestOfKind(afteraward.AdditionalAward)))
	// An account consents for its side (cases:act); its other acts after
	// the award are requests, appeals and settlements, which it does not
	// take yet.
	r.POST(w("consent"), k.website, k.websiteAccounts, k.acts, side(opWaive), h.afterAwardSideAct(ok, readWaiver))
	r.GET(w("settlement-executions"), k.website, k.authenticated, h.listSettlementExecutions)
	r.POST(w("settlement-executions"), k.website, k.authenticated, side(opExecute), settlement)
}
