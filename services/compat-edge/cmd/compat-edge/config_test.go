package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/legacyuse"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

func TestLoadConfig(t *testing.T) {
	cfg, err := loadConfig(func(string) string { return "" })
	require.NoError(t, err)
	for _, owner := range routing.Owners {
		require.NotNil(t, cfg.Upstreams[owner], "every owner has an upstream by default: %s", owner)
	}
	require.Equal(t, "http://127.0.0.1:8083", cfg.Upstreams[routing.Cases].String())
	require.Equal(t, "http://127.0.0.1:8089", cfg.Upstreams[routing.Accounts].String(), "accounts' own default port")
	accounts, err := loadConfig(func(k string) string {
		return map[string]string{"UPSTREAM_ACCOUNTS_URL": "http://pcourt-accounts:8089"}[k]
	})
	require.NoError(t, err)
	require.Equal(t, "http://pcourt-accounts:8089", accounts.Upstreams[routing.Accounts].String(), "UPSTREAM_ACCOUNTS_URL names it")
	require.Equal(t, "http://127.0.0.1:8090", cfg.Upstreams[routing.MCP].String(), "the MCP server's own default port")
	require.False(t, cfg.Forwarding.TLSTerminated)
	require.Empty(t, cfg.PublicURL, "the served document keeps its relative server")
	require.Equal(t, 10*time.Second, cfg.Compat.RefreshInterval)
	require.Equal(t, legacyuse.DefaultConfig(), cfg.Compat.LegacyUse)
	require.Empty(t, cfg.AdminToken, "the admin API refuses everyone until a token is set")
	require.False(t, policy.Resolve(cfg.Compat.Env, nil).Enabled, "announcements are off by default")
	require.Equal(t, 512, cfg.Service.HTTP.MaxConnections, "the edge holds at most 512 connections by default")
	require.Equal(t, int64(16<<20), cfg.Routes.MaxBodyBytes)
	require.Equal(t, int64(110<<20), cfg.Routes.MaxUploadBytes, "the largest exhibit (100 MiB) and its multipart framing")
	require.Equal(t, int64(110<<20), cfg.Service.HTTP.MaxBodyBytes, "the server lets the upload routes have their limit")
	require.Equal(t, 10*time.Minute, cfg.Routes.TransferTimeout)

	for _, tc := range []struct {
		name string
		env  map[string]string
	}{
		{"an upstream without scheme", map[string]string{"UPSTREAM_FILINGS_URL": "filings:8082"}},
		{"an upstream of another scheme", map[string]string{"UPSTREAM_CASES_URL": "ftp://cases"}},
		{"an upstream with a path the edge would drop", map[string]string{"UPSTREAM_CASES_URL": "http://cases:8083/v1"}},
		{"a public URL without host", map[string]string{"EDGE_PUBLIC_URL": "https://"}},
		{"a malformed boolean", map[string]string{"EDGE_TLS_TERMINATED": "sometimes"}},
		{"a refresh interval of zero", map[string]string{"EDGE_COMPAT_REFRESH_INTERVAL": "0s"}},
		{"a malformed flush interval", map[string]string{"EDGE_LEGACY_USE_FLUSH_INTERVAL": "soon"}},
		{"no legacy-use buffer", map[string]string{"EDGE_LEGACY_USE_BUFFER": "0"}},
		{"no pending legacy use", map[string]string{"EDGE_LEGACY_USE_MAX_PENDING": "-1"}},
		{"a short admin token", map[string]string{"EDGE_ADMIN_TOKEN": "secret"}},
		{"a negative connection cap", map[string]string{"HTTP_MAX_CONNECTIONS": "-1"}},
		{"hops with no proxy to count them behind", map[string]string{"HTTP_TRUSTED_HOPS": "1"}},
		{"no upload limit", map[string]string{"EDGE_MAX_UPLOAD_BYTES": "0"}},
		{"a malformed upload limit", map[string]string{"EDGE_MAX_UPLOAD_BYTES": "110m"}},
		{"no body limit", map[string]string{"HTTP_MAX_BODY_BYTES": "-1"}},
		{"no transfer timeout", map[string]string{"EDGE_TRANSFER_TIMEOUT": "0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(func(k string) string { return tc.env[k] })
			require.Error(t, err)
		})
	}

	cfg, err = loadConfig(func(k string) string {
		return map[string]string{
			"EDGE_PUBLIC_URL": "https://api.pcourt.dev/", "EDGE_TLS_TERMINATED": "true",
			"HTTP_MAX_CONNECTIONS": "4096", "HTTP_TRUSTED_HOPS": "1", "HTTP_TRUSTED_PROXIES": "10.0.0.0/8",
		}[k]
	})
	require.NoError(t, err)
	require.Equal(t, "https://api.pcourt.dev", cfg.PublicURL)
	require.True(t, cfg.Forwarding.TLSTerminated)
	require.Equal(t, 4096, cfg.Service.HTTP.MaxConnections)
	require.Equal(t, 1, cfg.Service.HTTP.TrustedHops)
}

// The spec's variables reach the policy as given; an invalid date is no
// reason to refuse to start (it announces nothing, and is logged).
func TestLoadConfigReadsTheCompatibilityVariables(t *testing.T) {
	env := map[string]string{
		"SERVICE_API_CANONICAL_ROUTES":    "true",
		"SERVICE_API_V2_CASES_GA":         "2026-01-15",
		"SERVICE_API_V2_FILINGS_GA":       "2026-1-15",
		"SERVICE_API_COMPATIBILITY_START": "2026-03-01",
		"EDGE_COMPAT_REFRESH_INTERVAL":    "2s",
		"EDGE_LEGACY_USE_FLUSH_INTERVAL":  "250ms",
	}
	cfg, err := loadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, cfg.Compat.RefreshInterval)
	require.Equal(t, 250*time.Millisecond, cfg.Compat.LegacyUse.FlushInterval)
	p := policy.Resolve(cfg.Compat.Env, nil)
	require.True(t, p.Enabled)
	require.Equal(t, "2026-01-15", p.Window(inventory.V2Cases).GA.String())
	require.Equal(t, "2026-03-01", p.Window(inventory.WebsiteCases).GA.String())
	require.True(t, p.Window(inventory.V2Filings).GA.IsZero())
	require.Equal(t, "2026-1-15", p.Window(inventory.V2Filings).Invalid)
}
