package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// make run gives accounts the MCP server: its resource under the edge's
// URL and the platform client made at this start, whose secret no other
// process of the stack but the mcp service gets.
func TestAccountsKnowsTheMCPServersClientOfThisStart(t *testing.T) {
	first, second := newMCPClient(), newMCPClient()
	require.Equal(t, "ocl_mcp", first.ID)
	require.NotEqual(t, first.Secret, second.Secret, "a secret per start")
	require.GreaterOrEqual(t, len(first.Secret), 32, "as long as accounts requires")

	cfg := config{EdgePort: 18080, MCP: first}
	services := stackServices(cfg, &devRedis{addrs: []string{"127.0.0.1:6390"}, mode: "standalone"}, []string{"127.0.0.1:9092"}, "http://127.0.0.1:18085")
	require.Equal(t, "http://127.0.0.1:18080/mcp", cfg.mcpResourceURL())
	require.Equal(t, []string{"MCP_CLIENT_ID=ocl_mcp", "MCP_CLIENT_SECRET=" + first.Secret}, first.env())
	found := false
	for _, s := range services {
		switch s.name {
		case "accounts":
			found = true
			require.Contains(t, s.env, "MCP_RESOURCE_URL=http://127.0.0.1:18080/mcp")
			require.Subset(t, s.env, first.env())
			continue
		case "mcp":
			require.Subset(t, s.env, first.env(), "the mcp service exchanges as the client accounts knows")
			require.Contains(t, s.env, "PUBLIC_BASE_URL=http://127.0.0.1:18080")
			continue
		}
		for _, kv := range s.env {
			require.False(t, strings.HasPrefix(kv, "MCP_"), "%s gets %s", s.name, kv)
		}
	}
	require.True(t, found, "make run starts accounts")
}
