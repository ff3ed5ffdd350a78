package httpserver

import (
	"fmt"
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

// accessLog writes one line per request, after it completes.
func accessLog(logger *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		if isOperational(c.Request.URL.Path) {
			return
		}
		logger.InfoContext(c.Request.Context(), "http request",
			"method", c.Request.Method,
			"route", c.FullPath(),
			"path", problem.Clip(c.Request.URL.Path),
			"client", ClientAddr(c.Request.Context()),
			"status", c.Writer.Status(),
			"bytes", c.Writer.Size(),
			"duration_ms", float64(time.Since(start).Microseconds())/1000,
		)
	}
}

// BodyLimit caps the request body at limit bytes. The server applies its
// default to every route; a route group with a resource-specific limit adds
// its own, which is then the smaller of the two.
func BodyLimit(limit int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.ContentLength > limit {
			problem.Write(c, problem.Newf(problem.BodyTooLarge, "The request body exceeds %d bytes.", limit))
			return
		}
		if c.Request.Body != nil {
			c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, limit)
		}
		c.Next()
	}
}
