package main

import (
	"net/netip"
	"testing"
	"time"

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
		{"a test stack's short schedule", map[string]string{"WEBHOOK_DEV_EPHEMERAL_KEYS": "true", "WEBHOOK_MAX_ATTEMPTS": "2", "WEBHOOK_RETRY_BASE": "300ms",
			"WEBHOOK_SEND_POLL": "50ms", "WEBHOOK_BREAKER_THRESHOLD": "1000"}, true},
		{"no attempts", map[string]string{"WEBHOOK_DEV_EPHEMERAL_KEYS": "true", "WEBHOOK_MAX_ATTEMPTS": "0"}, false},
		{"a zero retry base", map[string]string{"WEBHOOK_DEV_EPHEMERAL_KEYS": "true", "WEBHOOK_RETRY_BASE": "0s"}, false},
		{"a zero poll", map[string]string{"WEBHOOK_DEV_EPHEMERAL_KEYS": "true", "WEBHOOK_SEND_POLL": "0s"}, false},
		{"a zero breaker threshold", map[string]string{"WEBHOOK_DEV_EPHEMERAL_KEYS": "true", "WEBHOOK_BREAKER_THRESHOLD": "0"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadConfig(func(k string) string { return tc.env[k] })
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.False(t, cfg.AllowHTTP, "http endpoints only when asked for")
			if tc.env["WEBHOOK_MAX_ATTEMPTS"] != "" {
				require.Equal(t, 2, cfg.Dispatch.Schedule.MaxAttempts)
				require.Equal(t, 300*time.Millisecond, cfg.Dispatch.Schedule.Base)
				require.Equal(t, 50*time.Millisecond, cfg.Dispatch.Poll)
				require.Equal(t, 1000, cfg.Dispatch.Breaker.FailureThreshold)
			} else {
				require.Equal(t, 17, cfg.Dispatch.Schedule.MaxAttempts, "the deployed schedule by default")
			}
			if tc.env["WEBHOOK_EGRESS_ALLOW_CIDRS"] != "" {
				require.Equal(t, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.1.0.0/16")}, cfg.EgressAllow, "prefixes are masked")
			} else {
				require.Empty(t, cfg.EgressAllow, "nothing internal is reachable by default")
			}
		})
	}
}
