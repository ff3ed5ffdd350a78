// Package requestid gives every request one identifier that appears in the
// X-Request-Id header, in every response body and in every log line.
package requestid

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/gin-gonic/gin"
)

// Header is the request and response header that carries the id.
const Header = "X-Request-Id"

type ctxKey struct{}

// Middleware accepts a well-formed X-Request-Id from the caller (so a partner
// can correlate its own logs) and generates one otherwise. The id is echoed in
// the response header and stored in both the Gin and the request context.
func Middleware() gin.HandlerFunc {
	return func(c *gin.Context) {
		id := c.GetHeader(Header)
		if !WellFormed(id) {
			id = New()
		}
		c.Set(Header, id)
		c.Request = c.Request.WithContext(NewContext(c.Request.Context(), id))
		c.Header(Header, id)
		c.Next()
	}
}

// WellFormed reports whether a caller-supplied id may be reused: 1 to 128
// characters of A-Z a-z 0-9 . _ : -, so it can never inject into logs or headers.
func WellFormed(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		ch := id[i]
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9':
		case ch == '.', ch == '_', ch == ':', ch == '-':
		default:
			return false
		}
	}
	return true
}

// New returns a fresh random id of the form req_<32 hex characters>.
func New() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return "req_" + hex.EncodeToString(b[:])
}

// NewContext returns ctx carrying id, as Middleware stores it: for a
// server that is not gin's (the edge's proxy path).
func NewContext(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// FromContext returns the id stored by Middleware, or "" outside a request.
func FromContext(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// Get returns the id of the request behind c.
func Get(c *gin.Context) string {
	if id := c.GetString(Header); id != "" {
		return id
	}
	return FromContext(c.Request.Context())
}
