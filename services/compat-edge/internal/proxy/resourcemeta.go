package proxy

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
)

// ProtectedResourcePath is where the edge publishes the API's OAuth 2.0
// protected resource metadata (RFC 9728): the resource identifier that
// account tokens name as their audience, the authorization server that
// issues them (the accounts service, behind the same public address) and
// the scopes the API takes. An MCP client or an agent's OAuth library
// finds the authorization server from here.
const ProtectedResourcePath = "/.well-known/oauth-protected-resource"

// RegisterResourceMetadata serves the metadata for the API at publicURL,
// the edge's public address (EDGE_PUBLIC_URL). That address is the
// resource identifier, the audience of the account tokens the API takes
// and the accounts service's issuer: the chart gives the edge and every
// service's PUBLIC_BASE_URL the one public URL. Without a public URL
// there is no absolute resource identifier to state, and the path stays
// an unknown one (404).
func RegisterResourceMetadata(r *gin.Engine, publicURL string) error {
	if publicURL == "" {
		return nil
	}
	meta := auth.NewProtectedResource(publicURL, publicURL, "pcourt API")
	meta.ResourceDocumentation = publicURL + "/openapi.json"
	body, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	r.GET(ProtectedResourcePath, func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=300")
		c.Data(http.StatusOK, "application/json", body)
	})
	return nil
}
