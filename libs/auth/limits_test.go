package auth_test

import (
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/redistest"
)

// guarded serves GET /x behind auth.Middleware. The httpserver trusts the
// loopback peer, so X-Forwarded-For names the client, as behind the edge.
func guarded(t *testing.T, store *auth.Store) string {
	t.Helper()
	cfg := httpserver.DefaultConfig()
	cfg.TrustedProxies = []string{"127.0.0.1"}
	s := httpserver.New(cfg, httpserver.Deps{Service: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	s.Router().GET("/x", auth.Middleware(store), func(c *gin.Context) { c.String(http.StatusOK, "ok") })
	ts := httptest.NewServer(s.Router())
	t.Cleanup(ts.Close)
	return ts.URL + "/x"
}

func call(t *testing.T, url, client string, authorization ...string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("X-Forwarded-For", client)
	for _, a := range authorization {
		req.Header.Add("Authorization", a)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	code := ""
	if resp.Header.Get("Content-Type") == problem.ContentType {
		var p problem.Body
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
		code = p.Code
	}
	return resp.StatusCode, code, resp.Header
}

func TestTwoAuthorizationHeadersAreRefused(t *testing.T) {
	store := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	good, _ := authtest.Mint(t, store, auth.RoleClaimantAgent)
	other, _ := authtest.Mint(t, store, auth.RoleClaimantAgent)
	url := guarded(t, store)

	tests := []struct {
		name    string
		headers []string
		status  int
		code    string
	}{
		{"one", []string{"Bearer " + good}, 200, ""},
		{"two, both valid", []string{"Bearer " + good, "Bearer " + other}, 400, "ambiguous_credential"},
		{"valid then junk", []string{"Bearer " + good, "Bearer junk"}, 400, "ambiguous_credential"},
		{"two folded into one", []string{"Bearer " + good + ", Bearer " + other}, 401, "unauthenticated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, code, _ := call(t, url, "198.51.100.1", tc.headers...)
			require.Equal(t, tc.status, status)
			require.Equal(t, tc.code, code)
		})
	}
}

func TestFailedAuthenticationIsThrottledPerAddress(t *testing.T) {
	cfg := auth.DefaultStoreConfig()
	cfg.FailedAuth = ratelimit.Rule{Rate: 3, Period: time.Hour, Burst: 3}
	store := auth.NewStore(redistest.NewClient(t), cfg)
	good, _ := authtest.Mint(t, store, auth.RoleClaimantAgent)
	url := guarded(t, store)

	for range 3 {
		status, code, _ := call(t, url, "198.51.100.9", "Bearer pc_sbx_guess")
		require.Equal(t, 401, status)
		require.Equal(t, "invalid_credential", code)
	}
	status, code, h := call(t, url, "198.51.100.9", "Bearer pc_sbx_guess")
	require.Equal(t, 429, status)
	require.Equal(t, "rate_limited", code)
	require.NotEmpty(t, h.Get("Retry-After"))

	// A credential this replica has not verified waits too: the check
	// comes before the lookup, so a guess cannot pass for one.
	status, _, _ = call(t, url, "198.51.100.9", "Bearer "+good)
	require.Equal(t, 429, status)
	// Another address is unaffected, and successes do not count.
	for range 5 {
		status, _, _ = call(t, url, "198.51.100.10", "Bearer "+good)
		require.Equal(t, 200, status)
	}
	// Once verified, the credential is no guess: it is served from the
	// throttled address too (a partner sharing a NAT with a guesser),
	// while guesses from there are still refused before any lookup.
	status, _, _ = call(t, url, "198.51.100.9", "Bearer "+good)
	require.Equal(t, 200, status)
	status, _, _ = call(t, url, "198.51.100.9", "Bearer pc_sbx_guess2")
	require.Equal(t, 429, status)
}

func TestRequestsArePacedPerCredential(t *testing.T) {
	cfg := auth.DefaultStoreConfig()
	cfg.PerCredential = ratelimit.Rule{Rate: 1, Period: time.Hour, Burst: 5}
	store := auth.NewStore(redistest.NewClient(t), cfg)
	busy, _ := authtest.Mint(t, store, auth.RoleClaimantAgent)
	calm, _ := authtest.Mint(t, store, auth.RoleClaimantAgent)
	url := guarded(t, store)

	for i := range 5 {
		// Changing address does not reset the credential's budget.
		status, _, _ := call(t, url, fmt.Sprintf("198.51.100.%d", i+1), "Bearer "+busy)
		require.Equal(t, 200, status)
	}
	status, code, h := call(t, url, "198.51.100.1", "Bearer "+busy)
	require.Equal(t, 429, status)
	require.Equal(t, "rate_limited", code)
	require.NotEmpty(t, h.Get("Retry-After"))

	status, _, _ = call(t, url, "198.51.100.1", "Bearer "+calm)
	require.Equal(t, 200, status, "each credential has its own budget")
}

func TestLimitsCanBeSwitchedOff(t *testing.T) {
	cfg := auth.DefaultStoreConfig()
	cfg.PerCredential = ratelimit.Off
	cfg.FailedAuth = ratelimit.Off
	store := auth.NewStore(redistest.NewClient(t), cfg)
	token, _ := authtest.Mint(t, store, auth.RoleClaimantAgent)
	url := guarded(t, store)
	for range 150 {
		status, _, _ := call(t, url, "198.51.100.1", "Bearer "+token)
		require.Equal(t, 200, status)
	}
}

func TestMembershipsExpireWithTheResource(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	store := auth.NewStore(rdb, auth.DefaultStoreConfig())
	const draft = "draft:dr_ttl"
	soon, later := time.Now().Add(time.Hour), time.Now().Add(48*time.Hour)

	require.ErrorContains(t, store.Grant(ctx, auth.Membership{Resource: draft, Side: auth.Claimant, Subject: auth.PrincipalSubject("partner-1", "p1")}), "expiry")
	require.Error(t, store.Grant(ctx, auth.Membership{Resource: draft, Side: auth.Claimant, Subject: auth.PrincipalSubject("partner-1", "p1"), ExpiresAt: time.Now().Add(-time.Minute)}))

	require.NoError(t, store.Grant(ctx, auth.Membership{Resource: draft, Side: auth.Claimant, Subject: auth.PrincipalSubject("partner-1", "p1"), ExpiresAt: later}))
	keys, err := rdb.Keys(ctx, "pc:auth:members:*").Result()
	require.NoError(t, err)
	require.Len(t, keys, 1)
	ttl := func() time.Duration {
		d, err := rdb.PTTL(ctx, keys[0]).Result()
		require.NoError(t, err)
		return d
	}
	require.InDelta(t, float64(48*time.Hour), float64(ttl()), float64(time.Minute))

	// A grant naming an earlier expiry never shortens the others' lifetime.
	require.NoError(t, store.Grant(ctx, auth.Membership{Resource: draft, Side: auth.Respondent, Subject: auth.PrincipalSubject("partner-1", "p2"), ExpiresAt: soon}))
	require.InDelta(t, float64(48*time.Hour), float64(ttl()), float64(time.Minute))
	members, err := store.Memberships(ctx, draft)
	require.NoError(t, err)
	require.Len(t, members, 2)
}
