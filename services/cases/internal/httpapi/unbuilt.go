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

// Unbuilt lists every cases route of the inventory without a handler, in
// the order of docs/cases-routes.md; a test checks the page lists the
// same. It is empty: the cases service serves its whole inventory. A route
// the specification adds joins it until its subdomain serves it. Path
// parameters are named as the built routes of each family name them (Gin
// needs one name per position): {id} on /api/cases and /api/disputes,
// {caseId} on /api/v2/cases.
var Unbuilt []UnbuiltRoute

// registerUnbuilt answers every method on each route with 501, website
// routes in their envelope.
func registerUnbuilt(r gin.IRouter, k routeKit, routes []UnbuiltRoute) {
	for _, u := range routes {
		handlers := []gin.HandlerFunc{notAvailable(u.Route)}
		if u.Website {
			handlers = append([]gin.HandlerFunc{k.website}, handlers...)
		}
		r.Any(u.ginPath(), handlers...)
	}
}

func notAvailable(route string) gin.HandlerFunc {
	return func(c *gin.Context) {
		_ = c.Error(problem.Newf(problem.NotAvailable,
			"%s %s is not available yet: the cases service has not built this route (docs/cases-routes.md lists every such route).",
			problem.Clip(c.Request.Method), route))
	}
}
