package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/httpserver"
)

// Config is what the edge's routes need from its configuration.
type Config struct {
	// MaxBodyBytes caps a body the edge passes through; each owner enforces
	// its own, smaller limit.
	MaxBodyBytes int64
}

// Register adds the edge's routes: the API document, the migration guide
// and the proxy for every /api path and the hosted /respond pages.
func Register(r *gin.Engine, cfg Config, proxy *Proxy, openAPIJSON []byte) {
	r.GET("/openapi.json", func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=300")
		c.Data(http.StatusOK, "application/json", openAPIJSON)
	})
	// The migration guide every announcement links to (rel="deprecation").
	r.GET(GuidePath, proxy.Guide)
	// The limit is on the route so that an oversize Content-Length is
	// refused before anything reaches an owner.
	r.Any("/api/*path", httpserver.BodyLimit(cfg.MaxBodyBytes), proxy.Handle)
	// The respondent's hosted pages (the showOnce respondentLoginPath
	// leads there) belong to the cases service.
	r.Any("/respond/*path", httpserver.BodyLimit(cfg.MaxBodyBytes), proxy.Handle)
	// The partner console's pages belong to the console service (its
	// links API is under /api).
	r.Any("/console/*path", httpserver.BodyLimit(cfg.MaxBodyBytes), proxy.Handle)
}

// ServedDocument returns the OpenAPI document as the edge serves it: with
// publicURL, the address clients reach the edge at, as its only server.
// Without one the document keeps its relative server ("/"), which clients
// resolve against the address they fetched it from.
func ServedDocument(openAPIJSON []byte, publicURL string) ([]byte, error) {
	if publicURL == "" {
		return openAPIJSON, nil
	}
	u, err := url.Parse(publicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("public URL %q is not an absolute http(s) URL", publicURL)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(openAPIJSON, &doc); err != nil {
		return nil, fmt.Errorf("reading the OpenAPI document: %w", err)
	}
	servers, err := json.Marshal([]map[string]string{{"url": publicURL, "description": "this deployment"}})
	if err != nil {
		return nil, err
	}
	doc["servers"] = servers
	return json.Marshal(doc)
}
