package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoadConfigRefusesNetworksOfTheWrongEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		ok   bool
	}{
		{"defaults", nil, true},
		{"live on Base", map[string]string{"FEES_LIVE_NETWORKS": "eip155:8453"}, true},
		{"live mixed with Base Sepolia", map[string]string{"FEES_LIVE_NETWORKS": "eip155:8453,eip155:84532"}, false},
		{"sandbox on Base", map[string]string{"FEES_SANDBOX_NETWORKS": "eip155:8453"}, false},
		{"unknown network", map[string]string{"FEES_SANDBOX_NETWORKS": "eip155:1"}, false},
		{"public base URL without scheme", map[string]string{"PUBLIC_BASE_URL": "api.example.com"}, false},
		{"public base URL", map[string]string{"PUBLIC_BASE_URL": "https://api.example.com"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadConfig(func(k string) string { return tc.env[k] })
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, []string{"eip155:84532"}, cfg.FeesNetworks["sandbox"])
			require.Equal(t, []string{"eip155:8453"}, cfg.FeesNetworks["live"])
		})
	}
}
