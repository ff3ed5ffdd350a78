package account_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/accounts/internal/account"
)

const mcp = "https://api.pcourt.test/mcp"

// exchangeable returns a verified agent with one client and a live MCP
// token of that client.
func exchangeable(t *testing.T) (account.Account, account.Subject) {
	t.Helper()
	a, err := agent(t).Attest("partner-op", attestation, now)
	require.NoError(t, err)
	a, c, err := a.AddClient("partner-op", "ocl_1", "hash", []account.Scope{"cases:read", "cases:act", "evidence:file"}, now)
	require.NoError(t, err)
	return a, account.Subject{
		Tenant: a.Tenant, Environment: a.Environment, AccountID: a.ID, ClientID: c.ID, Audience: mcp,
		Scopes: []account.Scope{"cases:read", "cases:act"}, CaseID: "case_1", ExpiresAt: now.Add(7 * time.Minute),
	}
}

func TestAnExchangedTokenNeverWidensItsSubject(t *testing.T) {
	a, subject := exchangeable(t)
	got, err := a.Exchange(subject, mcp, nil, now)
	require.NoError(t, err)
	require.Equal(t, account.Exchanged{Scopes: []account.Scope{"cases:read", "cases:act"}, NotAfter: subject.ExpiresAt}, got,
		"no scope asked: all the subject's, and never past its expiry")
	got, err = a.Exchange(subject, mcp, []account.Scope{"cases:read"}, now)
	require.NoError(t, err)
	require.Equal(t, []account.Scope{"cases:read"}, got.Scopes, "or fewer")

	_, err = a.Exchange(subject, mcp, []account.Scope{"cases:read", "evidence:file"}, now)
	refusedWith(t, err, account.CodeInvalidScope) // the client holds it, the subject does not
	_, err = a.Exchange(subject, mcp, []account.Scope{"administrator"}, now)
	refusedWith(t, err, account.CodeInvalidScope)
	_, err = a.Exchange(subject, mcp, []account.Scope{"cases:read", "cases:read"}, now)
	refusedWith(t, err, account.CodeInvalidScope)
}

func TestExchangeRefusalsComeInTheirDocumentedOrder(t *testing.T) {
	a, subject := exchangeable(t)
	wide := []account.Scope{"executions:report"}
	for name, tc := range map[string]struct {
		edit func(*account.Account, *account.Subject)
		code account.RefusalCode
	}{
		"a token for the API": {func(_ *account.Account, s *account.Subject) { s.Audience = "https://api.pcourt.test" }, account.CodeInvalidGrant},
		"another account's":   {func(_ *account.Account, s *account.Subject) { s.AccountID = "acct_2" }, account.CodeInvalidGrant},
		"another environment": {func(_ *account.Account, s *account.Subject) { s.Environment = "live" }, account.CodeInvalidGrant},
		"an unverified agent": {func(a *account.Account, _ *account.Subject) { a.Status = account.StatusUnverified }, account.CodeInvalidGrant},
		"an unknown client":   {func(_ *account.Account, s *account.Subject) { s.ClientID = "ocl_2" }, account.CodeInvalidGrant},
		"a revoked client": {func(a *account.Account, s *account.Subject) {
			*a, _ = a.RevokeClient("partner-op", s.ClientID, now)
		}, account.CodeInvalidGrant},
		"under a second left": {func(_ *account.Account, s *account.Subject) { s.ExpiresAt = now.Add(999 * time.Millisecond) }, account.CodeInvalidGrant},
		"all well but scopes": {func(*account.Account, *account.Subject) {}, account.CodeInvalidScope},
	} {
		t.Run(name, func(t *testing.T) {
			a, s := a, subject
			tc.edit(&a, &s)
			_, err := a.Exchange(s, mcp, wide, now) // the subject's refusal comes before the scopes'
			refusedWith(t, err, tc.code)
		})
	}
}
