package account_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/accounts/internal/account"
)

var now = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

func refusedWith(t *testing.T, err error, code account.RefusalCode) {
	t.Helper()
	var r *account.RefusalError
	require.True(t, errors.As(err, &r), "want refusal %s, got %v", code, err)
	require.Equal(t, code, r.Code)
}

func agent(t *testing.T) account.Account {
	a, err := account.RegisterAgent("acct_1", "tenant-a", "sandbox", "partner-op", account.Registration{DisplayName: "Claims bot"}, now)
	require.NoError(t, err)
	return a
}

var attestation = account.Attestation{Model: "m", Provider: "p", Contact: "ops@x.test", AcceptsResponsibility: true, AttestedBy: "cred_1"}

func TestAnAgentIsUnverifiedUntilItsOperatorAttestsAndOnlyThenUsesClientCredentials(t *testing.T) {
	a := agent(t)
	require.Equal(t, account.StatusUnverified, a.Status)
	refusedWith(t, a.MayUseClientCredentials(), account.CodeNotVerified)

	verified, err := a.Attest("partner-op", attestation, now.Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, account.StatusVerified, verified.Status)
	require.Equal(t, now.Add(time.Minute), verified.Attestation.AttestedAt)
	require.NoError(t, verified.MayUseClientCredentials())
	require.Equal(t, account.StatusUnverified, a.Status, "the input is unchanged")
}

func TestAttestationRefusalsComeInTheirDocumentedOrder(t *testing.T) {
	a := agent(t)
	verified, err := a.Attest("partner-op", attestation, now)
	require.NoError(t, err)

	bad := attestation
	bad.AcceptsResponsibility = false
	_, err = verified.Attest("partner-other", bad, now)
	refusedWith(t, err, account.CodeNotOperator) // before everything
	_, err = verified.Attest("partner-op", bad, now)
	refusedWith(t, err, account.CodeAlreadyVerified) // before the fields
	_, err = a.Attest("partner-op", bad, now)
	refusedWith(t, err, account.CodeInvalidAccount)
	noContact := attestation
	noContact.Contact = " ops"
	_, err = a.Attest("partner-op", noContact, now)
	refusedWith(t, err, account.CodeInvalidAccount)
}

func TestAClientsTokensNeverCarryMoreThanItsScopes(t *testing.T) {
	a := agent(t)
	a, c, err := a.AddClient("partner-op", "ocl_1", "hash", []account.Scope{"cases:read", "cases:act"}, now)
	require.NoError(t, err)
	got, err := c.Grant(nil)
	require.NoError(t, err)
	require.Equal(t, []account.Scope{"cases:read", "cases:act"}, got, "no scope asked: all the client's")
	got, err = c.Grant([]account.Scope{"cases:act"})
	require.NoError(t, err)
	require.Equal(t, []account.Scope{"cases:act"}, got)
	_, err = c.Grant([]account.Scope{"executions:report"})
	refusedWith(t, err, account.CodeInvalidScope)
	_, err = c.Grant([]account.Scope{"admin"})
	refusedWith(t, err, account.CodeInvalidScope)
	require.Equal(t, 1, a.ActiveClients())
}

func TestClientRegistrationRefusalsComeInTheirDocumentedOrder(t *testing.T) {
	a := agent(t)
	_, _, err := a.AddClient("partner-other", "ocl_x", "h", []account.Scope{"nope"}, now)
	refusedWith(t, err, account.CodeNotOperator)
	_, _, err = a.AddClient("partner-op", "ocl_x", "h", nil, now)
	refusedWith(t, err, account.CodeInvalidScope)
	for i := range account.MaxClients {
		a, _, err = a.AddClient("partner-op", "ocl_"+string(rune('a'+i)), "h", []account.Scope{"cases:read"}, now)
		require.NoError(t, err)
	}
	_, _, err = a.AddClient("partner-op", "ocl_x", "h", []account.Scope{"bad"}, now)
	refusedWith(t, err, account.CodeInvalidScope) // scopes before the count
	_, _, err = a.AddClient("partner-op", "ocl_x", "h", []account.Scope{"cases:read"}, now)
	refusedWith(t, err, account.CodeTooManyClients)

	a, err = a.RevokeClient("partner-op", "ocl_a", now)
	require.NoError(t, err)
	require.Equal(t, account.MaxClients-1, a.ActiveClients())
	again, err := a.RevokeClient("partner-op", "ocl_a", now.Add(time.Hour))
	require.NoError(t, err, "revoking twice is not refused")
	c, _ := again.Client("ocl_a")
	require.Equal(t, now, c.RevokedAt, "and keeps the first revocation")
	_, err = a.RevokeClient("partner-op", "ocl_missing", now)
	refusedWith(t, err, account.CodeClientNotFound)
	_, _, err = a.AddClient("partner-op", "ocl_x", "h", []account.Scope{"cases:read"}, now)
	require.NoError(t, err, "a revoked client frees its place")
}
