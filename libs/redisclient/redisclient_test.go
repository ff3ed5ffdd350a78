package redisclient_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/redisclient"
)

func fromEnv(env map[string]string) redisclient.Config {
	return redisclient.FromEnv(envconf.New(func(k string) string { return env[k] }))
}

// The topology decides the client: what the Helm chart's redis.mode sets.
func TestModeChoosesTheClient(t *testing.T) {
	for name, tc := range map[string]struct {
		env  map[string]string
		want any
	}{
		"one address":          {map[string]string{"REDIS_ADDRS": "r:6379"}, &redis.Client{}},
		"several addresses":    {map[string]string{"REDIS_ADDRS": "a:6379,b:6379"}, &redis.ClusterClient{}},
		"cluster endpoint":     {map[string]string{"REDIS_ADDRS": "cfg:6379", "REDIS_MODE": "cluster"}, &redis.ClusterClient{}},
		"sentinel":             {map[string]string{"REDIS_ADDRS": "s1:26379,s2:26379", "REDIS_MODE": "sentinel", "REDIS_SENTINEL_MASTER": "mymaster"}, &redis.Client{}},
		"standalone, with TLS": {map[string]string{"REDIS_ADDRS": "r:6380", "REDIS_MODE": "standalone", "REDIS_TLS": "true"}, &redis.Client{}},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := fromEnv(tc.env)
			require.NoError(t, cfg.Validate())
			c := redisclient.New(cfg)
			t.Cleanup(func() { c.Close() })
			require.IsType(t, tc.want, c)
		})
	}
}

func TestValidateRefusesContradictions(t *testing.T) {
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"unknown mode":              {map[string]string{"REDIS_MODE": "ring"}, "not standalone, cluster or sentinel"},
		"sentinel without a master": {map[string]string{"REDIS_MODE": "sentinel"}, "REDIS_SENTINEL_MASTER"},
		"master outside sentinel":   {map[string]string{"REDIS_SENTINEL_MASTER": "m"}, "not sentinel"},
		"standalone, two addresses": {map[string]string{"REDIS_MODE": "standalone", "REDIS_ADDRS": "a:1,b:2"}, "one address"},
		"CA without TLS":            {map[string]string{"REDIS_TLS_CA_FILE": "/ca.pem"}, "REDIS_TLS is not true"},
		"missing CA file":           {map[string]string{"REDIS_TLS": "true", "REDIS_TLS_CA_FILE": "/nonexistent/ca.pem"}, "reading the TLS CA file"},
	} {
		t.Run(name, func(t *testing.T) {
			require.ErrorContains(t, fromEnv(tc.env).Validate(), tc.want)
		})
	}
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o600))
	require.ErrorContains(t, fromEnv(map[string]string{"REDIS_TLS": "true", "REDIS_TLS_CA_FILE": notPEM}).Validate(), "no PEM certificate")
}
