package agents

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/refusal"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

// PlatformClient is a client of the platform itself, configured with the
// service rather than registered by an operator: the MCP server, which
// exchanges the tokens it receives for tokens of the API (RFC 8693) and
// may do nothing else. It is no account's client and holds no token.
type PlatformClient struct {
	ID string
	// SecretHash is auth.HashToken of its secret; the secret itself is
	// kept nowhere.
	SecretHash string
}

// Authenticate checks a client's id and secret against c, the secret's
// hash compared in constant time. ErrClientAuthentication unless both
// match.
func (c PlatformClient) Authenticate(id, secret string) error {
	if c.ID == "" || id != c.ID || subtle.ConstantTimeCompare([]byte(auth.HashToken(secret)), []byte(c.SecretHash)) != 1 {
		return ErrClientAuthentication
	}
	return nil
}

// ExchangeRequest is a token exchange the MCP server asks for.
type ExchangeRequest struct {
	// SubjectToken is the access token the MCP server received.
	SubjectToken string
	// From is the audience whose tokens are exchanged: the MCP server's
	// resource identifier.
	From string
	// Audience is the resource the new token is for: the API.
	Audience string
	// Scopes are the scopes asked; all of the subject's when empty.
	Scopes []account.Scope
}

// ExchangeToken issues, for a live token of the MCP server's audience, a
// token for req.Audience with the same tenant, environment, account,
// client and case, the asked scopes or all of the subject's, expiring no
// later than the subject (TokenLifetime at most). The refusals are the
// domain's (account.Account.Exchange), a subject that is unknown, expired,
// revoked or no account token being invalid_grant before them.
//
// The new token is recorded under the subject's client, so revoking that
// client revokes it too, and the client read again after, as an issue by
// client credentials does: a revocation racing the exchange never leaves
// it alive.
func (s *Service) ExchangeToken(ctx context.Context, req ExchangeRequest) (Token, error) {
	subject, err := s.liveToken(ctx, req.SubjectToken)
	if err != nil {
		return Token{}, err
	}
	a, err := s.accounts.Get(ctx, subject.AccountID)
	if errors.Is(err, store.ErrNotFound) {
		return Token{}, refusal.New(account.CodeInvalidGrant, "the subject token's account %s does not exist", subject.AccountID)
	}
	if err != nil {
		return Token{}, err
	}
	scopes := make([]account.Scope, len(subject.Scopes))
	for i, sc := range subject.Scopes {
		scopes[i] = account.Scope(sc)
	}
	ex, err := a.Exchange(account.Subject{
		Tenant: subject.Tenant, Environment: string(subject.Environment), AccountID: subject.AccountID, ClientID: subject.ClientID,
		Audience: subject.Audience, Scopes: scopes, CaseID: subject.CaseID, ExpiresAt: subject.ExpiresAt,
	}, req.From, req.Scopes, s.now())
	if err != nil {
		return Token{}, err
	}
	authScopes := make([]auth.Scope, len(ex.Scopes))
	for i, sc := range ex.Scopes {
		authScopes[i] = auth.Scope(sc)
	}
	secret, cred, err := s.credentials.MintAccountToken(ctx, auth.AccountTokenRequest{
		Tenant: subject.Tenant, Environment: subject.Environment, AccountID: subject.AccountID, ClientID: subject.ClientID,
		Scopes: authScopes, Audience: req.Audience, CaseID: subject.CaseID, Lifetime: TokenLifetime, NotAfter: ex.NotAfter,
	})
	if err != nil {
		return Token{}, err
	}
	if err := s.accounts.HoldToken(ctx, a.ID, subject.ClientID, cred.PublicID, cred.ExpiresAt, s.now()); err != nil {
		return Token{}, errors.Join(err, s.credentials.Revoke(ctx, cred.PublicID))
	}
	if _, again, err := s.accounts.ClientAccount(ctx, subject.ClientID); err != nil || !again.Active() {
		if err == nil || errors.Is(err, store.ErrNotFound) {
			err = refusal.New(account.CodeInvalidGrant, "the subject token's client %s was revoked", subject.ClientID)
		}
		return Token{}, errors.Join(err, s.credentials.Revoke(ctx, cred.PublicID))
	}
	return Token{Secret: secret, Credential: cred}, nil
}

// liveToken returns the account token secret names, read afresh (not
// from this replica's cache, so a token revoked a moment ago is not
// exchanged). A token that is unknown, expired, revoked or not an
// account's is invalid_grant.
func (s *Service) liveToken(ctx context.Context, secret string) (auth.Credential, error) {
	gone := refusal.New(account.CodeInvalidGrant, "the subject token is unknown, expired or revoked")
	cred, err := s.credentials.Authenticate(ctx, secret)
	if errors.Is(err, auth.ErrInvalidCredential) {
		return auth.Credential{}, gone
	}
	if err != nil {
		return auth.Credential{}, err
	}
	cred, err = s.credentials.Get(ctx, cred.PublicID)
	switch {
	case errors.Is(err, auth.ErrNotFound), err == nil && (!cred.ActiveAt(s.now()) || !cred.ForAccount()):
		return auth.Credential{}, gone
	case err != nil:
		return auth.Credential{}, fmt.Errorf("reading the subject token: %w", err)
	}
	return cred, nil
}
