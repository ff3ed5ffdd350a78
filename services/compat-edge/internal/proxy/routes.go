package proxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/httpserver"
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
	// answered, and an exhibit download to be sent, in place of the
	// server's read and write timeouts (30 s: a 100 MiB file would need
	// 28 Mbit/s). Zero keeps the server's timeouts.
	TransferTimeout time.Duration
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
	r.Any("/api/*path", apiLimits(cfg), proxy.Handle)
	// The respondent's hosted pages (the showOnce respondentLoginPath
	// leads there) belong to the cases service.
	r.Any("/respond/*path", httpserver.BodyLimit(cfg.MaxBodyBytes), proxy.Handle)
	// The partner console's pages belong to the console service (its
	// links API is under /api).
	r.Any("/console/*path", httpserver.BodyLimit(cfg.MaxBodyBytes), proxy.Handle)
}

// apiLimits gives an /api request its body limit and deadlines: an upload
// the upload limit and the transfer timeout, an exhibit download the
// transfer timeout, anything else the body limit and the server's
// timeouts.
func apiLimits(cfg Config) gin.HandlerFunc {
	uploadLimit := cfg.MaxUploadBytes
	if uploadLimit <= 0 {
		uploadLimit = cfg.MaxBodyBytes
	}
	body, upload := httpserver.BodyLimit(cfg.MaxBodyBytes), httpserver.BodyLimit(uploadLimit)
	return func(c *gin.Context) {
		switch method, path := c.Request.Method, c.Request.URL.Path; {
		case isUpload(method, path):
			extendDeadlines(c, cfg.TransferTimeout, true)
			upload(c)
		case isDownload(method, path):
			extendDeadlines(c, cfg.TransferTimeout, false)
			body(c)
		default:
			body(c)
		}
	}
}

// extendDeadlines replaces the server's write deadline, and with read its
// read deadline (the whole body), by timeout from now. Both were set when
// the request's headers were read, so neither has passed.
func extendDeadlines(c *gin.Context, timeout time.Duration, read bool) {
	if timeout <= 0 {
		return
	}
	rc := http.NewResponseController(c.Writer)
	deadline := time.Now().Add(timeout)
	if read {
		_ = rc.SetReadDeadline(deadline)
	}
	_ = rc.SetWriteDeadline(deadline)
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
