package httpapi

import "github.com/gin-gonic/gin"

// Evidence (DESIGN.md, decisions for wave 3): evidence filed and
// processed, authenticity challenges, the record bundle, exchanges,
// testimony and evidence exports. Nothing of it is built: every route
// answers 501. When it is, its pure package (internal/evidence) decides on
// the case, its use-case package stores each act through
// caseflow.Service.Change, and its handlers are registered here in place
// of the 501s.

// registerEvidence adds the subdomain's routes.
func registerEvidence(r gin.IRouter, k routeKit) {
	registerUnbuilt(r, k, evidenceUnbuilt)
}

// evidenceUnbuilt are the routes of the inventory the evidence subdomain
// will serve.
var evidenceUnbuilt = []UnbuiltRoute{
	{Route: "/api/cases/{id}/evidence-processing"},
	{Route: "/api/cases/{id}/evidence-processing/{sourceId}/defects"},
	{Route: "/api/cases/{id}/evidence"},
	{Route: "/api/cases/{id}/evidence/{evidenceId}"},
	{Route: "/api/cases/{id}/evidence/{evidenceId}/authenticity-challenges"},
	{Route: "/api/cases/{id}/record-bundle"},
	{Route: "/api/v2/cases/{caseId}/evidence/{evidenceId}/authenticity-challenges"},
	{Route: "/api/v2/cases/{caseId}/record-bundle"},
	{Route: "/api/v2/cases/{caseId}/evidence-candidates"},
	{Route: "/api/disputes/{id}/evidence-processing", Website: true},
	{Route: "/api/disputes/{id}/evidence-processing/{sourceId}/defects", Website: true},
	{Route: "/api/disputes/{id}/evidence/{evidenceId}/challenge", Website: true},
	{Route: "/api/disputes/{id}/record-bundle", Website: true},
	{Route: "/api/disputes/{id}/evidence-processing/{sourceId}/defects/{reportId}/resolve", Website: true},
	{Route: "/api/disputes/{id}/evidence/file", Website: true},
	{Route: "/api/disputes/{id}/evidence/{evidenceId}/challenge/resolve", Website: true},
	{Route: "/api/disputes/{id}/exchange", Website: true},
	{Route: "/api/disputes/{id}/testimony-session", Website: true},
	{Route: "/api/v2/evidence-exports/notifications"},
	{Route: "/api/v2/evidence-exports/receipts/{eventId}"},
}
