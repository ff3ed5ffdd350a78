package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/webhook/signature"
)

// KeySource is where the published verification keys come from.
type KeySource interface {
	Published(env signature.Environment, now time.Time) []signature.JWK
}

// keys serves GET /api/webhooks/keys: the JWKS of both environments, or of
// the one ?environment= names. It is public and cacheable: a new key is
// published long before it signs (keys.Config.LeadTime).
func (h *handlers) keys(c *gin.Context) {
	env := signature.Environment(c.Query("environment"))
	if _, given := c.GetQuery("environment"); given && !env.Valid() {
		problem.Write(c, problem.New(InvalidQuery, "environment must be live or sandbox."))
		return
	}
	set := signature.JWKS{Keys: h.Keys.Published(env, h.Now())}
	if set.Keys == nil {
		set.Keys = []signature.JWK{}
	}
	c.Header("Cache-Control", "public, max-age=300")
	c.JSON(http.StatusOK, set)
}
