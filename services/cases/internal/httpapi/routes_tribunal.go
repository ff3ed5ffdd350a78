package httpapi

import "github.com/gin-gonic/gin"

// Tribunal and award (DESIGN.md, decisions for wave 3): the tribunal's
// evaluation and decision, the reviewer's work, the award and its
// artifacts. Nothing of it is built: every route answers 501. When it is,
// its pure package (internal/tribunal) decides on the case, its use-case
// package stores each act through caseflow.Service.Change, and its
// handlers are registered here in place of the 501s.

// registerTribunal adds the subdomain's routes.
func registerTribunal(r gin.IRouter, k routeKit) {
	registerUnbuilt(r, k, tribunalUnbuilt)
}

// tribunalUnbuilt are the routes of the inventory the tribunal and award
// subdomain will serve.
var tribunalUnbuilt = []UnbuiltRoute{
	{Route: "/api/cases/{id}/ai-configuration-challenges"},
	{Route: "/api/cases/{id}/award"},
	{Route: "/api/cases/{id}/award/artifacts/json/attestation"},
	{Route: "/api/cases/{id}/award/artifacts/{kind}"},
	{Route: "/api/cases/{id}/evaluation"},
	{Route: "/api/cases/{id}/evaluation/accept"},
	{Route: "/api/v2/cases/{caseId}/award"},
	{Route: "/api/v2/cases/{caseId}/award/artifacts/json/attestation"},
	{Route: "/api/v2/cases/{caseId}/award/artifacts/{kind}"},
	{Route: "/api/v2/cases/{caseId}/evaluation"},
	{Route: "/api/v2/cases/{caseId}/evaluation/accept"},
	{Route: "/api/disputes/{id}/ai-configuration-challenges", Website: true},
	{Route: "/api/disputes/{id}/decision", Website: true},
	{Route: "/api/disputes/{id}/additional-award", Website: true},
	{Route: "/api/disputes/{id}/adjudicate", Website: true},
	{Route: "/api/disputes/{id}/correct", Website: true},
	{Route: "/api/disputes/{id}/human-attention/resume", Website: true},
	{Route: "/api/disputes/{id}/override", Website: true},
	{Route: "/api/disputes/{id}/pre-award-review", Website: true},
	{Route: "/api/disputes/{id}/procedural-rulings", Website: true},
	{Route: "/api/disputes/{id}/publication-consent", Website: true},
	{Route: "/api/disputes/{id}/recusal", Website: true},
	{Route: "/api/disputes/{id}/review-package", Website: true},
	{Route: "/api/disputes/{id}/reviewer-attestation", Website: true},
	{Route: "/api/disputes/{id}/reviewer-objection", Website: true},
	{Route: "/api/disputes/{id}/reviewer-opinion", Website: true},
	{Route: "/api/disputes/{id}/reviewer-opinion/file", Website: true},
	{Route: "/api/disputes/{id}/runs", Website: true},
	{Route: "/api/disputes/{id}/sanctions", Website: true},
	{Route: "/api/disputes/{id}/signoff", Website: true},
	{Route: "/api/disputes/{id}/synthesize-opinion", Website: true},
}
