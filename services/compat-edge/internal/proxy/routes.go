package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"
)

// Config is what the edge's routes need from its configuration. The
// server's own default body limit (httpserver.Config.MaxBodyBytes) must be
// at least the larger of the two limits: a route can only lower it.
type Config struct {
	// MaxBodyBytes caps a body the edge passes through; each owner enforces
	// its own, smaller limit.
	MaxBodyBytes int64
	// MaxUploadBytes caps the body of an upload (Uploads) instead: the
	// largest file any rules version allows (100 MiB) and the multipart
	// framing around it. Cases refuses a file over the case's own limit.
	// Zero gives uploads MaxBodyBytes, as every other route.
	MaxUploadBytes int64
	// TransferTimeout is how long an upload may take to arrive and be
	// answered, and an exhibit download or a stream (Streams) to be sent,
	// in place of the server's read and write timeouts (30 s: a 100 MiB
	// file would need 28 Mbit/s). Zero keeps the server's timeouts.
	TransferTimeout time.Duration
}

// Register adds the edge's own routes to its gin engine: the API document
// and the migration guide. The proxy path is Server's.
func Register(r *gin.Engine, proxy *Proxy, openAPIJSON []byte) {
	r.GET("/openapi.json", func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=300")
		c.Data(http.StatusOK, "application/json", openAPIJSON)
	})
	// The migration guide every announcement links to (rel="deprecation").
	r.GET(GuidePath, proxy.Guide)
}

// bodyLimit is the request's body limit: an upload's the upload limit,
// any other request's the body limit. The ingress gives uploads their own
// larger limit too (Uploads).
func (cfg Config) bodyLimit(method, path string) int64 {
	if isUpload(method, path) && cfg.MaxUploadBytes > 0 {
		return cfg.MaxUploadBytes
	}
	return cfg.MaxBodyBytes
}

// upstreamTimeout bounds a request's exchange with its owner: a
// transfer's or a stream's the transfer timeout, anything else's 30 s.
func (cfg Config) upstreamTimeout(method, path string) time.Duration {
	if cfg.TransferTimeout > 0 && (isUpload(method, path) || isDownload(method, path) || isStream(method, path)) {
		return cfg.TransferTimeout
	}
	return upstreamTimeout
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
