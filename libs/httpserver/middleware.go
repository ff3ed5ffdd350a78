package httpserver

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
)

// recovery turns a panic into a 500 problem and logs the stack; the process
// keeps serving other requests.
func recovery(logger *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r) // the client went away; let net/http handle it
				}
				err := fmt.Errorf("panic: %v\n%s", r, debug.Stack())
				if c.Writer.Written() {
					logger.ErrorContext(c.Request.Context(), "panic after response started", "err", err)
					c.Abort()
					return
				}
				problem.Write(c, &problem.Error{Code: problem.Internal, Detail: "The server could not complete the request.", Err: err})
			}
		}()
		c.Next()
	}
}

// accessLog writes one line per request, after it completes
// (Platform.Log). The route is the template the RED histogram counts it
// under (at the edge, the inventory route it matched).
func accessLog(p *Platform) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		if IsOperational(c.Request.URL.Path) {
			return
		}
		p.Log(c.Request.Context(), Finished{
			Method: c.Request.Method, Route: routeOf(c), Path: c.Request.URL.Path,
			Client: ClientAddr(c.Request.Context()), Status: c.Writer.Status(), Bytes: c.Writer.Size(), Start: start,
		})
	}
}

// bodyLimitKey holds the body limit that applies to the request: the
// smallest of the server's default and the route's own.
const bodyLimitKey = "pcourt.httpserver.bodyLimit"

// BodyLimit caps the request body of a route (or group) at limit bytes, the
// resource-specific limit under the server's default. A body whose
// Content-Length already exceeds it is refused before any handler runs; the
// problem names the limit that applied.
func BodyLimit(limit int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		limit := applyLimit(c, limit)
		if c.Request.ContentLength > limit {
			problem.Write(c, tooLarge(limit))
			return
		}
		c.Next()
	}
}

// defaultBodyLimit is the server-wide limit. It refuses nothing by itself,
// because a route's own, smaller limit comes later in the chain and is the
// one to name: the body is wrapped so that no read goes past the limit, and
// ReadBody, or a route's BodyLimit, refuses an oversize Content-Length.
func defaultBodyLimit(limit int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		applyLimit(c, limit)
		c.Next()
	}
}

// StreamedBody lets one route take a body larger than the server's
// default, read as a stream by its handler (an evidence file): limit
// replaces the server-wide limit for this route, a Content-Length over it is
// refused before the handler runs, and the connection's read and write
// deadlines move to now plus timeout for this request only, because a large
// body does not arrive within the server's ReadTimeout. Every other route
// keeps the server's limits.
func StreamedBody(limit int64, timeout time.Duration) gin.HandlerFunc {
	return func(c *gin.Context) {
		if raw, ok := c.Value(rawBodyKey).(io.ReadCloser); ok {
			c.Request.Body = raw
		}
		c.Set(bodyLimitKey, limit)
		if c.Request.ContentLength > limit {
			problem.Write(c, tooLarge(limit))
			return
		}
		if c.Request.Body != nil {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
		}
		rc := http.NewResponseController(c.Writer)
		deadline := time.Now().Add(timeout)
		// A writer that cannot move its deadlines (a test recorder) keeps
		// the server's: the limit still holds.
		_ = rc.SetReadDeadline(deadline)
		_ = rc.SetWriteDeadline(deadline)
		c.Next()
	}
}

// rawBodyKey holds the request body as the server received it, before any
// limit wrapped it, so that StreamedBody can apply its own.
const rawBodyKey = "pcourt.httpserver.rawBody"

// applyLimit makes limit the request's body limit unless a smaller one is
// already in place, and returns the limit now in place.
func applyLimit(c *gin.Context, limit int64) int64 {
	if cur, ok := c.Value(bodyLimitKey).(int64); ok && cur <= limit {
		return cur
	}
	if _, kept := c.Value(rawBodyKey).(io.ReadCloser); !kept && c.Request.Body != nil {
		c.Set(rawBodyKey, c.Request.Body)
	}
	c.Set(bodyLimitKey, limit)
	if c.Request.Body != nil {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	}
	return limit
}

// bodyLimit is the limit that applies to the request, 0 when none was set.
func bodyLimit(c *gin.Context) int64 {
	n, _ := c.Value(bodyLimitKey).(int64)
	return n
}

func tooLarge(limit int64) *problem.Error {
	return problem.Newf(problem.BodyTooLarge, "The request body exceeds this route's limit of %d bytes.", limit)
}
