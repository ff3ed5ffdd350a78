package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLoadConfigKeepsTheCommandJournalUsable(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		ok   bool
	}{
		{"defaults", nil, true},
		{"a day and a half of replays", map[string]string{"CASES_IDEMPOTENCY_RETENTION": "36h"}, true},
		{"a lease as long as the retention", map[string]string{"CASES_IDEMPOTENCY_LEASE": "24h"}, false},
		{"a retention under a minute", map[string]string{"CASES_IDEMPOTENCY_RETENTION": "30s"}, false},
		{"no consumer group", map[string]string{"CASES_CASE_OPENED_GROUP": ""}, true}, // empty means the default
		{"a public base URL that is not a URL", map[string]string{"PUBLIC_BASE_URL": "pcourt.example"}, false},
		{"a respondent session of a second", map[string]string{"RESPOND_SESSION_TTL": "1s"}, false},
		{"a Secure cookie over plain http", map[string]string{"PUBLIC_BASE_URL": "http://pcourt.example", "RESPOND_SECURE_COOKIE": "true"}, false},
		{"a cookie without Secure over https", map[string]string{"PUBLIC_BASE_URL": "https://pcourt.example", "RESPOND_SECURE_COOKIE": "false"}, false},
		{"no award signing key", map[string]string{"AWARD_DEV_EPHEMERAL_KEY": "false"}, false},
		{"award signing keys from a directory", map[string]string{"AWARD_DEV_EPHEMERAL_KEY": "false", "AWARD_SIGNING_KEYS_DIR": "/var/run/award-keys"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := withAwardKey(tc.env)
			cfg, err := loadConfig(func(k string) string { return env[k] })
			if !tc.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "pc:cases", cfg.Idempotency.Prefix)
			require.Less(t, cfg.Idempotency.Lease, cfg.Idempotency.Retention)
			require.GreaterOrEqual(t, cfg.Idempotency.Retention, time.Minute)
		})
	}
}

// The session cookie is Secure unless the public address is plain http;
// the flag may make it Secure on a loopback development address.
func TestTheRespondentCookieIsSecureUnlessThePublicAddressIsPlainHTTP(t *testing.T) {
	for _, tc := range []struct {
		env    map[string]string
		secure bool
	}{
		{nil, false}, // the development edge, http://127.0.0.1:8080
		{map[string]string{"PUBLIC_BASE_URL": "https://pcourt.example"}, true},
		{map[string]string{"PUBLIC_BASE_URL": "HTTP://pcourt.example"}, false},
		{map[string]string{"PUBLIC_BASE_URL": "http://127.0.0.1:8080", "RESPOND_SECURE_COOKIE": "true"}, true},
	} {
		env := withAwardKey(tc.env)
		cfg, err := loadConfig(func(k string) string { return env[k] })
		require.NoError(t, err, "%v", tc.env)
		require.Equal(t, tc.secure, cfg.Respond.SecureCookie, "%v", tc.env)
	}
}

// withAwardKey is env with a development award signing key, unless env
// says where the key comes from: the service does not start without one.
func withAwardKey(env map[string]string) map[string]string {
	out := map[string]string{"AWARD_DEV_EPHEMERAL_KEY": "true"}
	for k, v := range env {
		out[k] = v
	}
	return out
}
