package auth

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Account tokens are the OAuth access tokens of accounts (people,
// organisations, autonomous agents: docs/accounts.md). They are
// credentials like a partner's, opaque and stored only as hashes, so
// every service's Middleware looks them up, caches them and refuses a
// revoked one within CacheTTL without asking the service that issued it.
// They differ in what they may do:
//
//   - an account token has no role, so every route that checks one
//     (RequireRole) refuses it, and no partner id, so it is no partner's;
//   - Middleware refuses it unless the route accepts account tokens for
//     its own audience (AcceptAccountTokens): a token issued for another
//     resource (RFC 8707) is not valid here;
//   - its scopes bound what it may do (RequireScope), and a token bound to
//     one case (a delegation on an existing case) touches no other;
//   - it acts for a side only through a membership naming its account
//     (AccountSubject), never through a capability.
//
// OAuth never grants administrator, tribunal or bilateral party powers: no
// scope names them, and the checks above give a token none.

// Scope is one power an account token may carry.
type Scope string

// The scopes of account tokens (docs/accounts.md, "Tokens").
const (
	ScopeCasesRead        Scope = "cases:read"
	ScopeCasesAct         Scope = "cases:act"
	ScopeEvidenceFile     Scope = "evidence:file"
	ScopeReadinessBuy     Scope = "readiness:buy"
	ScopeExecutionsReport Scope = "executions:report"
)

// Scopes lists every scope, in the order the documentation gives them.
var Scopes = []Scope{ScopeCasesRead, ScopeCasesAct, ScopeEvidenceFile, ScopeReadinessBuy, ScopeExecutionsReport}

// Valid reports whether s is one of Scopes.
func (s Scope) Valid() bool { return slices.Contains(Scopes, s) }

// MaxAccountTokenLifetime bounds an account token's life: it is refused
// everywhere from its expiry, and refreshed with a new one, never
// extended.
const MaxAccountTokenLifetime = time.Hour

// AccountTokenRequest describes an account token to issue.
type AccountTokenRequest struct {
	Tenant      string
	Environment Environment
	AccountID   string // the account the token acts for
	ClientID    string // the OAuth client it was issued to
	Scopes      []Scope
	// Audience is the resource the token is for (RFC 8707): a service
	// accepts only tokens for its own (AcceptAccountTokens).
	Audience string
	// CaseID binds the token to one case (a delegation on an existing
	// case); "" for a token not bound to one.
	CaseID   string
	Lifetime time.Duration
	// NotAfter, when set, caps the token's expiry: it expires at the
	// earlier of its issue plus Lifetime and NotAfter. A token exchanged
	// for another (RFC 8693) outlives not the one it was exchanged for,
	// whatever the time between the exchange's decision and the issue.
	NotAfter time.Time
}

// validateAccount reports the first missing or unusable field of whom an
// account's credential (a token, a session) acts for.
func validateAccount(tenant string, env Environment, accountID string) error {
	switch {
	case tenant == "":
		return errors.New("tenant required")
	case !env.Valid():
		return fmt.Errorf("environment %q is not sandbox or live", env)
	case !wellFormedID(accountID):
		return fmt.Errorf("account id %q is not 1 to 160 characters of A-Z a-z 0-9 . _ : -", accountID)
	}
	return nil
}

// Validate reports the first missing or unusable field.
func (r AccountTokenRequest) Validate() error {
	if err := validateAccount(r.Tenant, r.Environment, r.AccountID); err != nil {
		return err
	}
	switch {
	case !wellFormedID(r.ClientID):
		return fmt.Errorf("client id %q is not 1 to 160 characters of A-Z a-z 0-9 . _ : -", r.ClientID)
	case r.Audience == "" || strings.ContainsAny(r.Audience, " \t\r\n"):
		return fmt.Errorf("audience %q is not one resource", r.Audience)
	case r.CaseID != "" && !wellFormedID(r.CaseID):
		return fmt.Errorf("case id %q is not 1 to 160 characters of A-Z a-z 0-9 . _ : -", r.CaseID)
	case r.Lifetime <= 0 || r.Lifetime > MaxAccountTokenLifetime:
		return fmt.Errorf("lifetime %s is not within (0, %s]", r.Lifetime, MaxAccountTokenLifetime)
	}
	for i, s := range r.Scopes {
		if !s.Valid() {
			return fmt.Errorf("scope %q is not one of the account scopes", s)
		}
		if slices.Contains(r.Scopes[:i], s) {
			return fmt.Errorf("scope %q is asked twice", s)
		}
	}
	return nil
}

// idPattern is the platform's identifier alphabet and length, as event
// ids and key ids have it.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,160}$`)

func wellFormedID(id string) bool { return idPattern.MatchString(id) }

// MintAccountToken issues an account token and returns its secret, which
// is never stored and cannot be shown again. Its record and its token key
// expire with it, and it stays out of the credential index (List): an
// authorization server issues one every few minutes per client.
func (s *Store) MintAccountToken(ctx context.Context, req AccountTokenRequest) (string, Credential, error) {
	if err := req.Validate(); err != nil {
		return "", Credential{}, fmt.Errorf("issuing account token: %w", err)
	}
	prefix := "pc_oat_sbx_"
	if req.Environment == Live {
		prefix = "pc_oat_live_"
	}
	token := NewToken(prefix)
	now := s.now().UTC().Truncate(time.Millisecond)
	expiresAt := now.Add(req.Lifetime)
	if notAfter := req.NotAfter.UTC().Truncate(time.Millisecond); !req.NotAfter.IsZero() && notAfter.Before(expiresAt) {
		expiresAt = notAfter
	}
	if !expiresAt.After(now) {
		return "", Credential{}, fmt.Errorf("issuing account token: its expiry %s is not after its issue", expiresAt.Format(time.RFC3339Nano))
	}
	cred := Credential{
		PublicID:    "oat_" + strings.TrimPrefix(newPublicID(), "cred_"),
		Tenant:      req.Tenant,
		Environment: req.Environment,
		AccountID:   req.AccountID,
		ClientID:    req.ClientID,
		Scopes:      slices.Clone(req.Scopes),
		Audience:    req.Audience,
		CaseID:      req.CaseID,
		CreatedAt:   now,
		ExpiresAt:   expiresAt,
	}
	if err := s.storeAccountCredential(ctx, token, cred); err != nil {
		return "", Credential{}, fmt.Errorf("storing account token: %w", err)
	}
	return token, cred, nil
}

// storeAccountCredential keeps an account's short-lived credential (a
// token or a session) until it expires: its record, then its token's key.
// The record first, as Mint does: a crash in between leaves an unusable
// record that expires, never a token pointing at nothing.
func (s *Store) storeAccountCredential(ctx context.Context, token string, cred Credential) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, credentialKey(cred.PublicID), toRecord(cred))
		p.PExpireAt(ctx, credentialKey(cred.PublicID), cred.ExpiresAt)
		return nil
	})
	if err != nil {
		return err
	}
	return s.rdb.Set(ctx, tokenKey(HashToken(token)), cred.PublicID, cred.ExpiresAt.Sub(cred.CreatedAt)).Err()
}

// ForAccount reports whether the credential is an account token.
func (c Credential) ForAccount() bool { return c.AccountID != "" }

// HasScope reports whether an account token carries scope s. A partner
// credential carries no scopes: its powers are its role's and its grants'.
func (c Credential) HasScope(s Scope) bool { return slices.Contains(c.Scopes, s) }

// MayTouch reports whether the credential may touch resource
// ("case:<id>", "draft:<id>") at all: an account token bound to a case
// touches that case alone. It says nothing about the side or the act.
func (c Credential) MayTouch(resource string) bool {
	return c.CaseID == "" || resource == "case:"+c.CaseID
}

// AccountSubject names an account as a membership subject. Only a token of
// that account satisfies it (Subject.Admits).
func AccountSubject(accountID string) Subject { return Subject("account:" + accountID) }

// account returns the account id an account subject names; Membership's
// Validate checks that it is well formed.
func (s Subject) account() (string, bool) {
	id, ok := strings.CutPrefix(string(s), "account:")
	return id, ok && id != ""
}
