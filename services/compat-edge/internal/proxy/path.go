package proxy

import (
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

// InvalidPath refuses a path with two readings (routing.Normalize): an
// encoded "/", a backslash, an encoded NUL or a dot segment.
var InvalidPath = problem.Code{Name: "invalid_path", Status: http.StatusBadRequest, Title: "Invalid path"}

// NormalizePath puts the request's path in its one normal form
// (routing.Normalize) before anything reads it, so that routing, the
// compatibility policy, the legacy-use ledger and the owner all see the
// same path: /api/v2/%63ases/cs_1 is announced, recorded and forwarded as
// /api/v2/cases/cs_1. A path that cannot be normalised is refused with 400
// invalid_path and reaches nothing. The edge installs it first, before the
// usage reader and the proxy.
func NormalizePath(c *gin.Context) {
	u := c.Request.URL
	escaped := u.EscapedPath()
	normal, err := routing.Normalize(escaped)
	if err != nil {
		_ = c.Error(invalidPath(err))
		c.Abort()
		return
	}
	if normal != escaped {
		path, err := url.PathUnescape(normal)
		if err != nil { // Normalize wrote only valid escapes; kept for safety
			_ = c.Error(problem.Newf(InvalidPath, "The request path has %s.", routing.ErrBadEncoding))
			c.Abort()
			return
		}
		u.Path, u.RawPath = path, normal
	}
	c.Next()
}

// invalidPath is the 400 of a path routing.Normalize refused.
func invalidPath(err error) *problem.Error {
	return problem.Newf(InvalidPath, "The request path has %s; send each segment once, unencoded where it can be, and resolve dot segments before sending.", err)
}
