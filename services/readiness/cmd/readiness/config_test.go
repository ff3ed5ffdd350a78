package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoadConfigTakesTheNetworksOfItsEnvironment(t *testing.T) {
	base := map[string]string{"READINESS_PAY_TO": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}
	for _, tc := range []struct {
		name     string
		env      map[string]string
		networks []string // nil: refused
	}{
		{"sandbox by default", nil, []string{"eip155:84532"}},
		{"live by default offers Base", map[string]string{"READINESS_ENVIRONMENT": "live"}, []string{"eip155:8453"}},
		{"live with Base Sepolia", map[string]string{"READINESS_ENVIRONMENT": "live", "READINESS_NETWORKS": "eip155:8453,eip155:84532"}, nil},
		{"sandbox with Base", map[string]string{"READINESS_NETWORKS": "eip155:8453"}, nil},
		{"unknown environment", map[string]string{"READINESS_ENVIRONMENT": "production"}, nil},
		{"public base URL with a query", map[string]string{"PUBLIC_BASE_URL": "https://api.example.com/?x=1"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadConfig(func(k string) string {
				if v, ok := tc.env[k]; ok {
					return v
				}
				return base[k]
			})
			if tc.networks == nil {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.networks, cfg.Networks)
			require.Equal(t, "http://127.0.0.1:8080/api/x402/dispute-readiness", cfg.PublicBase.URL("/api/x402/dispute-readiness"))
		})
	}
}
