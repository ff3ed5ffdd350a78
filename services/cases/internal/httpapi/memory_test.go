package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
)

// caseBytes is what Redis spends on one case: MEMORY USAGE (every
// sample) of each key under the case's own prefix, the case hash, its
// docket, documents and hosted-page markers. The shard-wide keys (indexes,
// deadlines, outbox) hold a few members per case and are not counted.
func caseBytes(t *testing.T, s *stack, caseID string) (int64, int) {
	t.Helper()
	ctx := context.Background()
	var keys []string
	iter := s.rdb.Scan(ctx, 0, "pc:cases:*:case:"+caseID+"*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	require.NoError(t, iter.Err())
	var total int64
	for _, k := range keys {
		n, err := s.rdb.MemoryUsage(ctx, k, 0).Result()
		require.NoError(t, err)
		total += n
	}
	return total, len(keys)
}

// The figure docs/redis.md sizes Redis with ("Memory per case"): a case
// at opening, and the same case after its whole docket to an executed
// award. It fails when a case grows past the budget the page states, so
// the page stays true.
func TestMemoryPerCase(t *testing.T) {
	s := newStack(t)
	opened := s.open(t)
	atOpening, keys := caseBytes(t, s, opened.id)
	t.Logf("at opening: %d bytes in %d keys, %d docket events", atOpening, keys, len(s.docketTypes(t, opened.id)))

	c, hash := s.awarded(t)
	s.final(t, c)
	reporter := s.grantReport(t, c, respondentPartner, auth.Respondent)
	report := map[string]any{"mode": "party_reported", "action": "report", "awardHash": hash, "remedyIndex": 0, "reference": "wire 2026-11-28/0042"}
	rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/executions", reporter, newKey(), report)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	executed, keys := caseBytes(t, s, c.id)
	t.Logf("executed award: %d bytes in %d keys, %d docket events", executed, keys, len(s.docketTypes(t, c.id)))

	require.Less(t, atOpening, int64(8<<10), fmt.Sprintf("docs/redis.md budgets 8 KiB a case at opening, measured %d", atOpening))
	require.Less(t, executed, int64(64<<10), fmt.Sprintf("docs/redis.md budgets 64 KiB an executed case, measured %d", executed))
}
