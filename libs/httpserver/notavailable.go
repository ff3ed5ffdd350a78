package httpserver

import (
	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
)

// NotAvailable answers a route of the specification that its owner has not
// built yet: 501 not_available naming route (for example "POST
// /api/v2/fees/processor/checkout"), never a fake success. Every such
// route is listed in docs/not-built.md.
func NotAvailable(route string) gin.HandlerFunc {
	return func(c *gin.Context) {
		_ = c.Error(problem.Newf(problem.NotAvailable, "%s is part of the pcourt API but is not built yet; docs/not-built.md lists what is not.", route))
	}
}
