// Package httpapi is the MCP server's HTTP surface: the streamable HTTP
// transport at /mcp, behind the account token check every service makes
// (libs/auth: the token's audience must be this server), and the server's
// protected resource metadata (RFC 9728), where an MCP client refused
// there finds the authorization server.
package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/mcp/internal/resources"
	"github.com/pcourt/pcourt/services/mcp/internal/tools"
)

// Path is where the MCP server is served; its resource identifier is the
// public URL of this path.
const Path = "/mcp"

// MetadataPath is where its protected resource metadata is published:
// RFC 9728's well-known prefix inserted before the resource's path.
const MetadataPath = "/.well-known/oauth-protected-resource" + Path

// Config is the server's identity.
type Config struct {
	// Resource is the MCP server's resource identifier, the audience of
	// the tokens it takes: the public base URL and Path.
	Resource string
	// MetadataURL is the public URL of MetadataPath.
	MetadataURL string
	// AuthorizationServer is the issuer of the accounts service.
	AuthorizationServer string
}

// Deps are what the routes use.
type Deps struct {
	Credentials *auth.Store
	Server      *mcp.Server
	// Subscriptions holds the listen streams of this replica; each is
	// served by its own MCP server, every other request by Server.
	Subscriptions *resources.Hub
}

// Register adds the routes.
func Register(r *gin.Engine, cfg Config, d Deps) error {
	meta, err := metadata(cfg)
	if err != nil {
		return err
	}
	r.GET(MetadataPath, func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=300")
		c.Data(http.StatusOK, "application/json", meta)
	})

	// Stateless: every request carries the whole exchange, so any replica
	// answers any request and the server keeps no session to lose when a
	// pod goes; a server-to-client stream (GET) is not offered. JSON
	// answers rather than event streams: a tool call is one request and
	// one answer, which an ingress buffers like any other. The one
	// exception is a subscriptions/listen (SEP-2575), an event stream by
	// nature, held by the replica it reached with its own server
	// (docs/mcp.md, "Resources and subscriptions").
	server := func(r *http.Request) *mcp.Server {
		if s := resources.StreamServer(r); s != nil {
			return s
		}
		return d.Server
	}
	transport := mcp.NewStreamableHTTPHandler(server,
		&mcp.StreamableHTTPOptions{
			Stateless: true, JSONResponse: true, MaxRequestBodyBytes: maxBody,
			// The protection is for an MCP server on a developer's
			// machine, which a web page reaches through a rebound name
			// with the browser's ambient authority. This one is remote,
			// behind the edge (whose Host is the public name, arriving
			// from a loopback address in make run), and takes bearer
			// tokens only, which a page cannot make a browser send.
			DisableLocalhostProtection: true,
		})
	chain := []gin.HandlerFunc{
		// A listen stream's events reach the client as they are written:
		// an nginx in front (the chart's ingress) would otherwise buffer
		// them (X-Accel-Buffering, which it honours and drops).
		func(c *gin.Context) { c.Header("X-Accel-Buffering", "no") },
		auth.Middleware(d.Credentials, auth.AcceptAccountTokens(cfg.Resource), auth.ResourceMetadata(cfg.MetadataURL)),
		accountsOnly,
		d.Subscriptions.Streams(),
		gin.WrapH(transport),
	}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		r.Handle(method, Path, chain...)
	}
	return nil
}

// maxBody bounds one JSON-RPC message: the largest tool input is a case
// draft, far below it.
const maxBody = 1 << 20

// accountsOnly refuses a partner's credential: the MCP server acts for
// accounts; a partner's backend calls the API itself.
func accountsOnly(c *gin.Context) {
	if cred, ok := auth.CredentialFrom(c.Request.Context()); !ok || !cred.ForAccount() {
		problem.Write(c, problem.New(tools.AccountOnly, "The MCP server acts for accounts: send an account's OAuth token for this server; a partner credential calls the API directly."))
		return
	}
	c.Next()
}

func metadata(cfg Config) ([]byte, error) {
	return json.Marshal(auth.NewProtectedResource(cfg.Resource, cfg.AuthorizationServer, "pcourt MCP server"))
}
