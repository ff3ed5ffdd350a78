package httpapi

import (
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
)

// UnbuiltRoute is a route of the spec's inventory owned by the cases
// service that it does not serve yet. Every method on it answers 501
// not_available naming the route, never 404 and never a fake success.
type UnbuiltRoute struct {
	// Route is the path as the spec writes it, {param} style.
	Route string
	// Website routes answer in the website envelope.
	Website bool
}

// ginPath is the route with Gin's :param segments.
func (u UnbuiltRoute) ginPath() string {
	segs := strings.Split(u.Route, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = ":" + s[1:len(s)-1]
		}
	}
	return strings.Join(segs, "/")
}

func notAvailable(route string) gin.HandlerFunc {
	return func(c *gin.Context) {
		problem.Write(c, problem.Newf(problem.NotAvailable,
			"%s %s is not available yet: the cases service has not built this route (docs/cases-routes.md lists every such route).",
			problem.Clip(c.Request.Method), route))
	}
}

// Unbuilt lists every cases route of the inventory without a handler, in
// the order of docs/cases-routes.md; a test checks the page lists the same.
// Path parameters are named as the built routes of each family name them
// (Gin needs one name per position): {id} on /api/cases and /api/disputes,
// {caseId} on /api/v2/cases.
var Unbuilt = append(append(append(canonicalUnbuilt, v2Unbuilt...), websiteUnbuilt...), otherUnbuilt...)

var canonicalUnbuilt = []UnbuiltRoute{
	{Route: "/api/cases/{id}/ai-configuration-challenges"},
	{Route: "/api/cases/{id}/appeals"},
	{Route: "/api/cases/{id}/appeals/{appealId}/answers"},
	{Route: "/api/cases/{id}/award"},
	{Route: "/api/cases/{id}/award/artifacts/json/attestation"},
	{Route: "/api/cases/{id}/award/artifacts/{kind}"},
	{Route: "/api/cases/{id}/evidence-processing"},
	{Route: "/api/cases/{id}/evidence-processing/{sourceId}/defects"},
	{Route: "/api/cases/{id}/evidence"},
	{Route: "/api/cases/{id}/evidence/{evidenceId}"},
	{Route: "/api/cases/{id}/evidence/{evidenceId}/authenticity-challenges"},
	{Route: "/api/cases/{id}/post-award-requests"},
	{Route: "/api/cases/{id}/record-bundle"},
	{Route: "/api/cases/{id}/representatives"},
	{Route: "/api/cases/{id}/record-summary/corrections"},
	{Route: "/api/cases/{id}/evaluation"},
	{Route: "/api/cases/{id}/evaluation/accept"},
	{Route: "/api/cases/{id}/settlement-binding"},
	{Route: "/api/cases/{id}/settlement-executions"},
	{Route: "/api/cases/{id}/executions"},
	{Route: "/api/executions/{id}"},
}

var v2Unbuilt = []UnbuiltRoute{
	{Route: "/api/v2/cases/{caseId}/award"},
	{Route: "/api/v2/cases/{caseId}/award/artifacts/json/attestation"},
	{Route: "/api/v2/cases/{caseId}/award/artifacts/{kind}"},
	{Route: "/api/v2/cases/{caseId}/evidence/{evidenceId}/authenticity-challenges"},
	{Route: "/api/v2/cases/{caseId}/record-bundle"},
	{Route: "/api/v2/cases/{caseId}/evaluation"},
	{Route: "/api/v2/cases/{caseId}/evaluation/accept"},
	{Route: "/api/v2/cases/{caseId}/evidence-candidates"},
	{Route: "/api/v2/cases/{caseId}/settlement-binding"},
	{Route: "/api/v2/cases/{caseId}/settlement-executions"},
	{Route: "/api/v2/cases/{caseId}/restatement"},
}

var websiteUnbuilt = website(
	"/api/disputes",
	"/api/disputes/{id}/ai-configuration-challenges",
	"/api/disputes/{id}/appeal",
	"/api/disputes/{id}/appeal/answer",
	"/api/disputes/{id}/decision",
	"/api/disputes/{id}/evidence-processing",
	"/api/disputes/{id}/evidence-processing/{sourceId}/defects",
	"/api/disputes/{id}/evidence/{evidenceId}/challenge",
	"/api/disputes/{id}/post-award-request",
	"/api/disputes/{id}/record-bundle",
	"/api/disputes/{id}/representatives",
	"/api/disputes/{id}/restatement",
	"/api/disputes/{id}/settlement-executions",
	"/api/disputes/{id}/additional-award",
	"/api/disputes/{id}/adjudicate",
	"/api/disputes/{id}/appeal/close-briefing",
	"/api/disputes/{id}/appeal/confirm-fee",
	"/api/disputes/{id}/appeal/decide",
	"/api/disputes/{id}/audit",
	"/api/disputes/{id}/consent",
	"/api/disputes/{id}/correct",
	"/api/disputes/{id}/evidence-processing/{sourceId}/defects/{reportId}/resolve",
	"/api/disputes/{id}/evidence/file",
	"/api/disputes/{id}/evidence/{evidenceId}/challenge/resolve",
	"/api/disputes/{id}/exchange",
	"/api/disputes/{id}/funding",
	"/api/disputes/{id}/human-attention/resume",
	"/api/disputes/{id}/override",
	"/api/disputes/{id}/pre-award-review",
	"/api/disputes/{id}/procedural-rulings",
	"/api/disputes/{id}/publication-consent",
	"/api/disputes/{id}/recusal",
	"/api/disputes/{id}/refiling",
	"/api/disputes/{id}/release",
	"/api/disputes/{id}/reopen",
	"/api/disputes/{id}/restatement/generate",
	"/api/disputes/{id}/review-package",
	"/api/disputes/{id}/reviewer-attestation",
	"/api/disputes/{id}/reviewer-objection",
	"/api/disputes/{id}/reviewer-opinion",
	"/api/disputes/{id}/reviewer-opinion/file",
	"/api/disputes/{id}/runs",
	"/api/disputes/{id}/sanctions",
	"/api/disputes/{id}/service",
	"/api/disputes/{id}/settle",
	"/api/disputes/{id}/signoff",
	"/api/disputes/{id}/synthesize-opinion",
	"/api/disputes/{id}/termination",
	"/api/disputes/{id}/testimony-session",
)

var otherUnbuilt = []UnbuiltRoute{
	{Route: "/api/v2/ap2/resolution-requests"},
	{Route: "/api/v2/ap2/resolution-results/{caseId}"},
	{Route: "/api/v2/ucp/resolution-requests"},
	{Route: "/api/v2/ucp/resolution-results/{caseId}"},
	{Route: "/api/v2/evidence-exports/notifications"},
	{Route: "/api/v2/evidence-exports/receipts/{eventId}"},
}

func website(routes ...string) []UnbuiltRoute {
	out := make([]UnbuiltRoute, len(routes))
	for i, r := range routes {
		out[i] = UnbuiltRoute{Route: r, Website: true}
	}
	return out
}
