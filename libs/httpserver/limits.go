package httpserver

import (
	"log/slog"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/ratelimit"
)

// headerLimit answers 431 as a problem for a request whose request line and
// headers exceed limit bytes. net/http reads up to twice the limit (the
// server's MaxHeaderBytes) so that this answer can be a problem; beyond that
// it refuses the request itself.
func headerLimit(limit int) gin.HandlerFunc {
	return func(c *gin.Context) {
		r := c.Request
		n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4 + len(r.Host) + len("Host: \r\n")
		for k, vs := range r.Header {
			for _, v := range vs {
				n += len(k) + len(v) + 4 // "k: v\r\n"
			}
		}
		if n > limit {
			problem.Write(c, problem.Newf(problem.HeaderTooLarge, "The request line and headers exceed %d bytes.", limit))
			return
		}
		c.Next()
	}
}

// inFlightLimit serves at most limit requests at once. The next one is
// refused at once with 503 overloaded: queueing it would hold its memory
// and make every waiting caller slower. Probes pass, so an overloaded
// instance is not also restarted.
func inFlightLimit(limit int) gin.HandlerFunc {
	slots := make(chan struct{}, limit)
	return func(c *gin.Context) {
		if isOperational(c.Request.URL.Path) {
			c.Next()
			return
		}
		select {
		case slots <- struct{}{}:
		default:
			problem.Write(c, problem.New(problem.Overloaded, "This instance is serving as many requests as it can; retry shortly.").
				WithHeader("Retry-After", "1"))
			return
		}
		defer func() { <-slots }()
		c.Next()
	}
}

// addressLimit applies the per-client-address rate. When Redis cannot be
// asked the request passes and the failure is logged: the limit protects
// the service, it is not a reason to refuse everyone.
func addressLimit(l *ratelimit.Limiter, rule ratelimit.Rule, logger *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		if isOperational(c.Request.URL.Path) {
			c.Next()
			return
		}
		addr := ClientAddr(c.Request.Context())
		d, err := l.Allow(c.Request.Context(), "addr:"+addr, rule)
		if err != nil {
			logger.WarnContext(c.Request.Context(), "address rate limit unavailable; request passes", "err", err)
			c.Next()
			return
		}
		if !d.Allowed {
			problem.Write(c, RateLimited(d, "Too many requests from this address; retry after the time in Retry-After."))
			return
		}
		c.Next()
	}
}

// RateLimited is the 429 problem for a refused decision, with Retry-After.
func RateLimited(d ratelimit.Decision, detail string) *problem.Error {
	return problem.New(problem.RateLimited, detail).WithHeader("Retry-After", strconv.Itoa(d.RetryAfterSeconds()))
}
