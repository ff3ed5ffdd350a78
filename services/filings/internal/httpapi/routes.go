// Package httpapi is the filings service's HTTP surface: routes, JSON shapes
// and the mapping of domain errors to problems.
package httpapi

import (
	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
)

// Deps are what the handlers need.
type Deps struct {
	Credentials *auth.Store
}

// Register adds the service's routes.
func Register(r *gin.Engine, d Deps) {
	authenticated := auth.Middleware(d.Credentials)
	r.GET("/api/v2/integration", authenticated, getIntegration)
}
