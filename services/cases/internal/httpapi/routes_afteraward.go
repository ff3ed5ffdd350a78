package httpapi

import "github.com/gin-gonic/gin"

// After the award (DESIGN.md, decisions for wave 3): appeals, post-award
// requests, settlement binding and executions (reopening is an operator's,
// restricted.go). Nothing of it is
// built: every route answers 501. When it is, its pure package
// (internal/afteraward) decides on the case, its use-case package stores
// each act through caseflow.Service.Change, and its handlers are
// registered here in place of the 501s.

// registerAfterAward adds the subdomain's routes.
func registerAfterAward(r gin.IRouter, k routeKit) {
	registerUnbuilt(r, k, afterAwardUnbuilt)
}

// afterAwardUnbuilt are the routes of the inventory the after-the-award
// subdomain will serve.
var afterAwardUnbuilt = []UnbuiltRoute{
	{Route: "/api/cases/{id}/appeals"},
	{Route: "/api/cases/{id}/appeals/{appealId}/answers"},
	{Route: "/api/cases/{id}/post-award-requests"},
	{Route: "/api/cases/{id}/settlement-binding"},
	{Route: "/api/cases/{id}/settlement-executions"},
	{Route: "/api/cases/{id}/executions"},
	{Route: "/api/executions/{id}"},
	{Route: "/api/v2/cases/{caseId}/settlement-binding"},
	{Route: "/api/v2/cases/{caseId}/settlement-executions"},
	{Route: "/api/disputes/{id}/appeal", Website: true},
	{Route: "/api/disputes/{id}/appeal/answer", Website: true},
	{Route: "/api/disputes/{id}/post-award-request", Website: true},
	{Route: "/api/disputes/{id}/settlement-executions", Website: true},
	{Route: "/api/disputes/{id}/appeal/close-briefing", Website: true},
	{Route: "/api/disputes/{id}/appeal/confirm-fee", Website: true},
	{Route: "/api/disputes/{id}/appeal/decide", Website: true},
	{Route: "/api/disputes/{id}/settle", Website: true},
}
