package agents_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/agents"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

const (
	audience = "https://api.pcourt.test"
	mcp      = audience + "/mcp"
)

var operator = agents.Operator{Tenant: "tenant-test", Environment: "sandbox", PartnerID: "partner-test", CredentialID: "cred_operator"}

type fixture struct {
	svc      *agents.Service
	accounts *store.Accounts
	creds    *auth.Store
	// during, when set, runs once at the next reading of the clock: the
	// test's way to act between two steps of an issue.
	during atomic.Pointer[func()]
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	rdb := redistest.NewClient(t)
	f := &fixture{accounts: store.New(rdb), creds: auth.NewStore(rdb, auth.DefaultStoreConfig())}
	clock := func() time.Time {
		if act := f.during.Swap(nil); act != nil {
			(*act)()
		}
		return time.Now()
	}
	f.svc = agents.New(f.accounts, f.creds, slog.New(slog.NewTextHandler(io.Discard, nil)), clock)
	return f
}

// verifiedAgent registers an agent, verifies it and gives it one client.
func (f *fixture) verifiedAgent(t *testing.T) (account.Account, agents.NewClient) {
	t.Helper()
	ctx := context.Background()
	a, err := f.svc.Register(ctx, operator, account.Registration{DisplayName: "Claims agent"})
	require.NoError(t, err)
	a, err = f.svc.Attest(ctx, operator, a.ID, account.Attestation{Model: "m", Provider: "p", Contact: "ops@example.com", AcceptsResponsibility: true})
	require.NoError(t, err)
	c, err := f.svc.AddClient(ctx, operator, a.ID, []account.Scope{"cases:read"})
	require.NoError(t, err)
	return a, c
}

// requireRevoked fails unless every token the client ever held is revoked.
func (f *fixture) requireHeldTokensRevoked(t *testing.T, accountID, clientID string) {
	t.Helper()
	ctx := context.Background()
	held, err := f.accounts.HeldTokens(ctx, accountID, clientID, time.Now())
	require.NoError(t, err)
	for _, id := range held {
		cred, err := f.creds.Get(ctx, id)
		require.NoError(t, err)
		require.False(t, cred.ActiveAt(time.Now()), "token %s of revoked client %s is still active", id, clientID)
	}
}

// The operator revokes the client after the token was minted but before
// the issue recorded it among the client's tokens: the revocation's list
// of tokens to revoke misses it. The issue reads the client again after
// recording the token, finds it revoked, revokes the token and answers
// no token.
func TestAClientRevokedDuringAnIssueGetsNoLiveToken(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	a, c := f.verifiedAgent(t)

	revokedDuring := func() {
		_, err := f.svc.RevokeClient(ctx, operator, a.ID, c.Client.ID)
		require.NoError(t, err)
	}
	// The issue reads the clock once, just before it records the minted
	// token (the instant HoldToken drops expired tokens at).
	f.during.Store(&revokedDuring)
	_, err := f.svc.IssueClientCredentialsToken(ctx, c.Client.ID, nil, audience)
	require.ErrorIs(t, err, agents.ErrClientAuthentication)
	require.Nil(t, f.during.Load(), "the revocation ran during the issue")

	held, err := f.accounts.HeldTokens(ctx, a.ID, c.Client.ID, time.Now())
	require.NoError(t, err)
	require.Len(t, held, 1, "the token was minted and recorded")
	f.requireHeldTokensRevoked(t, a.ID, c.Client.ID)
}

// Issues and revocations at once, many times: whichever order they run
// in, once both have returned no token an issue answered is active.
func TestNoIssueRacingARevocationAnswersALiveToken(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	a, err := f.svc.Register(ctx, operator, account.Registration{DisplayName: "Claims agent"})
	require.NoError(t, err)
	_, err = f.svc.Attest(ctx, operator, a.ID, account.Attestation{Model: "m", Provider: "p", Contact: "ops@example.com", AcceptsResponsibility: true})
	require.NoError(t, err)

	answered := 0
	for range 30 {
		c, err := f.svc.AddClient(ctx, operator, a.ID, []account.Scope{"cases:read"})
		require.NoError(t, err)
		var tok agents.Token
		var issueErr error
		var wg sync.WaitGroup
		wg.Go(func() { tok, issueErr = f.svc.IssueClientCredentialsToken(ctx, c.Client.ID, nil, audience) })
		wg.Go(func() {
			_, err := f.svc.RevokeClient(ctx, operator, a.ID, c.Client.ID)
			require.NoError(t, err)
		})
		wg.Wait()
		if issueErr == nil {
			answered++
			cred, err := f.creds.Get(ctx, tok.Credential.PublicID)
			require.NoError(t, err)
			require.False(t, cred.ActiveAt(time.Now()), "an answered token of a revoked client is active")
		} else {
			require.ErrorIs(t, issueErr, agents.ErrClientAuthentication)
		}
		f.requireHeldTokensRevoked(t, a.ID, c.Client.ID)
	}
	t.Logf("%d of 30 issues answered before the revocation, every one revoked after it", answered)
}

// The operator revokes the subject's client after the exchange decided but
// before it recorded the new token under that client: the revocation's
// list of tokens to revoke misses it. The exchange reads the client again
// after recording it, finds it revoked, revokes the new token and answers
// invalid_grant.
func TestAClientRevokedDuringAnExchangeLeavesNoLiveToken(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	a, c := f.verifiedAgent(t)
	subject, err := f.svc.IssueClientCredentialsToken(ctx, c.Client.ID, nil, mcp)
	require.NoError(t, err)

	// The exchange reads the clock three times: the subject's liveness,
	// the decision, and the instant HoldToken drops expired tokens at,
	// just before it records the new one. The revocation runs at the third.
	readings := 0
	var revokedDuring func()
	revokedDuring = func() {
		if readings++; readings < 3 {
			f.during.Store(&revokedDuring)
			return
		}
		_, err := f.svc.RevokeClient(ctx, operator, a.ID, c.Client.ID)
		require.NoError(t, err)
	}
	f.during.Store(&revokedDuring)
	_, err = f.svc.ExchangeToken(ctx, agents.ExchangeRequest{SubjectToken: subject.Secret, From: mcp, Audience: audience})
	require.ErrorIs(t, err, &account.RefusalError{Code: account.CodeInvalidGrant})
	require.Equal(t, 3, readings, "the revocation ran during the exchange")

	held, err := f.accounts.HeldTokens(ctx, a.ID, c.Client.ID, time.Now())
	require.NoError(t, err)
	require.Len(t, held, 2, "the subject and the exchanged token were both recorded")
	f.requireHeldTokensRevoked(t, a.ID, c.Client.ID)
}

func TestTheMCPClientIsAuthenticatedByItsSecretsHashAlone(t *testing.T) {
	c := agents.PlatformClient{ID: "ocl_mcp", SecretHash: auth.HashToken("the-secret")}
	require.NoError(t, c.Authenticate("ocl_mcp", "the-secret"))
	require.ErrorIs(t, c.Authenticate("ocl_mcp", "the-secreT"), agents.ErrClientAuthentication)
	require.ErrorIs(t, c.Authenticate("ocl_other", "the-secret"), agents.ErrClientAuthentication)
	require.ErrorIs(t, agents.PlatformClient{}.Authenticate("", auth.HashToken("")), agents.ErrClientAuthentication, "no platform client configured")
}
