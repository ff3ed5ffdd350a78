package idempotency_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/idempotency"
)

// A replay is one response with one id: the body's requestId is the
// X-Request-Id of the replay, and X-Original-Request-Id names the request
// whose answer it repeats.
func TestReplayCarriesItsOwnRequestID(t *testing.T) {
	h := newHarness(t, idempotency.DefaultConfig("pc:test"))
	h.failWith.Store(402) // a final problem answer, whose body has a requestId

	send := func(requestID string) (*http.Response, map[string]any) {
		req, err := http.NewRequest(http.MethodPost, h.url+"/payments", strings.NewReader(`{"amount":7}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+h.token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(idempotency.Header, "key-request-ids-1")
		req.Header.Set("X-Request-Id", requestID)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var body map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return resp, body
	}

	first, firstBody := send("req-first")
	require.Equal(t, 402, first.StatusCode)
	require.Equal(t, "req-first", firstBody["requestId"])
	require.Empty(t, first.Header.Get(idempotency.OriginalRequestIDHeader))

	replay, replayBody := send("req-second")
	require.Equal(t, "true", replay.Header.Get(idempotency.ReplayedHeader))
	require.Equal(t, 402, replay.StatusCode)
	require.Equal(t, "req-second", replay.Header.Get("X-Request-Id"))
	require.Equal(t, "req-second", replayBody["requestId"], "the body names the response it is in")
	require.Equal(t, "req-first", replay.Header.Get(idempotency.OriginalRequestIDHeader))
	delete(firstBody, "requestId")
	delete(replayBody, "requestId")
	require.Equal(t, firstBody, replayBody, "everything else is the stored answer")
}
