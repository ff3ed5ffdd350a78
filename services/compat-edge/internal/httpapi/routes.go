package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// Register adds the edge's routes: the API document and the proxy for every
// /api path.
func Register(r *gin.Engine, proxy *Proxy, openAPIJSON []byte) {
	r.GET("/openapi.json", func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=300")
		c.Data(http.StatusOK, "application/json", openAPIJSON)
	})
	r.Any("/api/*path", proxy.Handle)
}
