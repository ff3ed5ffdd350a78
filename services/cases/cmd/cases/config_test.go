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
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadConfig(withKeys(tc.env))
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
		cfg, err := loadConfig(withKeys(tc.env))
		require.NoError(t, err, "%v", tc.env)
		require.Equal(t, tc.secure, cfg.Respond.SecureCookie, "%v", tc.env)
	}
}

// withKeys is env with the development award key and an evidence
// directory, which every configuration needs (or a key directory, or a
// bucket).
func withKeys(env map[string]string) func(string) string {
	defaults := map[string]string{"AWARD_DEV_EPHEMERAL_KEY": "true", "EVIDENCE_STORE_DIR": "/var/lib/pcourt/evidence"}
	return func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return defaults[k]
	}
}

// A service with nowhere to keep exhibits refuses to start, and so does
// one given a directory and a bucket at once.
func TestAnEvidenceStoreIsRequired(t *testing.T) {
	_, err := loadConfig(withKeys(map[string]string{"EVIDENCE_STORE_DIR": ""}))
	require.ErrorContains(t, err, "EVIDENCE_STORE_DIR")
	_, err = loadConfig(withKeys(map[string]string{"EVIDENCE_S3_BUCKET": "pcourt-evidence"}))
	require.Error(t, err)
	cfg, err := loadConfig(withKeys(map[string]string{"EVIDENCE_STORE_DIR": "", "EVIDENCE_S3_ENDPOINT": "s3.example:443", "EVIDENCE_S3_BUCKET": "pcourt-evidence",
		"EVIDENCE_S3_REGION": "eu-west-1", "EVIDENCE_S3_ACCESS_KEY_ID": "AKIA", "EVIDENCE_S3_SECRET_ACCESS_KEY": "secret", "EVIDENCE_SPOOL_DIR": "/var/spool/pcourt-evidence"}))
	require.NoError(t, err)
	require.Equal(t, "pcourt-evidence", cfg.Evidence.S3.Bucket)
	require.Equal(t, "/var/spool/pcourt-evidence", cfg.SpoolDir)
}

// A service that would sign awards with nothing refuses to start.
func TestAwardKeysAreRequired(t *testing.T) {
	_, err := loadConfig(withKeys(map[string]string{"AWARD_DEV_EPHEMERAL_KEY": "false"}))
	require.ErrorContains(t, err, "AWARD_SIGNING_KEYS_DIR")
	cfg, err := loadConfig(withKeys(map[string]string{"AWARD_DEV_EPHEMERAL_KEY": "false", "AWARD_SIGNING_KEYS_DIR": "/etc/pcourt/award-keys"}))
	require.NoError(t, err)
	require.Equal(t, "/etc/pcourt/award-keys", cfg.AwardKeys.Dir)
}

// Closed cases are archived 90 days after closing unless
// CASES_ARCHIVE_AFTER says otherwise; off or 0 switches archiving off, and
// a value that is no duration stops the start.
func TestTheArchiveRetentionIsNinetyDaysUnlessSet(t *testing.T) {
	for _, tc := range []struct {
		value string
		after time.Duration
		ok    bool
	}{
		{"", 90 * 24 * time.Hour, true},
		{"720h", 30 * 24 * time.Hour, true},
		{"off", 0, true},
		{"OFF", 0, true},
		{"0", 0, true},
		{"90d", 0, false},
		{"-1h", 0, false},
	} {
		cfg, err := loadConfig(withKeys(map[string]string{"CASES_ARCHIVE_AFTER": tc.value}))
		if !tc.ok {
			require.Error(t, err, tc.value)
			continue
		}
		require.NoError(t, err, tc.value)
		require.Equal(t, tc.after, cfg.Archive.After, tc.value)
		require.Equal(t, tc.after > 0, cfg.Archive.Enabled(), tc.value)
	}
}
