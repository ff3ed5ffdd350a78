package httpapi_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/services/readiness/internal/events"
)

// A paid report publishes one settlement fact that matches its published
// schema and names the payment it settled.
func TestSettlementFactMatchesItsSchema(t *testing.T) {
	s := newStack(t)
	a := s.post(t, validBody, encode(t, s.sign(t, s.offer(t), nil)))
	require.Equal(t, 200, a.status, string(a.body))

	var facts [][]byte
	for _, stream := range journal.Sharding.Streams() {
		entries, err := s.rdb.XRange(context.Background(), stream, "-", "+").Result()
		require.NoError(t, err)
		for _, e := range entries {
			require.Equal(t, events.SettlementTopic, e.Values["topic"])
			require.Equal(t, events.SettlementSchema, e.Values["schema"])
			facts = append(facts, []byte(e.Values["payload"].(string)))
		}
	}
	require.Len(t, facts, 1)
	apitest.Event(t, "readiness-settlement-v1.schema.json", facts[0])
	var fact events.Settlement
	require.NoError(t, json.Unmarshal(facts[0], &fact))
	require.Equal(t, a.settled.Transaction, fact.Transaction)
	require.Equal(t, s.payerAddress(), fact.Payer)
	require.Equal(t, "10000", fact.Amount)
	require.False(t, fact.Reconciled)
}
