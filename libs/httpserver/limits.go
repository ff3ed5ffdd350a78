package httpserver

import (
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/ratelimit"
)

// headerLimit answers 431 as a problem for a request whose request line and
// headers exceed limit bytes. net/http reads up to twice the limit (the
// server's MaxHeaderBytes) so that this answer can be a problem; beyond that
// it refuses the request itself.
func headerLimit(p *Platform) gin.HandlerFunc {
	return func(c *gin.Context) {
		r := c.Request
		n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4 + len(r.Host) + len("Host: \r\n")
		for k, vs := range r.Header {
			for _, v := range vs {
				n += len(k) + len(v) + 4 // "k: v\r\n"
			}
		}
		if refused := p.HeaderTooLarge(n); refused != nil {
			problem.Write(c, refused)
			return
		}
		c.Next()
	}
}

// inFlightLimit serves at most the server's MaxInFlight requests at once
// (Platform.Admit). Probes pass, so an overloaded instance is not also
// restarted.
func inFlightLimit(p *Platform) gin.HandlerFunc {
	return func(c *gin.Context) {
		if IsOperational(c.Request.URL.Path) {
			c.Next()
			return
		}
		if refused := p.Admit(); refused != nil {
			problem.Write(c, refused)
			return
		}
		defer p.Leave()
		c.Next()
	}
}

// addressLimit applies the per-client-address rate (Platform.AllowAddress).
func addressLimit(p *Platform) gin.HandlerFunc {
	return func(c *gin.Context) {
		if IsOperational(c.Request.URL.Path) {
			c.Next()
			return
		}
		if refused := p.AllowAddress(c.Request.Context(), ClientAddr(c.Request.Context())); refused != nil {
			problem.Write(c, refused)
			return
		}
		c.Next()
	}
}

// RateLimited is the 429 problem for a refused decision, with Retry-After.
func RateLimited(d ratelimit.Decision, detail string) *problem.Error {
	return problem.New(problem.RateLimited, detail).WithHeader("Retry-After", strconv.Itoa(d.RetryAfterSeconds()))
}
