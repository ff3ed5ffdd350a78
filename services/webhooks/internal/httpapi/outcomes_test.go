package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
)

// documented is s.do for a GET whose exchange must be the one
// api/openapi.yaml describes.
func (s *stack) documented(t *testing.T, path, token string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.url+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, raw := apitest.Do(t, http.DefaultClient, req)
	r := reply{status: resp.StatusCode, header: resp.Header, raw: raw}
	require.NoError(t, json.Unmarshal(raw, &r.body))
	return r
}

// The deliveries by outcome, hour by hour, are what the listing finds for
// the same hour and status: test events to a receiver that takes them
// (delivered), one that answers 410 (failed), one that answers 500
// (scheduled, retrying) and one disabled before its event went out
// (cancelled), beside deliveries created an hour earlier. The window is
// 24 or 168 clock hours; another partner sees none of it.
func TestDeliveryOutcomesAreTheListingsCountsHourByHour(t *testing.T) {
	s := newStack(t)
	endpoint := func(status int) string {
		t.Helper()
		rcv := newReceiver(t, status)
		r := s.do(t, "POST", "/api/webhooks/endpoints", s.partner, map[string]any{"url": rcv.url}, idem()...)
		require.Equal(t, http.StatusCreated, r.status, string(r.raw))
		return r.data()["id"].(string)
	}
	test := func(ep string, n int) {
		t.Helper()
		for range n {
			r := s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/test", s.partner, map[string]any{}, idem()...)
			require.Equal(t, http.StatusAccepted, r.status, string(r.raw))
		}
	}
	ok, gone, failing, disabled := endpoint(http.StatusNoContent), endpoint(http.StatusGone), endpoint(http.StatusInternalServerError), endpoint(http.StatusNoContent)
	test(ok, 3)
	test(gone, 1)
	test(failing, 2)
	test(disabled, 1)
	r := s.do(t, "POST", "/api/webhooks/endpoints/"+disabled+"/disable", s.partner, nil)
	require.Equal(t, http.StatusOK, r.status, string(r.raw))
	s.send(t)
	s.seed(t, ok, 4) // created an hour earlier, after the send: two scheduled, two delivered

	// The listing's deliveries, by the hour they were created and their
	// status: what each hour's figures must be.
	listed := map[string]map[string]float64{}
	r = s.do(t, "GET", "/api/webhooks/deliveries?limit=100", s.partner, nil)
	require.Equal(t, http.StatusOK, r.status, string(r.raw))
	require.Len(t, r.body["data"].([]any), 11)
	for _, raw := range r.body["data"].([]any) {
		d := raw.(map[string]any)
		created, err := time.Parse(time.RFC3339Nano, d["createdAt"].(string))
		require.NoError(t, err)
		hour := created.UTC().Truncate(time.Hour).Format(time.RFC3339)
		if listed[hour] == nil {
			listed[hour] = map[string]float64{"scheduled": 0, "delivered": 0, "failed": 0, "cancelled": 0}
		}
		listed[hour][d["status"].(string)]++
	}
	require.Len(t, listed, 2, "this hour's and the seeded hour's")

	for window, n := range map[string]int{"24h": 24, "7d": 168} {
		r = s.documented(t, "/api/webhooks/deliveries/outcomes?window="+window, s.partner)
		require.Equal(t, http.StatusOK, r.status, string(r.raw))
		assert.Equal(t, "private, no-store", r.header.Get("Cache-Control"))
		data := r.data()
		assert.Equal(t, window, data["window"])
		until, err := time.Parse(time.RFC3339Nano, data["until"].(string))
		require.NoError(t, err)
		hours := data["hours"].([]any)
		require.Len(t, hours, n, window)
		assert.Equal(t, hours[0].(map[string]any)["start"], data["since"])
		drawn := map[string]map[string]float64{}
		total := map[string]float64{}
		for i, raw := range hours {
			h := raw.(map[string]any)
			start, err := time.Parse(time.RFC3339Nano, h["start"].(string))
			require.NoError(t, err)
			require.Equal(t, until.Truncate(time.Hour).Add(-time.Duration(n-1-i)*time.Hour), start, window)
			counts := map[string]float64{}
			for _, status := range []string{"scheduled", "delivered", "failed", "cancelled"} {
				counts[status] = h[status].(float64)
				total[status] += counts[status]
			}
			if counts["scheduled"]+counts["delivered"]+counts["failed"]+counts["cancelled"] > 0 {
				drawn[start.Format(time.RFC3339)] = counts
			}
		}
		assert.Equal(t, listed, drawn, "%s: each hour's figures are the listing's", window)
		assert.Equal(t, map[string]float64{"scheduled": 4, "delivered": 5, "failed": 1, "cancelled": 1}, total, window)
		for status, n := range total {
			assert.EqualValues(t, n, data["total"].(map[string]any)[status], "%s total %s", window, status)
		}
	}

	r = s.documented(t, "/api/v2/webhooks/deliveries/outcomes", s.partner)
	require.Equal(t, http.StatusOK, r.status, string(r.raw))
	assert.Equal(t, "24h", r.data()["window"], "the default window, under the alias too")
	assert.EqualValues(t, 5, r.data()["total"].(map[string]any)["delivered"])

	r = s.do(t, "GET", "/api/webhooks/deliveries/outcomes", s.other, nil)
	require.Equal(t, http.StatusOK, r.status, string(r.raw))
	assert.Equal(t, map[string]any{"scheduled": 0.0, "delivered": 0.0, "failed": 0.0, "cancelled": 0.0}, r.data()["total"], "another partner's are its own: none")
	r = s.do(t, "GET", "/api/webhooks/deliveries/outcomes", s.live, nil)
	require.Equal(t, http.StatusOK, r.status, string(r.raw))
	assert.EqualValues(t, 0, r.data()["total"].(map[string]any)["delivered"], "nor the same partner's other environment")

	r = s.documented(t, "/api/webhooks/deliveries/outcomes?window=30d", s.partner)
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Equal(t, "invalid_query", r.body["code"])
	r = s.do(t, "GET", "/api/webhooks/deliveries/outcomes", s.claimant, nil)
	assert.Equal(t, http.StatusForbidden, r.status, "a party's agent is refused, as on every webhook route")
	r = s.do(t, "GET", "/api/webhooks/deliveries/outcomes", "", nil)
	assert.Equal(t, http.StatusUnauthorized, r.status)
}
