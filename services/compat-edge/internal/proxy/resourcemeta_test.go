package proxy_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/services/compat-edge/internal/proxy"
)

// RFC 9728: the API names itself as the resource its account tokens are
// for, the authorization server behind the same public address, and the
// account scopes.
func TestTheEdgePublishesTheAPIsProtectedResourceMetadata(t *testing.T) {
	r := gin.New()
	require.NoError(t, proxy.RegisterResourceMetadata(r, "https://api.pcourt.test"))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	req, err := http.NewRequest(http.MethodGet, srv.URL+proxy.ProtectedResourcePath, nil)
	require.NoError(t, err)
	resp, body := apitest.Do(t, http.DefaultClient, req)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "public, max-age=300", resp.Header.Get("Cache-Control"))
	var got map[string]any
	require.NoError(t, json.Unmarshal(body, &got))
	require.Equal(t, map[string]any{
		"resource":                 "https://api.pcourt.test",
		"authorization_servers":    []any{"https://api.pcourt.test"},
		"scopes_supported":         []any{"cases:read", "cases:act", "evidence:file", "readiness:buy", "executions:report"},
		"bearer_methods_supported": []any{"header"},
		"resource_name":            "pcourt API",
		"resource_documentation":   "https://api.pcourt.test/openapi.json",
	}, got)

	// Without a public URL there is no resource identifier to state.
	bare := gin.New()
	require.NoError(t, proxy.RegisterResourceMetadata(bare, ""))
	rec := httptest.NewRecorder()
	bare.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, proxy.ProtectedResourcePath, nil))
	require.Equal(t, http.StatusNotFound, rec.Code)
}
