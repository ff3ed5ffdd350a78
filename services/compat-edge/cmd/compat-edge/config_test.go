package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

func TestLoadConfig(t *testing.T) {
	cfg, err := loadConfig(func(string) string { return "" })
	require.NoError(t, err)
	for _, owner := range routing.Owners {
		require.NotNil(t, cfg.Upstreams[owner], "every owner has an upstream by default: %s", owner)
	}
	require.Equal(t, "http://127.0.0.1:8083", cfg.Upstreams[routing.Cases].String())
	require.False(t, cfg.Forwarding.TLSTerminated)
	require.Empty(t, cfg.PublicURL, "the served document keeps its relative server")

	for _, tc := range []struct {
		name string
		env  map[string]string
	}{
		{"an upstream without scheme", map[string]string{"UPSTREAM_FILINGS_URL": "filings:8082"}},
		{"an upstream of another scheme", map[string]string{"UPSTREAM_CASES_URL": "ftp://cases"}},
		{"a public URL without host", map[string]string{"EDGE_PUBLIC_URL": "https://"}},
		{"a malformed boolean", map[string]string{"EDGE_TLS_TERMINATED": "sometimes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(func(k string) string { return tc.env[k] })
			require.Error(t, err)
		})
	}

	cfg, err = loadConfig(func(k string) string {
		return map[string]string{"EDGE_PUBLIC_URL": "https://api.pcourt.dev/", "EDGE_TLS_TERMINATED": "true"}[k]
	})
	require.NoError(t, err)
	require.Equal(t, "https://api.pcourt.dev", cfg.PublicURL)
	require.True(t, cfg.Forwarding.TLSTerminated)
}
