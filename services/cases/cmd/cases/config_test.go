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
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadConfig(func(k string) string { return tc.env[k] })
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
