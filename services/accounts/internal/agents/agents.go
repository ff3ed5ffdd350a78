// Package agents is the application layer of autonomous-agent accounts,
// between the HTTP surfaces (the operator's routes, the OAuth endpoints)
// and the domain:
//
//	operator registers an agent → adds clients → files the attestation
//	(verified) → the agent's client gets tokens by client credentials,
//	for the API or the MCP server → the MCP server exchanges those it
//	receives for the API's (exchange.go) → the operator revokes a client,
//	and with it the tokens it holds, exchanged ones included.
//
// Every act names the operator (tenant, environment, partner) it is done
// for; an account of another operator is not found, whatever its id.
package agents

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

// TokenLifetime is how long an access token lives (docs/accounts.md).
const TokenLifetime = 10 * time.Minute

// Operator is who acts on the operator's routes: a partner orchestrator
// credential of a tenant and environment.
type Operator struct {
	Tenant       string
	Environment  string
	PartnerID    string
	CredentialID string
}

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

// newID returns prefix and 26 characters of crypto randomness.
func newID(prefix string) string { return prefix + rand.Text() }

// Register registers a new, unverified agent account of the operator.
func (s *Service) Register(ctx context.Context, op Operator, r account.Registration) (account.Account, error) {
	a, err := account.RegisterAgent(newID("acct_"), op.Tenant, op.Environment, op.PartnerID, r, s.now().UTC().Truncate(time.Millisecond))
	if err != nil {
		return account.Account{}, err
	}
	if err := s.accounts.Create(ctx, a); err != nil {
		return account.Account{}, err
	}
	return a, nil
}

// Get reads one of the operator's accounts.
func (s *Service) Get(ctx context.Context, op Operator, id string) (account.Account, error) {
	a, err := s.accounts.Get(ctx, id)
	if err != nil {
		return account.Account{}, err
	}
	if !op.operates(a.Account) {
		return account.Account{}, store.ErrNotFound
	}
	return a.Account, nil
}

// List reads the operator's accounts, oldest first.
func (s *Service) List(ctx context.Context, op Operator) ([]account.Account, error) {
	return s.accounts.ListByOperator(ctx, op.Tenant, op.Environment, op.PartnerID)
}

// operates reports whether the account is the operator's, in its tenant
// and environment: anything else is not found for it.
func (op Operator) operates(a account.Account) bool {
	return a.Tenant == op.Tenant && a.Environment == op.Environment && a.OperatorPartnerID == op.PartnerID
}

// Attest files the operator's attestation, which verifies the agent.
func (s *Service) Attest(ctx context.Context, op Operator, id string, att account.Attestation) (account.Account, error) {
	att.AttestedBy = op.CredentialID
	return s.modify(ctx, op, id, func(a account.Account) (account.Account, error) {
		return a.Attest(op.PartnerID, att, s.now().UTC().Truncate(time.Millisecond))
	})
}

// NewClient is a registered client with its secret, which is shown once.
type NewClient struct {
	Client account.Client
	Secret string
}

// AddClient registers a confidential OAuth client of the account.
func (s *Service) AddClient(ctx context.Context, op Operator, id string, scopes []account.Scope) (NewClient, error) {
	secret := auth.NewToken("pc_ocs_")
	var added account.Client
	_, err := s.modify(ctx, op, id, func(a account.Account) (account.Account, error) {
		next, c, err := a.AddClient(op.PartnerID, newID("ocl_"), auth.HashToken(secret), scopes, s.now().UTC().Truncate(time.Millisecond))
		added = c
		return next, err
	})
	if err != nil {
		return NewClient{}, err
	}
	if err := s.accounts.IndexClient(ctx, added.ID, id); err != nil {
		return NewClient{}, err
	}
	return NewClient{Client: added, Secret: secret}, nil
}

// RevokeClient revokes a client and every token it holds.
func (s *Service) RevokeClient(ctx context.Context, op Operator, id, clientID string) (account.Account, error) {
	a, err := s.modify(ctx, op, id, func(a account.Account) (account.Account, error) {
		return a.RevokeClient(op.PartnerID, clientID, s.now())
	})
	if err != nil {
		return a, err
	}
	return a, s.revokeHeldTokens(ctx, id, clientID)
}

func (s *Service) revokeHeldTokens(ctx context.Context, accountID, clientID string) error {
	ids, err := s.accounts.HeldTokens(ctx, accountID, clientID, s.now())
	if err != nil {
		return err
	}
	for _, publicID := range ids {
		if err := s.credentials.Revoke(ctx, publicID); err != nil && !errors.Is(err, auth.ErrNotFound) {
			return fmt.Errorf("revoking token %s of client %s: %w", publicID, clientID, err)
		}
	}
	return nil
}

func (s *Service) modify(ctx context.Context, op Operator, id string, change func(account.Account) (account.Account, error)) (account.Account, error) {
	return s.accounts.Modify(ctx, id, func(a account.Account) (account.Account, error) {
		if !op.operates(a) {
			return a, store.ErrNotFound
		}
		return change(a)
	})
}

// ErrClientAuthentication is a client id that names no active client, or
// a secret that is not its secret. The token endpoint answers both alike.
var ErrClientAuthentication = errors.New("client authentication failed")

// AuthenticateClient checks a client's id and secret and returns its
// account and the client.
func (s *Service) AuthenticateClient(ctx context.Context, clientID, secret string) (account.Account, account.Client, error) {
	a, c, err := s.accounts.ClientAccount(ctx, clientID)
	if errors.Is(err, store.ErrNotFound) {
		return account.Account{}, account.Client{}, ErrClientAuthentication
	}
	if err != nil {
		return account.Account{}, account.Client{}, err
	}
	if subtle.ConstantTimeCompare([]byte(auth.HashToken(secret)), []byte(c.SecretHash)) != 1 || !c.Active() {
		return account.Account{}, account.Client{}, ErrClientAuthentication
	}
	return a, c, nil
}

// Token is an issued access token.
type Token struct {
	Secret     string
	Credential auth.Credential
}

// IssueClientCredentialsToken issues an access token for audience to an
// authenticated client of a verified agent, with the requested scopes (all
// of the client's when none are asked).
//
// The client was authenticated before this call, and an operator may
// revoke it concurrently; so the token is recorded as the client's first
// and the client read again after: a revocation that listed the client's
// tokens before this one was recorded finds the client revoked here, and
// the token is revoked before it is answered.
func (s *Service) IssueClientCredentialsToken(ctx context.Context, clientID string, requested []account.Scope, audience string) (Token, error) {
	a, c, err := s.accounts.ClientAccount(ctx, clientID)
	if err != nil {
		return Token{}, err
	}
	if err := a.MayUseClientCredentials(); err != nil {
		return Token{}, err
	}
	scopes, err := c.Grant(requested)
	if err != nil {
		return Token{}, err
	}
	authScopes := make([]auth.Scope, len(scopes))
	for i, sc := range scopes {
		authScopes[i] = auth.Scope(sc)
	}
	secret, cred, err := s.credentials.MintAccountToken(ctx, auth.AccountTokenRequest{
		Tenant: a.Tenant, Environment: auth.Environment(a.Environment), AccountID: a.ID, ClientID: c.ID,
		Scopes: authScopes, Audience: audience, Lifetime: TokenLifetime,
	})
	if err != nil {
		return Token{}, err
	}
	if err := s.accounts.HoldToken(ctx, a.ID, c.ID, cred.PublicID, cred.ExpiresAt, s.now()); err != nil {
		return Token{}, errors.Join(err, s.credentials.Revoke(ctx, cred.PublicID))
	}
	if _, again, err := s.accounts.ClientAccount(ctx, clientID); err != nil || !again.Active() {
		return Token{}, errors.Join(ErrClientAuthentication, err, s.credentials.Revoke(ctx, cred.PublicID))
	}
	return Token{Secret: secret, Credential: cred}, nil
}

// ErrNotClientsToken is a token that another client holds.
var ErrNotClientsToken = errors.New("the token was not issued to this client")

// TokenOf returns the account token secret names, if it is live and was
// issued to clientID. A token that is unknown, expired or revoked is
// auth.ErrInvalidCredential; one of another client is ErrNotClientsToken.
func (s *Service) TokenOf(ctx context.Context, clientID, secret string) (auth.Credential, error) {
	cred, err := s.credentials.Authenticate(ctx, secret)
	if err != nil {
		return auth.Credential{}, err
	}
	// Authenticate may answer from this replica's cache; what is revoked
	// or introspected is read afresh, so a token revoked a moment ago is
	// never reported active here.
	if cred, err = s.credentials.Get(ctx, cred.PublicID); errors.Is(err, auth.ErrNotFound) || (err == nil && !cred.ActiveAt(s.now())) {
		return auth.Credential{}, auth.ErrInvalidCredential
	} else if err != nil {
		return auth.Credential{}, err
	}
	if !cred.ForAccount() {
		return auth.Credential{}, auth.ErrInvalidCredential
	}
	if cred.ClientID != clientID {
		return auth.Credential{}, ErrNotClientsToken
	}
	return cred, nil
}

// RevokeToken revokes an access token the client holds (RFC 7009).
func (s *Service) RevokeToken(ctx context.Context, cred auth.Credential) error {
	return s.credentials.Revoke(ctx, cred.PublicID)
}
