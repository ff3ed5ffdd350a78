package main

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLoadConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		ok   bool
	}{
		{"no signing keys", nil, false},
		{"a key directory", map[string]string{"WEBHOOK_SIGNING_KEYS_DIR": "/var/run/pcourt/webhook-keys"}, true},
		{"development keys", map[string]string{"WEBHOOK_DEV_EPHEMERAL_KEYS": "true"}, true},
		{"an allowlist", map[string]string{"WEBHOOK_DEV_EPHEMERAL_KEYS": "true", "WEBHOOK_EGRESS_ALLOW_CIDRS": "127.0.0.1/8,10.1.0.0/16"}, true},
		{"a bad allowlist", map[string]string{"WEBHOOK_DEV_EPHEMERAL_KEYS": "true", "WEBHOOK_EGRESS_ALLOW_CIDRS": "localhost"}, false},
		{"retention under a day", map[string]string{"WEBHOOK_DEV_EPHEMERAL_KEYS": "true", "WEBHOOK_DELIVERY_RETENTION": "1h"}, false},
		{"no shards", map[string]string{"WEBHOOK_DEV_EPHEMERAL_KEYS": "true", "WEBHOOK_SCHEDULE_SHARDS": "0"}, false},
		{"a zero attempt timeout", map[string]string{"WEBHOOK_DEV_EPHEMERAL_KEYS": "true", "WEBHOOK_ATTEMPT_TIMEOUT": "0s"}, false},
		{"a malformed duration", map[string]string{"WEBHOOK_DEV_EPHEMERAL_KEYS": "true", "WEBHOOK_SEND_LEASE": "soon"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadConfig(func(k string) string { return tc.env[k] })
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.False(t, cfg.AllowHTTP, "http endpoints only when asked for")
			if tc.env["WEBHOOK_EGRESS_ALLOW_CIDRS"] != "" {
				require.Equal(t, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.1.0.0/16")}, cfg.EgressAllow, "prefixes are masked")
			} else {
				require.Empty(t, cfg.EgressAllow, "nothing internal is reachable by default")
			}
		})
	}
}
