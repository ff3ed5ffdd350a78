package auth

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

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
// context. Missing and invalid credentials are 401; an unreachable Redis is 503,
// never a refusal of a credential that may be valid.
func Middleware(store *Store) gin.HandlerFunc {
	return func(c *gin.Context) {
		token, ok := bearerToken(c.GetHeader("Authorization"))
		if !ok {
			problem.Write(c, problem.New(problem.Unauthenticated, "Send a bearer credential in the Authorization header.").
				WithHeader("WWW-Authenticate", `Bearer realm="pcourt"`))
			return
		}
		cred, err := store.Authenticate(c.Request.Context(), token)
		if errors.Is(err, ErrInvalidCredential) {
			problem.Write(c, problem.New(problem.InvalidCredential, "The bearer credential is unknown or revoked.").
				WithHeader("WWW-Authenticate", `Bearer realm="pcourt", error="invalid_token"`))
			return
		}
		if err != nil {
			problem.Write(c, problem.New(problem.Unavailable, "Credentials cannot be checked right now; retry shortly.").
				WithHeader("Retry-After", "1").Wrap(err))
			return
		}
		c.Request = c.Request.WithContext(WithCredential(c.Request.Context(), cred))
		c.Next()
	}
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

func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
