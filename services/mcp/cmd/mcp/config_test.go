package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestTheResourceIsThePublicURLsMCPPath(t *testing.T) {
	cfg, err := loadConfig(env(map[string]string{
		"PUBLIC_BASE_URL": "https://api.pcourt.test", "MCP_API_URL": "http://compat-edge:8080/",
		"MCP_CLIENT_ID": "ocl_mcp", "MCP_CLIENT_SECRET": "s3cret", "POD_NAME": "p",
	}))
	require.NoError(t, err)
	require.Equal(t, "https://api.pcourt.test/mcp", cfg.HTTP.Resource)
	require.Equal(t, "https://api.pcourt.test/.well-known/oauth-protected-resource/mcp", cfg.HTTP.MetadataURL)
	require.Equal(t, "https://api.pcourt.test", cfg.HTTP.AuthorizationServer)
	require.Equal(t, "http://compat-edge:8080/oauth/token", cfg.Exchange.TokenURL)
	require.Equal(t, "https://api.pcourt.test", cfg.Exchange.Resource, "tokens are exchanged for the API's audience")
	require.Equal(t, ":8090", cfg.Service.HTTP.Addr)
}

func TestTheServerNeedsItsOwnClient(t *testing.T) {
	_, err := loadConfig(env(map[string]string{"PUBLIC_BASE_URL": "https://api.pcourt.test", "POD_NAME": "p"}))
	require.ErrorContains(t, err, "MCP_CLIENT_ID and MCP_CLIENT_SECRET are required")
}
