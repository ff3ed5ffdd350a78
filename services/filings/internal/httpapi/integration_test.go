package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
)

func newServer(t *testing.T) (*httptest.Server, *auth.Store) {
	t.Helper()
	s := newStack(t)
	return &httptest.Server{URL: s.url}, s.credentials
}

func get(t *testing.T, url, token string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return apitest.Do(t, http.DefaultClient, req)
}

func TestIntegrationShowsTheCredentialsBindings(t *testing.T) {
	ts, credentials := newServer(t)
	token, cred := authtest.Mint(t, credentials, auth.RoleClaimantAgent, authtest.WithAgent("agent-42"))

	resp, body := get(t, ts.URL+"/api/v2/integration", token)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var got struct {
		Data      map[string]any `json:"data"`
		RequestID string         `json:"requestId"`
	}
	require.NoError(t, json.Unmarshal(body, &got))
	require.Equal(t, cred.PublicID, got.Data["credentialId"])
	require.Equal(t, "tenant-test", got.Data["tenant"])
	require.Equal(t, "sandbox", got.Data["environment"])
	require.Equal(t, "claimant_agent", got.Data["role"])
	require.Equal(t, "agent-42", got.Data["agentId"])
	require.Equal(t, resp.Header.Get("X-Request-Id"), got.RequestID)
	require.NotContains(t, string(body), token, "the secret is never echoed")
}

func TestIntegrationRefusesMissingAndRevokedCredentials(t *testing.T) {
	ts, credentials := newServer(t)
	resp, _ := get(t, ts.URL+"/api/v2/integration", "")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	token, cred := authtest.Mint(t, credentials, auth.RolePlatformOrchestrator)
	require.NoError(t, credentials.Revoke(context.Background(), cred.PublicID))
	resp, _ = get(t, ts.URL+"/api/v2/integration", token)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// A route of the specification that filings has not built answers 501
// not_available naming it, never a fake success and never a 404 that
// reads like a wrong URL.
func TestUnbuiltRoutesAnswer501NamingThem(t *testing.T) {
	ts, _ := newServer(t)
	for _, route := range []struct{ method, path string }{
		{http.MethodGet, "/api/v2/fee-referrals"},
		{http.MethodPost, "/api/v2/sponsorship-referrals"},
	} {
		req, err := http.NewRequest(route.method, ts.URL+route.path, nil)
		require.NoError(t, err)
		resp, body := apitest.Do(t, http.DefaultClient, req)
		require.Equal(t, http.StatusNotImplemented, resp.StatusCode)
		require.Contains(t, string(body), `"code":"not_available"`)
		require.Contains(t, string(body), route.method+" "+route.path)
	}
}
