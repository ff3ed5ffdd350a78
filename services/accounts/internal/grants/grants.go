// Package grants is the application layer of the authorization code
// grant, between the OAuth endpoints and consent page and the domain:
//
//	an application registers its client (RFC 7591) → asks for a person's
//	account (GET /oauth/authorize, checked and kept until the person
//	decides) → the signed-in person approves on the consent page (a grant
//	with a 60-second code) or denies → the client redeems the code with its
//	PKCE verifier (an access token and the family's first refresh token) →
//	refreshes, each refresh token used once → revokes, or reuses a spent
//	code or a rotated refresh token, and the whole family dies.
//
// Every access token a grant issues is recorded under the grant before it
// is answered and the grant read again after, as client credentials do
// under their client: a revocation racing an issue never leaves a token of
// a revoked grant alive.
package grants

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/refusal"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

// TokenLifetime is how long an access token lives (docs/accounts.md).
const TokenLifetime = 10 * time.Minute

// The prefixes of the grant's secrets. A code and a refresh token carry
// their grant's id before the dot, so that every step on a grant is one
// script of one slot; the random part after it is what proves possession.
const (
	codePrefix    = "pc_oac_"
	refreshPrefix = "pc_ort_"
)

// IsRefreshToken reports whether a token is of this server's refresh
// tokens' form (revocation and introspection tell them from access
// tokens by it).
func IsRefreshToken(token string) bool { return strings.HasPrefix(token, refreshPrefix) }

// Service runs the acts.
type Service struct {
	accounts    *store.Accounts
	credentials *auth.Store
	logger      *slog.Logger
	now         func() time.Time
}

// New returns the service.
func New(accounts *store.Accounts, credentials *auth.Store, logger *slog.Logger, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{accounts: accounts, credentials: credentials, logger: logger, now: now}
}

func (s *Service) instant() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// NewApp is a registered application client with its secret ("" for a
// public client), which is shown once.
type NewApp struct {
	App    account.App
	Secret string
}

// RegisterApp registers an application's client (RFC 7591): a secret
// (pc_ocs_…, kept as its SHA-256) only for a confidential one.
func (s *Service) RegisterApp(ctx context.Context, r account.AppRegistration) (NewApp, error) {
	app, err := account.RegisterApp(account.AppClientPrefix+rand.Text(), r, s.instant())
	if err != nil {
		return NewApp{}, err
	}
	var secret string
	if !app.Public() {
		secret = auth.NewToken("pc_ocs_")
		app.SecretHash = auth.HashToken(secret)
	}
	if err := s.accounts.CreateApp(ctx, app); err != nil {
		return NewApp{}, err
	}
	return NewApp{App: app, Secret: secret}, nil
}

// App reads an application's client; store.ErrNotFound when there is
// none.
func (s *Service) App(ctx context.Context, clientID string) (account.App, error) {
	return s.accounts.App(ctx, clientID)
}

// ErrClientAuthentication is an application client that does not exist,
// a confidential one without its secret, or a public one given a secret.
var ErrClientAuthentication = errors.New("application client authentication failed")

// AuthenticateApp checks an application client at the token endpoint: a
// public client sends no secret (PKCE proves it), a confidential one its
// secret, compared in constant time.
func (s *Service) AuthenticateApp(ctx context.Context, clientID, secret string) (account.App, error) {
	app, err := s.accounts.App(ctx, clientID)
	if errors.Is(err, store.ErrNotFound) {
		return account.App{}, ErrClientAuthentication
	}
	if err != nil {
		return account.App{}, err
	}
	switch {
	case app.Public() && secret == "":
		return app, nil
	case !app.Public() && secret != "" && subtle.ConstantTimeCompare([]byte(auth.HashToken(secret)), []byte(app.SecretHash)) == 1:
		return app, nil
	}
	return account.App{}, ErrClientAuthentication
}

// Wait keeps a checked authorization request until the person decides,
// and returns the id the consent page is addressed by (random; only its
// hash is stored).
func (s *Service) Wait(ctx context.Context, a account.Authorization) (string, error) {
	id := "oaz_" + rand.Text()
	return id, s.accounts.SaveAuthorization(ctx, auth.HashToken(id), a)
}

// Waiting reads an authorization request the consent page shows, with
// its client; store.ErrAuthorizationNotFound once it expired or was
// decided.
func (s *Service) Waiting(ctx context.Context, id string) (account.Authorization, account.App, error) {
	a, err := s.accounts.Authorization(ctx, auth.HashToken(id))
	if err != nil {
		return account.Authorization{}, account.App{}, err
	}
	app, err := s.accounts.App(ctx, a.ClientID)
	return a, app, err
}

// Approve is the person's approval: the authorization request is taken
// (once: a second decision finds none), and a grant of the person's
// account created with its code, which is returned with the request.
func (s *Service) Approve(ctx context.Context, id string, person account.Account) (account.Authorization, string, error) {
	a, err := s.accounts.TakeAuthorization(ctx, auth.HashToken(id))
	if err != nil {
		return account.Authorization{}, "", err
	}
	g, err := account.Approve(rand.Text(), person, a, s.instant())
	if err != nil {
		return account.Authorization{}, "", err
	}
	code := codePrefix + g.ID + "." + rand.Text()
	if err := s.accounts.CreateGrant(ctx, g, auth.HashToken(code)); err != nil {
		return account.Authorization{}, "", err
	}
	return a, code, nil
}

// Deny is the person's refusal: the request is taken, nothing granted.
func (s *Service) Deny(ctx context.Context, id string) (account.Authorization, error) {
	return s.accounts.TakeAuthorization(ctx, auth.HashToken(id))
}

// Issued is what a code or a refresh answers: an access token and the
// family's next refresh token.
type Issued struct {
	AccessToken  string
	Credential   auth.Credential
	RefreshToken string
}

// grantOf splits a code or refresh token into its grant's id; a token of
// another form names no grant.
func grantOf(token, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(token, prefix)
	if !ok {
		return "", false
	}
	id, secret, ok := strings.Cut(rest, ".")
	return id, ok && id != "" && secret != "" && !strings.ContainsAny(id, "{}")
}

func unknown(what string) error {
	return refusal.New(account.CodeInvalidGrant, "the %s is unknown, expired or revoked", what)
}

// RedeemCode exchanges a code for an access token and the family's first
// refresh token. The refusals, in order: a code that names no grant or
// whose hash is not its code's; the domain's (account.Grant.MayRedeem: a
// code redeemed before revokes the grant and every token it issued);
// then verify, the PKCE check of the code's S256 challenge; then the
// redemption itself, one script, which the second of two concurrent
// exchanges loses (and revokes the grant).
func (s *Service) RedeemCode(ctx context.Context, code, clientID, redirectURI string, verify func(challenge string) bool) (Issued, error) {
	id, ok := grantOf(code, codePrefix)
	if !ok {
		return Issued{}, unknown("authorization code")
	}
	g, err := s.accounts.Grant(ctx, id)
	if errors.Is(err, store.ErrGrantNotFound) || (err == nil && subtle.ConstantTimeCompare([]byte(g.CodeHash), []byte(auth.HashToken(code))) != 1) {
		return Issued{}, unknown("authorization code")
	}
	if err != nil {
		return Issued{}, err
	}
	now := s.instant()
	if err := g.MayRedeem(clientID, redirectURI, now); errors.Is(err, account.ErrCodeReused) {
		return Issued{}, s.revokeReused(ctx, id, "authorization code")
	} else if err != nil {
		return Issued{}, err
	}
	if !verify(g.Challenge) {
		return Issued{}, refusal.New(account.CodeInvalidGrant, "code_verifier does not match the code_challenge the code was issued for")
	}
	refresh := refreshPrefix + id + "." + rand.Text()
	tokens, err := s.accounts.RedeemCode(ctx, id, auth.HashToken(code), auth.HashToken(refresh), now.Add(account.RefreshLifetime), now)
	switch {
	case errors.Is(err, store.ErrGrantReused):
		return Issued{}, errors.Join(unknown("authorization code"), s.revokeTokens(ctx, tokens))
	case errors.Is(err, store.ErrGrantChanged), errors.Is(err, store.ErrGrantNotFound):
		return Issued{}, unknown("authorization code")
	case err != nil:
		return Issued{}, err
	}
	return s.issue(ctx, g.Grant, g.Scopes, refresh)
}

// Refresh rotates a refresh token: the presented one dies, a new one is
// issued with an access token of the asked scopes (a subset of the
// grant's) or all of them. The refusals, in order: a token that names no
// grant; one the grant never issued; one rotated out before, which
// revokes the grant and every token it issued (reuse detection); then the
// domain's (account.Grant.MayRefresh); then the rotation, one script.
func (s *Service) Refresh(ctx context.Context, token, clientID string, requested []account.Scope) (Issued, error) {
	id, ok := grantOf(token, refreshPrefix)
	if !ok {
		return Issued{}, unknown("refresh token")
	}
	hash := auth.HashToken(token)
	current, rotated, err := s.accounts.IssuedRefresh(ctx, id, hash)
	switch {
	case err != nil:
		return Issued{}, err
	case rotated:
		return Issued{}, s.revokeReused(ctx, id, "refresh token")
	case !current:
		return Issued{}, unknown("refresh token")
	}
	g, err := s.accounts.Grant(ctx, id)
	if errors.Is(err, store.ErrGrantNotFound) {
		return Issued{}, unknown("refresh token")
	}
	if err != nil {
		return Issued{}, err
	}
	now := s.instant()
	scopes, err := g.MayRefresh(clientID, requested, now)
	if err != nil {
		return Issued{}, err
	}
	next := refreshPrefix + id + "." + rand.Text()
	tokens, err := s.accounts.RotateRefresh(ctx, id, hash, auth.HashToken(next), now.Add(account.RefreshLifetime), now)
	switch {
	case errors.Is(err, store.ErrGrantReused):
		return Issued{}, errors.Join(unknown("refresh token"), s.revokeTokens(ctx, tokens))
	case errors.Is(err, store.ErrGrantChanged), errors.Is(err, store.ErrGrantNotFound):
		return Issued{}, unknown("refresh token")
	case err != nil:
		return Issued{}, err
	}
	return s.issue(ctx, g.Grant, scopes, next)
}

// issue mints the access token of a grant, records it under the grant and
// checks the grant is still live; a grant revoked in between revokes the
// token before anything is answered.
func (s *Service) issue(ctx context.Context, g account.Grant, scopes []account.Scope, refresh string) (Issued, error) {
	authScopes := make([]auth.Scope, len(scopes))
	for i, sc := range scopes {
		authScopes[i] = auth.Scope(sc)
	}
	secret, cred, err := s.credentials.MintAccountToken(ctx, auth.AccountTokenRequest{
		Tenant: g.Tenant, Environment: auth.Environment(g.Environment), AccountID: g.AccountID, ClientID: g.ClientID,
		Scopes: authScopes, Audience: g.Resource, CaseID: g.CaseID, Lifetime: TokenLifetime,
	})
	if err != nil {
		return Issued{}, err
	}
	live, err := s.accounts.HoldGrantToken(ctx, g.ID, cred.PublicID, cred.ExpiresAt, s.now())
	if err != nil || !live {
		if err == nil {
			err = refusal.New(account.CodeInvalidGrant, "the grant was revoked")
		}
		return Issued{}, errors.Join(err, s.credentials.Revoke(ctx, cred.PublicID))
	}
	return Issued{AccessToken: secret, Credential: cred, RefreshToken: refresh}, nil
}

// revokeReused revokes a grant whose code or refresh token came back
// after use, and answers the refusal.
func (s *Service) revokeReused(ctx context.Context, id, what string) error {
	s.logger.WarnContext(ctx, "grant revoked: a spent secret was presented again", "grant", id, "secret", what)
	tokens, err := s.accounts.RevokeGrant(ctx, id)
	if err != nil {
		return err
	}
	if err := s.revokeTokens(ctx, tokens); err != nil {
		return err
	}
	return refusal.New(account.CodeInvalidGrant, "the %s was used before: the grant and every token it issued are revoked", what)
}

func (s *Service) revokeTokens(ctx context.Context, publicIDs []string) error {
	for _, id := range publicIDs {
		if err := s.credentials.Revoke(ctx, id); err != nil && !errors.Is(err, auth.ErrNotFound) {
			return fmt.Errorf("revoking token %s: %w", id, err)
		}
	}
	return nil
}

// ErrNotClientsGrant is a refresh token of another client.
var ErrNotClientsGrant = errors.New("the refresh token was not issued to this client")

// RefreshTokenOf returns the grant of a live refresh token the client
// holds (its current one, not expired, the grant not revoked). Anything
// else is store.ErrGrantNotFound; another client's is ErrNotClientsGrant.
func (s *Service) RefreshTokenOf(ctx context.Context, clientID, token string) (account.Grant, error) {
	id, ok := grantOf(token, refreshPrefix)
	if !ok {
		return account.Grant{}, store.ErrGrantNotFound
	}
	current, _, err := s.accounts.IssuedRefresh(ctx, id, auth.HashToken(token))
	if err != nil {
		return account.Grant{}, err
	}
	if !current {
		return account.Grant{}, store.ErrGrantNotFound
	}
	g, err := s.accounts.Grant(ctx, id)
	if err != nil {
		return account.Grant{}, err
	}
	if g.Revoked || !s.now().Before(g.RefreshExpiresAt) {
		return account.Grant{}, store.ErrGrantNotFound
	}
	if g.ClientID != clientID {
		return account.Grant{}, ErrNotClientsGrant
	}
	return g.Grant, nil
}

// RevokeGrant revokes a grant (RFC 7009 of one of its refresh tokens) and
// every access token it issued.
func (s *Service) RevokeGrant(ctx context.Context, id string) error {
	tokens, err := s.accounts.RevokeGrant(ctx, id)
	if err != nil {
		return err
	}
	return s.revokeTokens(ctx, tokens)
}
