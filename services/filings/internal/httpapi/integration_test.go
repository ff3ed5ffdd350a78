package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/filings/internal/httpapi"
)

func newServer(t *testing.T) (*httptest.Server, *auth.Store) {
	t.Helper()
	credentials := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	srv := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "filings", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	httpapi.Register(srv.Router(), httpapi.Deps{Credentials: credentials})
	ts := httptest.NewServer(srv.Router())
	t.Cleanup(ts.Close)
	return ts, credentials
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

func TestUnbuiltRoutesAnswer404FromTheOwner(t *testing.T) {
	ts, _ := newServer(t)
	resp, err := http.Post(ts.URL+"/api/v2/case-drafts/dr_1/confirmations", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "never a fake success")
}
