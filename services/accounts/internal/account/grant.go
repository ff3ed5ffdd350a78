package account

import (
	"errors"
	"slices"
	"time"

	"github.com/pcourt/pcourt/libs/refusal"
)

// The lifetimes of the authorization code grant (docs/accounts.md, "The
// authorization code grant").
const (
	// AuthCodeLifetime is how long an authorization code may be redeemed.
	AuthCodeLifetime = time.Minute
	// RefreshLifetime is how long a refresh token lives from its issue;
	// each rotation issues a new one with a fresh lifetime.
	RefreshLifetime = 30 * 24 * time.Hour
	// AuthorizationLifetime is how long a checked authorization request
	// waits for the person's sign-in and decision.
	AuthorizationLifetime = 10 * time.Minute
)

// Authorization is an application's checked request for a person's
// account (GET /oauth/authorize), as the consent page shows it and the
// grant keeps it.
type Authorization struct {
	ClientID    string
	RedirectURI string
	State       string
	// Challenge is the PKCE code challenge, S256 (RFC 7636).
	Challenge string
	Scopes    []Scope
	// Resource is the audience of the tokens (RFC 8707): the API or the
	// MCP server.
	Resource string
	// CaseID binds the grant and every token of it to one case; "" for
	// none.
	CaseID string
}

// Grant is what a person approved for an application: the code, then the
// family of refresh tokens (and the access tokens they issue) that share
// its binding. Revoking it revokes them all.
type Grant struct {
	ID          string
	Tenant      string
	Environment string
	AccountID   string
	Authorization
	CreatedAt     time.Time
	CodeExpiresAt time.Time
	// CodeRedeemed: the code was exchanged; a second exchange revokes the
	// grant (RFC 6749 section 4.1.2, OAuth 2.1 section 4.1.3).
	CodeRedeemed     bool
	RefreshExpiresAt time.Time // zero until the code is redeemed
	Revoked          bool
}

// Approve is the person's approval of an authorization: a grant of the
// account, with a code that lives AuthCodeLifetime.
func Approve(id string, person Account, a Authorization, now time.Time) (Grant, error) {
	if person.Kind != KindIndividual {
		return Grant{}, refusal.New(CodeInvalidGrant, "only a person's account approves an application")
	}
	return Grant{ID: id, Tenant: person.Tenant, Environment: person.Environment, AccountID: person.ID, Authorization: a,
		CreatedAt: now, CodeExpiresAt: now.Add(AuthCodeLifetime)}, nil
}

// ErrCodeReused is a code presented after it was redeemed: the grant is
// to be revoked with every token it issued.
var ErrCodeReused = errors.New("authorization code used twice")

// MayRedeem checks a code's exchange, in this order: the grant is not
// revoked, the code not redeemed before (ErrCodeReused), not expired, and
// presented by the client it was issued to with the redirect URI it was
// issued for. The PKCE verifier is checked by the caller, with the
// library that parses the request.
func (g Grant) MayRedeem(clientID, redirectURI string, now time.Time) error {
	switch {
	case g.Revoked:
		return refusal.New(CodeInvalidGrant, "the authorization code was revoked")
	case g.CodeRedeemed:
		return ErrCodeReused
	case !now.Before(g.CodeExpiresAt):
		return refusal.New(CodeInvalidGrant, "the authorization code expired: it lives %d seconds", int(AuthCodeLifetime/time.Second))
	case clientID != g.ClientID:
		return refusal.New(CodeInvalidGrant, "the authorization code was issued to another client")
	case redirectURI != g.RedirectURI:
		return refusal.New(CodeInvalidGrant, "redirect_uri is not the one the code was issued for")
	}
	return nil
}

// MayRefresh checks a refresh, in this order: the grant is not revoked,
// its refresh token is the client's and has not expired, and each scope
// asked is one the grant holds (a refresh narrows, never widens: RFC 6749
// section 6). It returns the access token's scopes: those asked, or all of
// the grant's. The family keeps the grant's scopes whatever a refresh asks.
func (g Grant) MayRefresh(clientID string, requested []Scope, now time.Time) ([]Scope, error) {
	switch {
	case g.Revoked:
		return nil, refusal.New(CodeInvalidGrant, "the refresh token was revoked")
	case clientID != g.ClientID:
		return nil, refusal.New(CodeInvalidGrant, "the refresh token was issued to another client")
	case !g.CodeRedeemed || !now.Before(g.RefreshExpiresAt):
		return nil, refusal.New(CodeInvalidGrant, "the refresh token expired")
	}
	if len(requested) == 0 {
		return slices.Clone(g.Scopes), nil
	}
	for i, s := range requested {
		if !slices.Contains(g.Scopes, s) || slices.Contains(requested[:i], s) {
			return nil, refusal.New(CodeInvalidScope, "scope %q was not granted, or is asked twice: a refresh only narrows the grant's scopes", s)
		}
	}
	return slices.Clone(requested), nil
}
