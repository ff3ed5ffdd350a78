package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestThePublicBaseURLIsTheIssuerAndTheAudience(t *testing.T) {
	cfg, err := loadConfig(env(map[string]string{"PUBLIC_BASE_URL": "https://api.pcourt.test", "POD_NAME": "p"}))
	require.NoError(t, err)
	require.Equal(t, "https://api.pcourt.test", cfg.OAuth.Issuer)
	require.Equal(t, "https://api.pcourt.test", cfg.OAuth.APIAudience)
	require.Equal(t, ":8089", cfg.Service.HTTP.Addr)
}

func TestAnUnusablePublicBaseURLStopsTheService(t *testing.T) {
	_, err := loadConfig(env(map[string]string{"PUBLIC_BASE_URL": "ftp://x", "POD_NAME": "p"}))
	require.ErrorContains(t, err, "PUBLIC_BASE_URL")
}
