package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
)

// OperatorOnly answers a website control the design keeps to the
// platform's operators.
var OperatorOnly = problem.Code{Name: "operator_only", Status: http.StatusForbidden, Title: "Operator only"}

// RestrictedRoute is a website control of the spec's inventory that stays
// restricted (spec, "restricted controls stay restricted"): it acts on a
// case beyond what either side may do alone, so no partner, agent or
// tribunal credential uses it. Every method answers, after the credential
// is checked, 403 operator_only naming the route and what a partner does
// instead.
type RestrictedRoute struct {
	// Route is the path as the spec writes it, {param} style.
	Route string
	// Instead is what a partner does instead, said in the answer.
	Instead string
}

// Restricted lists the restricted controls, in the order of
// docs/cases-routes.md ("Restricted controls"), which a test keeps equal.
var Restricted = []RestrictedRoute{
	{Route: "/api/disputes/{id}/audit", Instead: "The parties' audit trail of a case is its docket: GET /api/disputes/{id}/docket."},
	{Route: "/api/disputes/{id}/exchange", Instead: "An exhibit reaches the other side when the offering side discloses it: POST /api/cases/{id}/evidence/{evidenceId}/disclosure."},
	{Route: "/api/disputes/{id}/funding", Instead: "The platform holds no escrow for a partner: an award is carried out, once final, by an execution on its rail (POST /api/cases/{id}/executions)."},
	{Route: "/api/disputes/{id}/publication-consent", Instead: "Awards are private to the case's sides and tribunal and nothing is published; a side may share its own award, which anyone verifies with GET /api/awards/keys."},
	{Route: "/api/disputes/{id}/refiling", Instead: "A new dispute is a new draft: POST /api/v2/filings/prepare."},
	{Route: "/api/disputes/{id}/release", Instead: "An award is carried out, once final, by an execution on its rail: POST /api/cases/{id}/executions."},
	{Route: "/api/disputes/{id}/reopen", Instead: "A closed case stays closed; after an award, a side files a post-award request or an appeal where the rules allow one."},
	{Route: "/api/disputes/{id}/sanctions", Instead: "A side raises the other's conduct with the tribunal in a message or a submission."},
	{Route: "/api/disputes/{id}/service", Instead: "The claimant serves the respondent with its invitation: POST /api/disputes/{id}/invite."},
	{Route: "/api/disputes/{id}/testimony-session", Instead: "Testimony is filed in writing, as a submission in an evidence round: POST /api/cases/{id}/submissions."},
}

// registerRestricted answers every method on each restricted control with
// 403 operator_only in the website envelope, once the credential is
// known (a missing or bad one is 401, as on every route).
func registerRestricted(r gin.IRouter, k routeKit) {
	for _, rr := range Restricted {
		u := UnbuiltRoute{Route: rr.Route}
		r.Any(u.ginPath(), k.website, k.authenticated, operatorOnly(rr))
	}
}

func operatorOnly(rr RestrictedRoute) gin.HandlerFunc {
	return func(c *gin.Context) {
		_ = c.Error(problem.Newf(OperatorOnly, "%s %s is restricted to the platform's operators: no partner, agent or tribunal credential may use it. %s",
			problem.Clip(c.Request.Method), rr.Route, rr.Instead))
	}
}
