package auth_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/redistest"
)

func TestMintAuthenticateRevoke(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		store := auth.NewStore(rdb, auth.DefaultStoreConfig())

		token, cred := authtest.Mint(t, store, auth.RoleClaimantAgent, authtest.WithAgent("agent-7"))
		require.Regexp(t, `^pc_sbx_[A-Za-z0-9_-]{43}$`, token)

		got, err := store.Authenticate(ctx, token)
		require.NoError(t, err)
		require.Equal(t, cred, got)
		require.Equal(t, "agent-7", got.AgentID)

		// Only the hash of the secret is at rest.
		for _, k := range redistest.Keys(t, rdb, "*") {
			require.NotContains(t, k, token)
			vals, _ := rdb.HGetAll(ctx, k).Result()
			for _, v := range vals {
				require.NotContains(t, v, token)
			}
		}

		_, err = store.Authenticate(ctx, "pc_sbx_not-a-token")
		require.ErrorIs(t, err, auth.ErrInvalidCredential)

		// A worker that kept only the hash finds the same credential.
		got, err = auth.NewStore(rdb, auth.DefaultStoreConfig()).AuthenticateHash(ctx, auth.HashToken(token))
		require.NoError(t, err)
		require.Equal(t, cred, got)
		_, err = store.AuthenticateHash(ctx, auth.HashToken("pc_sbx_not-a-token"))
		require.ErrorIs(t, err, auth.ErrInvalidCredential)

		require.NoError(t, store.Revoke(ctx, cred.PublicID))
		fresh := auth.NewStore(rdb, auth.DefaultStoreConfig())
		_, err = fresh.Authenticate(ctx, token)
		require.ErrorIs(t, err, auth.ErrInvalidCredential)
		_, err = auth.NewStore(rdb, auth.DefaultStoreConfig()).AuthenticateHash(ctx, auth.HashToken(token))
		require.ErrorIs(t, err, auth.ErrInvalidCredential, "revoked, whichever way it is asked")

		require.ErrorIs(t, store.Revoke(ctx, "cred_unknown"), auth.ErrNotFound)

		list, err := store.List(ctx, "tenant-test")
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.False(t, list[0].Active())
	})
}

func TestMintRefusesIncompleteRequests(t *testing.T) {
	store := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	for _, req := range []auth.MintRequest{
		{Environment: auth.Sandbox, Role: auth.RoleClaimantAgent, PartnerID: "p"},
		{Tenant: "t", Environment: "staging", Role: auth.RoleClaimantAgent, PartnerID: "p"},
		{Tenant: "t", Environment: auth.Live, Role: "admin", PartnerID: "p"},
		{Tenant: "t", Environment: auth.Live, Role: auth.RoleRespondentAgent},
	} {
		_, _, err := store.Mint(context.Background(), req)
		require.Error(t, err, "%+v", req)
	}
}

// Two stores with their own Redis connections and caches stand for two
// replicas: a revocation made through one is refused by the other, whose cache
// was warm, within five seconds.
func TestRevocationReachesOtherReplicasWithinFiveSeconds(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	replicaA := auth.NewStore(srv.Client(t), auth.DefaultStoreConfig())
	replicaB := auth.NewStore(srv.Client(t), auth.DefaultStoreConfig())

	token, cred := authtest.Mint(t, replicaA, auth.RolePlatformOrchestrator)
	_, err := replicaB.Authenticate(ctx, token) // warms B's cache
	require.NoError(t, err)

	revokedAt := time.Now()
	require.NoError(t, replicaA.Revoke(ctx, cred.PublicID))
	require.Eventually(t, func() bool {
		_, err := replicaB.Authenticate(ctx, token)
		return errors.Is(err, auth.ErrInvalidCredential)
	}, 5*time.Second, 50*time.Millisecond)
	require.Less(t, time.Since(revokedAt), 5*time.Second)
}

func TestMiddleware(t *testing.T) {
	srv := redistest.Start(t)
	store := auth.NewStore(srv.Client(t), auth.DefaultStoreConfig())
	orchestrator, _ := authtest.Mint(t, store, auth.RolePlatformOrchestrator)
	agent, _ := authtest.Mint(t, store, auth.RoleClaimantAgent)
	revokedToken, revoked := authtest.Mint(t, store, auth.RoleClaimantAgent)
	require.NoError(t, store.Revoke(context.Background(), revoked.PublicID))

	cfg := httpserver.DefaultConfig()
	s := httpserver.New(cfg, httpserver.Deps{Service: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	s.Router().GET("/orchestrate", auth.Middleware(store), auth.RequireRole(auth.RolePlatformOrchestrator), func(c *gin.Context) {
		cred, _ := auth.CredentialFrom(c.Request.Context())
		c.String(http.StatusOK, cred.PublicID)
	})
	ts := httptest.NewServer(s.Router())
	t.Cleanup(ts.Close)

	tests := []struct {
		name, header string
		status       int
	}{
		{"orchestrator", "Bearer " + orchestrator, 200},
		{"scheme is case-insensitive", "bearer " + orchestrator, 200},
		{"missing", "", 401},
		{"wrong scheme", "Basic " + orchestrator, 401},
		{"unknown token", "Bearer pc_sbx_nope", 401},
		{"revoked", "Bearer " + revokedToken, 401},
		{"wrong role", "Bearer " + agent, 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, ts.URL+"/orchestrate", nil)
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
			if tc.status == 401 {
				require.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
			}
		})
	}

	// When Redis cannot be asked, a credential is not refused: the answer is 503.
	srv.Stop()
	fresh := auth.NewStore(srv.Client(t), auth.DefaultStoreConfig())
	s2 := httpserver.New(cfg, httpserver.Deps{Service: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	s2.Router().GET("/x", auth.Middleware(fresh), func(c *gin.Context) { c.Status(200) })
	ts2 := httptest.NewServer(s2.Router())
	t.Cleanup(ts2.Close)
	req, _ := http.NewRequest(http.MethodGet, ts2.URL+"/x", nil)
	req.Header.Set("Authorization", "Bearer "+orchestrator)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 503, resp.StatusCode)
}

func TestAuthorizeSide(t *testing.T) {
	ctx := context.Background()
	store := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	_, orchestrator := authtest.Mint(t, store, auth.RolePlatformOrchestrator)
	_, member := authtest.Mint(t, store, auth.RoleClaimantAgent)
	_, stranger := authtest.Mint(t, store, auth.RoleClaimantAgent)
	_, agent := authtest.Mint(t, store, auth.RoleClaimantAgent, authtest.WithAgent("agent-acme-1"))
	_, otherAgent := authtest.Mint(t, store, auth.RoleClaimantAgent, authtest.WithAgent("agent-other-2"))
	// The same agent id minted by another partner (in the other
	// environment: in one environment the id is partner-test's, below).
	_, sameAgentIDOtherPartner := authtest.Mint(t, store, auth.RoleClaimantAgent, authtest.WithAgent("agent-acme-1"),
		authtest.WithPartner("partner-other"), func(r *auth.MintRequest) { r.Environment = auth.Live })
	_, respondent := authtest.Mint(t, store, auth.RoleRespondentAgent)
	const draft = "draft:dr_1"
	require.NoError(t, store.Grant(ctx, auth.Membership{Resource: draft, Side: auth.Claimant, Subject: auth.CredentialSubject(member.PublicID), ExpiresAt: time.Now().Add(time.Hour)}))
	require.NoError(t, store.Grant(ctx, auth.Membership{Resource: draft, Side: auth.Claimant, Subject: auth.PrincipalSubject("partner-test", "agent-acme-1"), ExpiresAt: time.Now().Add(time.Hour)}))
	capability, err := store.MintCapability(ctx, auth.Capability{Resource: draft, Side: auth.Respondent, Purpose: "respondent_invite", ExpiresAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	otherCapability, err := store.MintCapability(ctx, auth.Capability{Resource: "draft:dr_2", Side: auth.Respondent, Purpose: "respondent_invite", ExpiresAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)

	tests := []struct {
		name       string
		cred       auth.Credential
		side       auth.Side
		capability string
		allowed    bool
	}{
		{"orchestrator acts for either side", orchestrator, auth.Respondent, "", true},
		{"member of the side", member, auth.Claimant, "", true},
		{"principal membership, credential bound to that agent", agent, auth.Claimant, "", true},
		{"principal membership, credential bound to another agent", otherAgent, auth.Claimant, "", false},
		{"principal membership, another partner's agent with the same agent id", sameAgentIDOtherPartner, auth.Claimant, "", false},
		{"principal membership, credential bound to no agent", stranger, auth.Claimant, "", false},
		{"no membership", stranger, auth.Claimant, "", false},
		{"agent for the other side's role", member, auth.Respondent, "", false},
		{"respondent with capability", respondent, auth.Respondent, capability, true},
		{"respondent without capability", respondent, auth.Respondent, "", false},
		{"capability for another draft", respondent, auth.Respondent, otherCapability, false},
		{"unknown capability", respondent, auth.Respondent, "pc_cap_forged", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := store.AuthorizeSide(ctx, tc.cred, draft, tc.side, tc.capability)
			if tc.allowed {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, auth.ErrForbidden)
			}
		})
	}

	require.NoError(t, store.RevokeMembership(ctx, draft, auth.CredentialSubject(member.PublicID)))
	require.ErrorIs(t, store.AuthorizeSide(ctx, member, draft, auth.Claimant, ""), auth.ErrForbidden)
}

// An agent id names one agent of one partner in a tenant and environment:
// its partner mints more credentials under it (a rotation), another
// partner is refused, and the same id is free in another tenant or
// environment. A membership never names an agent id without its partner.
func TestAgentIDBelongsToOnePartner(t *testing.T) {
	ctx := context.Background()
	store := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	mint := func(tenant string, env auth.Environment, partner string) error {
		_, _, err := store.Mint(ctx, auth.MintRequest{Tenant: tenant, Environment: env, Role: auth.RoleRespondentAgent, PartnerID: partner, AgentID: "agent-x"})
		return err
	}
	require.NoError(t, mint("tenant-a", auth.Sandbox, "partner-a"))
	require.NoError(t, mint("tenant-a", auth.Sandbox, "partner-a"), "a second credential of the same agent (rotation)")
	require.ErrorIs(t, mint("tenant-a", auth.Sandbox, "partner-b"), auth.ErrAgentIDTaken)
	require.NoError(t, mint("tenant-a", auth.Live, "partner-b"), "another environment")
	require.NoError(t, mint("tenant-b", auth.Sandbox, "partner-b"), "another tenant")

	creds, err := store.List(ctx, "tenant-a")
	require.NoError(t, err)
	require.Len(t, creds, 3, "the refused minting stored nothing")

	owner, err := store.AgentPartner(ctx, "tenant-a", auth.Sandbox, "agent-x")
	require.NoError(t, err)
	require.Equal(t, "partner-a", owner, "the first partner keeps the id")
	owner, err = store.AgentPartner(ctx, "tenant-a", auth.Live, "agent-x")
	require.NoError(t, err)
	require.Equal(t, "partner-b", owner, "another environment's agent id is another identity")
	_, err = store.AgentPartner(ctx, "tenant-a", auth.Sandbox, "agent-never-minted")
	require.ErrorIs(t, err, auth.ErrNotFound, "a made-up agent id names nobody")

	err = store.Grant(ctx, auth.Membership{Resource: "case:c1", Side: auth.Respondent, Subject: "principal:agent-x", ExpiresAt: time.Now().Add(time.Hour)})
	require.Error(t, err, "a principal subject without its partner is refused")
}

// A short-lived credential works until its expiry and is refused from then
// on, on a replica that cached it too; its token's key expires with it.
func TestShortLivedCredentialExpires(t *testing.T) {
	rdb := redistest.NewClient(t)
	ctx := context.Background()
	store := auth.NewStore(rdb, auth.DefaultStoreConfig())
	expires := time.Now().Add(1500 * time.Millisecond)
	token, cred := authtest.Mint(t, store, auth.RolePlatformOrchestrator, func(m *auth.MintRequest) { m.ExpiresAt = expires })
	require.Equal(t, expires.UTC().Truncate(time.Millisecond), cred.ExpiresAt)

	got, err := store.Authenticate(ctx, token) // cached from here on
	require.NoError(t, err)
	require.Equal(t, cred, got)
	ttl, err := rdb.PTTL(ctx, "pc:auth:token:"+auth.HashToken(token)).Result()
	require.NoError(t, err)
	require.Greater(t, ttl, time.Duration(0))
	require.LessOrEqual(t, ttl, 1500*time.Millisecond)

	require.Eventually(t, func() bool {
		_, err := store.Authenticate(ctx, token)
		return errors.Is(err, auth.ErrInvalidCredential)
	}, 5*time.Second, 50*time.Millisecond)
	stored, err := store.Get(ctx, cred.PublicID)
	require.NoError(t, err)
	require.False(t, stored.ActiveAt(time.Now()))

	_, _, err = store.Mint(ctx, auth.MintRequest{Tenant: "t", Environment: auth.Sandbox, Role: auth.RolePlatformOrchestrator,
		PartnerID: "p", ExpiresAt: time.Now().Add(-time.Second)})
	require.Error(t, err, "an expiry in the past is refused")
}

// A short-lived credential's record is kept ExpiredRetention past its
// expiry and then leaves the keyspace and the index; a credential that
// lasts until revoked is kept for good.
func TestAnExpiredCredentialsRecordLeavesAfterItsRetention(t *testing.T) {
	rdb := redistest.NewClient(t)
	ctx := context.Background()
	store := auth.NewStore(rdb, auth.DefaultStoreConfig())
	expires := time.Now().Add(time.Hour)
	_, session := authtest.Mint(t, store, auth.RolePlatformOrchestrator, func(m *auth.MintRequest) { m.ExpiresAt = expires })
	_, lasting := authtest.Mint(t, store, auth.RolePlatformOrchestrator)

	ttl, err := rdb.PTTL(ctx, "pc:auth:cred:"+session.PublicID).Result()
	require.NoError(t, err)
	require.InDelta(t, (time.Hour + auth.ExpiredRetention).Seconds(), ttl.Seconds(), 5)
	ttl, err = rdb.PTTL(ctx, "pc:auth:cred:"+lasting.PublicID).Result()
	require.NoError(t, err)
	require.Equal(t, time.Duration(-1), ttl, "no expiry on a credential that lasts until revoked")

	// The retention ends: Redis drops the record, List drops the entry.
	require.NoError(t, rdb.Del(ctx, "pc:auth:cred:"+session.PublicID).Err())
	listed, err := store.List(ctx, "")
	require.NoError(t, err)
	require.Equal(t, []string{lasting.PublicID}, publicIDs(listed))
	members, err := rdb.SMembers(ctx, "pc:auth:creds").Result()
	require.NoError(t, err)
	require.Equal(t, []string{lasting.PublicID}, members)

	// A record minted before records expired by themselves has no TTL;
	// List removes it once its retention is over.
	_, old := authtest.Mint(t, store, auth.RolePlatformOrchestrator, func(m *auth.MintRequest) { m.ExpiresAt = time.Now().Add(time.Second) })
	require.NoError(t, rdb.Persist(ctx, "pc:auth:cred:"+old.PublicID).Err())
	require.NoError(t, rdb.HSet(ctx, "pc:auth:cred:"+old.PublicID, "expires_at",
		time.Now().Add(-auth.ExpiredRetention-time.Minute).UTC().Format(time.RFC3339Nano)).Err())
	listed, err = store.List(ctx, "")
	require.NoError(t, err)
	require.Equal(t, []string{lasting.PublicID}, publicIDs(listed))
	n, err := rdb.Exists(ctx, "pc:auth:cred:"+old.PublicID).Result()
	require.NoError(t, err)
	require.Zero(t, n)
}

func publicIDs(creds []auth.Credential) []string {
	var ids []string
	for _, c := range creds {
		ids = append(ids, c.PublicID)
	}
	return ids
}
