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
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/redistest"
)

const apiAudience = "https://pcourt.example/api"

func accountToken(t *testing.T, store *auth.Store, edit func(*auth.AccountTokenRequest)) (string, auth.Credential) {
	t.Helper()
	req := auth.AccountTokenRequest{Tenant: "tenant-test", Environment: auth.Sandbox, AccountID: "acct_agent1", ClientID: "acct_agent1",
		Scopes: []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct}, Audience: apiAudience, Lifetime: 10 * time.Minute}
	if edit != nil {
		edit(&req)
	}
	token, cred, err := store.MintAccountToken(context.Background(), req)
	require.NoError(t, err)
	return token, cred
}

// An account token is a credential every service can look up: opaque,
// stored as a hash, refused from its expiry or revocation, kept out of the
// credential index, its record gone with it.
func TestAnAccountTokenIsAShortLivedCredentialOfItsAccount(t *testing.T) {
	rdb := redistest.NewClient(t)
	ctx := context.Background()
	store := auth.NewStore(rdb, auth.DefaultStoreConfig())
	token, cred := accountToken(t, store, func(r *auth.AccountTokenRequest) { r.CaseID = "case_1" })
	require.Regexp(t, `^pc_oat_sbx_[A-Za-z0-9_-]{43}$`, token)
	require.Regexp(t, `^oat_[a-z2-7]{16}$`, cred.PublicID)
	require.True(t, cred.ForAccount())
	require.Empty(t, cred.Role, "an account token has no role")
	require.Empty(t, cred.PartnerID, "and is no partner's")

	got, err := store.Authenticate(ctx, token)
	require.NoError(t, err)
	require.Equal(t, cred, got)
	require.True(t, got.HasScope(auth.ScopeCasesAct))
	require.False(t, got.HasScope(auth.ScopeExecutionsReport))
	require.True(t, got.MayTouch("case:case_1"))
	require.False(t, got.MayTouch("case:case_2"), "bound to one case")

	ttl, err := rdb.PTTL(ctx, "pc:auth:cred:"+cred.PublicID).Result()
	require.NoError(t, err)
	require.InDelta(t, (10 * time.Minute).Seconds(), ttl.Seconds(), 5, "the record expires with the token")
	listed, err := store.List(ctx, "")
	require.NoError(t, err)
	require.Empty(t, listed, "tokens are not in the credential index")

	require.NoError(t, store.Revoke(ctx, cred.PublicID))
	fresh := auth.NewStore(rdb, auth.DefaultStoreConfig())
	_, err = fresh.Authenticate(ctx, token)
	require.ErrorIs(t, err, auth.ErrInvalidCredential)
}

// A token given NotAfter expires then when that comes before its
// lifetime ends, record and token key alike, and is not issued at all when
// NotAfter has passed; a later NotAfter changes nothing.
func TestAnAccountTokenExpiresNoLaterThanItsNotAfter(t *testing.T) {
	rdb := redistest.NewClient(t)
	ctx := context.Background()
	store := auth.NewStore(rdb, auth.DefaultStoreConfig())
	notAfter := time.Now().Add(90 * time.Second).Truncate(time.Millisecond)
	token, cred := accountToken(t, store, func(r *auth.AccountTokenRequest) { r.NotAfter = notAfter })
	require.True(t, cred.ExpiresAt.Equal(notAfter), "expires at %s, not at NotAfter %s", cred.ExpiresAt, notAfter)
	got, err := store.Authenticate(ctx, token)
	require.NoError(t, err)
	require.True(t, got.ExpiresAt.Equal(notAfter), "as stored")
	ttl, err := rdb.PTTL(ctx, "pc:auth:token:"+auth.HashToken(token)).Result()
	require.NoError(t, err)
	require.InDelta(t, 90, ttl.Seconds(), 5, "the token key expires with it")

	_, later := accountToken(t, store, func(r *auth.AccountTokenRequest) { r.NotAfter = time.Now().Add(time.Hour) })
	require.Equal(t, 10*time.Minute, later.ExpiresAt.Sub(later.CreatedAt), "a NotAfter past the lifetime changes nothing")

	_, _, err = store.MintAccountToken(ctx, auth.AccountTokenRequest{Tenant: "t", Environment: auth.Sandbox, AccountID: "acct_1", ClientID: "client_1",
		Audience: apiAudience, Lifetime: time.Minute, NotAfter: time.Now().Add(-time.Second)})
	require.ErrorContains(t, err, "not after its issue", "a NotAfter already past issues nothing")
}

func TestAnAccountTokenRequestIsRefusedUnlessWhole(t *testing.T) {
	store := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	for name, edit := range map[string]func(*auth.AccountTokenRequest){
		"no tenant":            func(r *auth.AccountTokenRequest) { r.Tenant = "" },
		"unknown environment":  func(r *auth.AccountTokenRequest) { r.Environment = "prod" },
		"no account":           func(r *auth.AccountTokenRequest) { r.AccountID = "" },
		"account id with /":    func(r *auth.AccountTokenRequest) { r.AccountID = "a/b" },
		"no client":            func(r *auth.AccountTokenRequest) { r.ClientID = "" },
		"no audience":          func(r *auth.AccountTokenRequest) { r.Audience = "" },
		"two audiences":        func(r *auth.AccountTokenRequest) { r.Audience = "https://a https://b" },
		"unknown scope":        func(r *auth.AccountTokenRequest) { r.Scopes = []auth.Scope{"admin"} },
		"a scope twice":        func(r *auth.AccountTokenRequest) { r.Scopes = []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesRead} },
		"no lifetime":          func(r *auth.AccountTokenRequest) { r.Lifetime = 0 },
		"more than an hour":    func(r *auth.AccountTokenRequest) { r.Lifetime = auth.MaxAccountTokenLifetime + time.Second },
		"case id with a space": func(r *auth.AccountTokenRequest) { r.CaseID = "case 1" },
	} {
		t.Run(name, func(t *testing.T) {
			req := auth.AccountTokenRequest{Tenant: "t", Environment: auth.Sandbox, AccountID: "acct_1", ClientID: "client_1",
				Audience: apiAudience, Lifetime: time.Minute}
			edit(&req)
			_, _, err := store.MintAccountToken(context.Background(), req)
			require.Error(t, err)
		})
	}
}

// A route takes account tokens only where it says so, for its own
// audience, and with the scope it needs; a route that checks a role never
// does. Partner credentials pass every one of these as before.
func TestARouteTakesAccountTokensOnlyWhereItSaysSo(t *testing.T) {
	store := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	orchestrator, _ := authtest.Mint(t, store, auth.RolePlatformOrchestrator)
	reader, _ := accountToken(t, store, func(r *auth.AccountTokenRequest) { r.Scopes = []auth.Scope{auth.ScopeCasesRead} })
	reporter, _ := accountToken(t, store, func(r *auth.AccountTokenRequest) { r.Scopes = []auth.Scope{auth.ScopeExecutionsReport} })
	forMCP, _ := accountToken(t, store, func(r *auth.AccountTokenRequest) { r.Audience = "https://pcourt.example/mcp" })

	s := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ok := func(c *gin.Context) { c.Status(http.StatusNoContent) }
	s.Router().GET("/partners-only", auth.Middleware(store), ok)
	s.Router().GET("/orchestrate", auth.Middleware(store, auth.AcceptAccountTokens(apiAudience)), auth.RequireRole(auth.RolePlatformOrchestrator), ok)
	s.Router().POST("/executions", auth.Middleware(store, auth.AcceptAccountTokens(apiAudience)), auth.RequireScope(auth.ScopeExecutionsReport), ok)
	s.Router().POST("/drafts", auth.Middleware(store, auth.AcceptAccountTokens(apiAudience)),
		auth.RequireRoleOrScope(auth.ScopeCasesRead, auth.RolePlatformOrchestrator), ok)
	respondentAgent, _ := authtest.Mint(t, store, auth.RoleRespondentAgent)
	ts := httptest.NewServer(s.Router())
	t.Cleanup(ts.Close)

	for _, tc := range []struct {
		name, method, path, token string
		status                    int
		challenge                 string
	}{
		{"a partner credential where partners act", "GET", "/partners-only", orchestrator, 204, ""},
		{"an account token where only partners act", "GET", "/partners-only", reader, 403, ""},
		{"an account token on a route that checks a role", "GET", "/orchestrate", reader, 403, ""},
		{"an account token with the scope", "POST", "/executions", reporter, 204, ""},
		{"an account token without executions:report", "POST", "/executions", reader, 403, `error="insufficient_scope", scope="executions:report"`},
		{"an account token for another audience", "POST", "/executions", forMCP, 401, `error="invalid_token"`},
		{"a partner credential where accounts are accepted too", "POST", "/executions", orchestrator, 204, ""},
		{"a role or a scope: the partner's role", "POST", "/drafts", orchestrator, 204, ""},
		{"a role or a scope: another role", "POST", "/drafts", respondentAgent, 403, ""},
		{"a role or a scope: the account's scope", "POST", "/drafts", reader, 204, ""},
		{"a role or a scope: an account without it", "POST", "/drafts", reporter, 403, `error="insufficient_scope", scope="cases:read"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, ts.URL+tc.path, nil)
			req.Header.Set("Authorization", "Bearer "+tc.token)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
			require.Contains(t, resp.Header.Get("WWW-Authenticate"), tc.challenge)
		})
	}
}

// A resource that names its protected resource metadata (RFC 9728) names
// it in every 401 challenge, so an OAuth client refused there finds the
// authorization server from the refusal; a 403 is no invitation to
// authorize and names none.
func TestARefusalNamesTheResourcesMetadata(t *testing.T) {
	store := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	const mcp, metadata = "https://pcourt.example/mcp", "https://pcourt.example/.well-known/oauth-protected-resource/mcp"
	forMCP, _ := accountToken(t, store, func(r *auth.AccountTokenRequest) { r.Audience = mcp })
	forAPI, _ := accountToken(t, store, nil)

	s := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	s.Router().POST("/mcp", auth.Middleware(store, auth.AcceptAccountTokens(mcp), auth.ResourceMetadata(metadata)),
		func(c *gin.Context) { c.Status(http.StatusNoContent) })
	ts := httptest.NewServer(s.Router())
	t.Cleanup(ts.Close)

	for _, tc := range []struct {
		name, authorization string
		status              int
		challenge           string
	}{
		{"no credential", "", 401, `Bearer realm="pcourt", resource_metadata="` + metadata + `"`},
		{"an unknown token", "Bearer pc_oat_sbx_unknown", 401, `Bearer realm="pcourt", error="invalid_token", resource_metadata="` + metadata + `"`},
		{"a token for the API", "Bearer " + forAPI, 401, `error_description="the token's audience is another resource", resource_metadata="` + metadata + `"`},
		{"a token for this resource", "Bearer " + forMCP, 204, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", nil)
			if tc.authorization != "" {
				req.Header.Set("Authorization", tc.authorization)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, tc.status, resp.StatusCode)
			require.Contains(t, resp.Header.Get("WWW-Authenticate"), tc.challenge)
		})
	}
}

// An account acts for a side only through a membership naming it, on the
// case its token is bound to; never through a capability, a partner's
// membership or another account's.
func TestAnAccountActsForItsSideThroughItsOwnMembership(t *testing.T) {
	ctx := context.Background()
	store := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	_, account := accountToken(t, store, nil)
	_, bound := accountToken(t, store, func(r *auth.AccountTokenRequest) { r.CaseID = "other" })
	_, stranger := accountToken(t, store, func(r *auth.AccountTokenRequest) { r.AccountID = "acct_stranger" })
	_, partner := authtest.Mint(t, store, auth.RoleRespondentAgent)
	_, claimantAgent := authtest.Mint(t, store, auth.RoleClaimantAgent)
	const resource = "case:c1"
	until := time.Now().Add(time.Hour)
	require.NoError(t, store.Grant(ctx, auth.Membership{Resource: resource, Side: auth.Claimant, Subject: auth.AccountSubject("acct_agent1"), ExpiresAt: until}))
	require.NoError(t, store.Grant(ctx, auth.Membership{Resource: resource, Side: auth.Respondent, Subject: auth.CredentialSubject(partner.PublicID), ExpiresAt: until}))
	capability, err := store.MintCapability(ctx, auth.Capability{Resource: resource, Side: auth.Respondent, Purpose: "respondent_invite", ExpiresAt: until})
	require.NoError(t, err)
	require.Error(t, store.Grant(ctx, auth.Membership{Resource: resource, Side: auth.Claimant, Subject: "account:a/b", ExpiresAt: until}),
		"an account subject names a well-formed account id")

	for _, tc := range []struct {
		name       string
		cred       auth.Credential
		side       auth.Side
		capability string
		allowed    bool
	}{
		{"its own side", account, auth.Claimant, "", true},
		{"the other side", account, auth.Respondent, "", false},
		{"the other side with its capability", account, auth.Respondent, capability, false},
		{"a token bound to another case", bound, auth.Claimant, "", false},
		{"another account", stranger, auth.Claimant, "", false},
		{"a partner's agent on the account's side", claimantAgent, auth.Claimant, "", false},
		{"the partner's own side", partner, auth.Respondent, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := store.AuthorizeSide(ctx, tc.cred, resource, tc.side, tc.capability)
			if tc.allowed {
				require.NoError(t, err)
				return
			}
			require.True(t, errors.Is(err, auth.ErrForbidden), "%v", err)
		})
	}
}

// Revoking a token whose record has expired finds nothing and leaves
// nothing: the mark is one step on an existing record, never a new hash
// with revoked_at alone and no expiry.
func TestRevokingAnExpiredTokenLeavesNoRecord(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	store := auth.NewStore(rdb, auth.DefaultStoreConfig())
	_, cred := accountToken(t, store, func(r *auth.AccountTokenRequest) { r.Lifetime = 20 * time.Millisecond })
	require.Eventually(t, func() bool {
		n, err := rdb.Exists(ctx, "pc:auth:cred:"+cred.PublicID).Result()
		return err == nil && n == 0
	}, 2*time.Second, 10*time.Millisecond, "the record expires with the token")

	require.ErrorIs(t, store.Revoke(ctx, cred.PublicID), auth.ErrNotFound)
	n, err := rdb.Exists(ctx, "pc:auth:cred:"+cred.PublicID).Result()
	require.NoError(t, err)
	require.Zero(t, n, "no record without an expiry is left behind")

	// A live one is marked once, at its first revocation.
	_, live := accountToken(t, store, nil)
	require.NoError(t, store.Revoke(ctx, live.PublicID))
	first, err := store.Get(ctx, live.PublicID)
	require.NoError(t, err)
	require.NoError(t, store.Revoke(ctx, live.PublicID))
	again, err := store.Get(ctx, live.PublicID)
	require.NoError(t, err)
	require.Equal(t, first.RevokedAt, again.RevokedAt)
	ttl, err := rdb.PTTL(ctx, "pc:auth:cred:"+live.PublicID).Result()
	require.NoError(t, err)
	require.Positive(t, ttl, "a revoked token's record still expires with it")
}
