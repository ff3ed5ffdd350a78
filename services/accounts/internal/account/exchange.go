package account

import (
	"slices"
	"time"

	"github.com/pcourt/pcourt/libs/refusal"
)

// CodeInvalidGrant: the subject token of an exchange is not one this
// server exchanges (RFC 8693's invalid_grant): not for the MCP server, of
// an account that may no longer get tokens, of a revoked client, or about
// to expire.
const CodeInvalidGrant RefusalCode = "invalid_grant"

// MinExchangeLifetime is the least a subject token must have left to be
// exchanged: a token that would expire within it is of no use to anyone.
const MinExchangeLifetime = time.Second

// Subject is a live access token presented for exchange (RFC 8693), as
// the domain sees it.
type Subject struct {
	Tenant      string
	Environment string
	AccountID   string
	ClientID    string
	Audience    string
	Scopes      []Scope
	CaseID      string
	ExpiresAt   time.Time
}

// Exchanged is what the token issued in exchange for a subject gets: the
// subject's account, client and case, with these scopes, expiring by
// NotAfter (the subject's expiry) at the latest.
type Exchanged struct {
	Scopes   []Scope
	NotAfter time.Time
}

// Exchange decides whether subject, a live token of the account a, may be
// exchanged for a token of another audience with the requested scopes
// (all of the subject's when none are asked). from is the one audience
// whose tokens are exchanged (the MCP server's). An exchange never widens
// the subject: the same account, client and case, its scopes or fewer, and
// an expiry no later than its own.
//
// Refusals, in order: invalid_grant (the subject is not for from, not of
// this account's tenant and environment, the account is no longer a
// verified agent, its client is unknown or revoked, or the subject expires
// within MinExchangeLifetime), invalid_scope (a scope the subject does not
// carry, one that is not an account scope, or one named twice).
func (a Account) Exchange(subject Subject, from string, requested []Scope, now time.Time) (Exchanged, error) {
	switch {
	case subject.Audience != from:
		return Exchanged{}, refusal.New(CodeInvalidGrant, "the subject token is for %s; only tokens for %s are exchanged", subject.Audience, from)
	case subject.AccountID != a.ID || subject.Tenant != a.Tenant || subject.Environment != a.Environment:
		return Exchanged{}, refusal.New(CodeInvalidGrant, "the subject token is not of account %s", a.ID)
	}
	if err := a.MayUseClientCredentials(); err != nil {
		return Exchanged{}, refusal.New(CodeInvalidGrant, "account %s is no longer a verified autonomous agent", a.ID)
	}
	if c, ok := a.Client(subject.ClientID); !ok || !c.Active() {
		return Exchanged{}, refusal.New(CodeInvalidGrant, "the subject token's client %s is revoked", subject.ClientID)
	}
	if subject.ExpiresAt.Sub(now) < MinExchangeLifetime {
		return Exchanged{}, refusal.New(CodeInvalidGrant, "the subject token expires within %s", MinExchangeLifetime)
	}
	if len(requested) == 0 {
		return Exchanged{Scopes: slices.Clone(subject.Scopes), NotAfter: subject.ExpiresAt}, nil
	}
	if err := validScopes(requested); err != nil {
		return Exchanged{}, err
	}
	for _, s := range requested {
		if !slices.Contains(subject.Scopes, s) {
			return Exchanged{}, refusal.New(CodeInvalidScope, "the subject token does not carry scope %s; an exchange never widens a token", s)
		}
	}
	return Exchanged{Scopes: slices.Clone(requested), NotAfter: subject.ExpiresAt}, nil
}
