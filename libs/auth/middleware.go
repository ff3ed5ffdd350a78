package auth

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
)

// CapabilityHeader carries a per-case capability token.
const CapabilityHeader = "X-PC-Case-Capability"

type ctxKey struct{}

// WithCredential returns ctx carrying the authenticated credential.
func WithCredential(ctx context.Context, c Credential) context.Context {
	return context.WithValue(ctx, ctxKey{}, c)
}

// CredentialFrom returns the credential Middleware authenticated.
func CredentialFrom(ctx context.Context) (Credential, bool) {
	c, ok := ctx.Value(ctxKey{}).(Credential)
	return c, ok
}

// Middleware requires a valid bearer credential and stores it in the request
// context. In order:
//
//   - more than one Authorization header is 400 ambiguous_credential: which
//     one counts would depend on the parser;
//   - a missing or malformed bearer is 401;
//   - a client address past its budget of failed lookups is 429, before the
//     lookup, unless this replica verified the credential already: the
//     budget stops guessing, and a verified credential is not a guess (a
//     partner behind an address it shares with a guesser keeps working,
//     and the common request pays no Redis round trip for the check);
//   - an unknown or revoked credential is 401 and counts as a failure of
//     the address;
//   - a credential past its request rate is 429;
//   - an unreachable Redis is 503, never a refusal of a credential that may
//     be valid. The limits let requests through when Redis cannot count
//     them; the lookup, on the same Redis, reports the outage;
//   - an account token is 403 where the route does not accept account
//     tokens (AcceptAccountTokens), and 401 invalid_token where it does but
//     the token is for another audience;
//   - where the route accepts account sessions (AcceptAccountSessions) and
//     the request has no Authorization header, the session's cookie stands
//     in for the bearer: its answers are private, a mutation not sent from
//     the site is 403 cross_origin before the lookup, and a cookie that
//     holds anything but a live session is 401. A session's secret sent
//     as a bearer is 401 everywhere.
func Middleware(store *Store, opts ...MiddlewareOption) gin.HandlerFunc {
	var o middlewareOptions
	for _, opt := range opts {
		opt(&o)
	}
	return func(c *gin.Context) {
		ctx := c.Request.Context()
		if len(c.Request.Header.Values("Authorization")) > 1 {
			problem.Write(c, problem.New(problem.AmbiguousCredential, "Send exactly one Authorization header."))
			return
		}
		token, ok := bearerToken(c.GetHeader("Authorization"))
		fromCookie := false
		if !ok && c.GetHeader("Authorization") == "" && o.sessionOrigin != nil {
			token, fromCookie = sessionCookie(c.Request)
			ok = fromCookie
		}
		if !ok {
			problem.Write(c, problem.New(problem.Unauthenticated, "Send a bearer credential in the Authorization header.").
				WithHeader("WWW-Authenticate", o.challenge("")))
			return
		}
		if fromCookie {
			// A session's answers are the person's own, whatever they
			// say (a refusal included): no shared cache keeps them.
			c.Header("Cache-Control", "private, no-store")
			c.Header("Vary", "Cookie")
			if !safeMethod(c.Request.Method) && !o.sessionOrigin(c.Request) {
				problem.Write(c, problem.New(problem.CrossOrigin, "A request with an account session that changes something must come from the site's own pages; nothing was read."))
				return
			}
		}
		failures := "authfail:" + clientAddr(c)
		hash := HashToken(token)
		cred, verified := store.verified(hash)
		var err error
		if !verified {
			if d, err := store.limiter.Peek(ctx, failures, store.cfg.FailedAuth); err == nil && !d.Allowed {
				problem.Write(c, httpserver.RateLimited(d, "Too many failed authentications from this address; retry after the time in Retry-After."))
				return
			}
			cred, err = store.AuthenticateHash(ctx, hash)
		}
		if errors.Is(err, ErrInvalidCredential) && fromCookie {
			_, _ = store.limiter.Allow(ctx, failures, store.cfg.FailedAuth)
			problem.Write(c, problem.New(problem.InvalidCredential, "The account session is unknown or has ended; sign in again."))
			return
		}
		if errors.Is(err, ErrInvalidCredential) {
			_, _ = store.limiter.Allow(ctx, failures, store.cfg.FailedAuth)
			problem.Write(c, problem.New(problem.InvalidCredential, "The bearer credential is unknown or revoked.").
				WithHeader("WWW-Authenticate", o.challenge(`error="invalid_token"`)))
			return
		}
		if err != nil {
			problem.Write(c, problem.New(problem.Unavailable, "Credentials cannot be checked right now; retry shortly.").
				WithHeader("Retry-After", "1").Wrap(err))
			return
		}
		switch {
		case fromCookie && !cred.Session():
			// Another credential's secret in the session's cookie: a
			// bearer credential is sent as one, never as a cookie.
			_, _ = store.limiter.Allow(ctx, failures, store.cfg.FailedAuth)
			problem.Write(c, problem.New(problem.InvalidCredential, "The account session is unknown or has ended; sign in again."))
			return
		case !fromCookie && cred.Session():
			problem.Write(c, problem.New(problem.InvalidCredential, "An account session is a browser's cookie, not a bearer credential.").
				WithHeader("WWW-Authenticate", o.challenge(`error="invalid_token"`)))
			return
		}
		if cred.ForAccount() && !cred.Session() {
			if o.audience == "" {
				problem.Write(c, problem.New(problem.Forbidden, "This operation does not accept account tokens; use a partner credential."))
				return
			}
			if cred.Audience != o.audience {
				problem.Write(c, problem.New(problem.InvalidCredential, "The account token was issued for another resource.").
					WithHeader("WWW-Authenticate", o.challenge(`error="invalid_token", error_description="the token's audience is another resource"`)))
				return
			}
		}
		if d, err := store.limiter.Allow(ctx, "cred:"+cred.PublicID, store.cfg.PerCredential); err == nil && !d.Allowed {
			problem.Write(c, httpserver.RateLimited(d, "Too many requests with this credential; retry after the time in Retry-After."))
			return
		}
		c.Request = c.Request.WithContext(WithCredential(ctx, cred))
		c.Next()
	}
}

// MiddlewareOption changes what Middleware accepts.
type MiddlewareOption func(*middlewareOptions)

type middlewareOptions struct {
	audience string // "" refuses every account token
	// resourceMetadata is the URL of the resource's protected resource
	// metadata (RFC 9728), named in every challenge; "" names none.
	resourceMetadata string
	// sessionOrigin, when set, takes an account session from its cookie
	// (AcceptAccountSessions) and says whether a request is the site's own.
	sessionOrigin func(*http.Request) bool
}

// challenge is the Bearer challenge (RFC 6750, section 3) of a 401, with
// params after the realm and the resource's metadata URL.
func (o middlewareOptions) challenge(params string) string {
	v := `Bearer realm="pcourt"`
	if params != "" {
		v += ", " + params
	}
	if o.resourceMetadata != "" {
		v += `, resource_metadata="` + o.resourceMetadata + `"`
	}
	return v
}

// ResourceMetadata names the URL of the resource's protected resource
// metadata (RFC 9728, section 5.1) in every 401 challenge, so that an
// OAuth client that was refused finds the authorization server from the
// refusal: MCP clients start their authorization there.
func ResourceMetadata(url string) MiddlewareOption {
	return func(o *middlewareOptions) { o.resourceMetadata = url }
}

// AcceptAccountTokens lets account tokens whose audience is audience (the
// resource the route belongs to, RFC 8707) through, beside partner
// credentials. Without it Middleware refuses every account token: a route
// takes them only where it says so, with the scopes it needs
// (RequireScope).
func AcceptAccountTokens(audience string) MiddlewareOption {
	return func(o *middlewareOptions) { o.audience = audience }
}

// RequireScope refuses an account token without scope with 403 and the
// insufficient_scope challenge of RFC 6750, section 3.1. A partner
// credential passes: its powers are its role's and its grants', checked
// by the route as before.
func RequireScope(scope Scope) gin.HandlerFunc {
	return func(c *gin.Context) {
		cred, ok := CredentialFrom(c.Request.Context())
		if !ok || (cred.ForAccount() && !cred.HasScope(scope)) {
			writeInsufficientScope(c, scope)
			return
		}
		c.Next()
	}
}

// RequireRoleOrScope is RequireRole for partner credentials and
// RequireScope for account tokens, on a route both may use: a partner
// credential needs one of roles, an account token scope.
func RequireRoleOrScope(scope Scope, roles ...Role) gin.HandlerFunc {
	return func(c *gin.Context) {
		cred, ok := CredentialFrom(c.Request.Context())
		switch {
		case ok && cred.ForAccount() && !cred.HasScope(scope):
			writeInsufficientScope(c, scope)
		case !ok || (!cred.ForAccount() && !slices.Contains(roles, cred.Role)):
			problem.Write(c, problem.New(problem.Forbidden, "This credential's role may not use this operation."))
		default:
			c.Next()
		}
	}
}

func writeInsufficientScope(c *gin.Context, scope Scope) {
	problem.Write(c, problem.Newf(problem.Forbidden, "This operation needs the %s scope, which the token does not carry.", scope).
		WithHeader("WWW-Authenticate", `Bearer realm="pcourt", error="insufficient_scope", scope="`+string(scope)+`"`))
}

// RequireRole refuses credentials whose role is not listed, with 403.
func RequireRole(roles ...Role) gin.HandlerFunc {
	return func(c *gin.Context) {
		cred, ok := CredentialFrom(c.Request.Context())
		if !ok || !slices.Contains(roles, cred.Role) {
			problem.Write(c, problem.New(problem.Forbidden, "This credential's role may not use this operation."))
			return
		}
		c.Next()
	}
}

// bearerToken accepts "Bearer <token>" where the token is one run of
// visible characters: a comma or space inside would mean a list of
// credentials folded into one header.
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	if token == "" || strings.ContainsAny(token, " \t,") {
		return "", false
	}
	return token, true
}

// clientAddr is the address httpserver resolved, or the peer when the
// middleware runs outside it.
func clientAddr(c *gin.Context) string {
	if a := httpserver.ClientAddr(c.Request.Context()); a != "" {
		return a
	}
	if host, _, err := net.SplitHostPort(c.Request.RemoteAddr); err == nil {
		return host
	}
	return c.Request.RemoteAddr
}
