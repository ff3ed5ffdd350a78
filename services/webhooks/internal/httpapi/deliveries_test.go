package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

func (s *stack) seed(t *testing.T, endpointID string, n int) []string {
	t.Helper()
	var ids []string
	base := time.Now().Add(-time.Hour)
	for i := range n {
		d := store.Delivery{ID: fmt.Sprintf("dlv_%s_%02d", endpointID, i), EventID: fmt.Sprintf("evt_%d", i), EventType: "case.opened", EndpointID: endpointID,
			Tenant: "tenant-test", Environment: "sandbox", PartnerID: "partner-test", Status: store.StatusScheduled, Trigger: store.TriggerScheduled,
			CreatedAt: base.Add(time.Duration(i) * time.Minute), NextAttemptAt: base.Add(time.Duration(i) * time.Minute),
			Event: delivery.Event{SchemaVersion: "case-event-v2", EventID: "evt", Sequence: 1, Type: "case.opened", OccurredAt: "2026-11-23T12:00:00.000Z", CaseID: "c", ExternalCaseID: "x"}}
		if i%2 == 1 {
			d.Status = store.StatusDelivered
		}
		_, err := s.deliveries.Create(context.Background(), d)
		require.NoError(t, err)
		ids = append(ids, d.ID)
	}
	return ids
}

func TestDeliveriesListReadAndReplay(t *testing.T) {
	s := newStack(t)
	r := s.do(t, "POST", "/api/webhooks/endpoints", s.partner, map[string]any{"url": "https://hooks.partner.example/"}, idem()...)
	require.Equal(t, http.StatusCreated, r.status)
	ep := r.data()["id"].(string)
	ids := s.seed(t, ep, 5)

	var got []string
	cursor := ""
	for range 10 {
		path := "/api/v2/webhooks/deliveries?limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		r = s.do(t, "GET", path, s.partner, nil)
		require.Equal(t, http.StatusOK, r.status, string(r.raw))
		for _, d := range r.body["data"].([]any) {
			got = append(got, d.(map[string]any)["id"].(string))
		}
		next, _ := r.body["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	assert.Equal(t, []string{ids[4], ids[3], ids[2], ids[1], ids[0]}, got)

	r = s.do(t, "GET", "/api/webhooks/deliveries?status=delivered&endpointId="+ep, s.partner, nil)
	assert.Len(t, r.body["data"], 2)
	r = s.do(t, "GET", "/api/webhooks/deliveries?eventId=evt_3", s.partner, nil)
	assert.Len(t, r.body["data"], 1)
	r = s.do(t, "GET", "/api/webhooks/deliveries", s.other, nil)
	assert.Empty(t, r.body["data"], "another partner sees none")
	for _, q := range []string{"status=lost", "limit=0", "limit=101", "since=yesterday", "cursor=bm9wZQ"} {
		r = s.do(t, "GET", "/api/webhooks/deliveries?"+q, s.partner, nil)
		assert.Equal(t, http.StatusBadRequest, r.status, q)
	}

	r = s.do(t, "GET", "/api/webhooks/deliveries/"+ids[2], s.partner, nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "evt_2", r.data()["eventId"])
	assert.Equal(t, []any{}, r.data()["attempts"])
	r = s.do(t, "GET", "/api/webhooks/deliveries/"+ids[2], s.other, nil)
	assert.Equal(t, http.StatusNotFound, r.status)
	assert.Equal(t, "delivery_not_found", r.body["code"])

	key := idem()
	r = s.do(t, "POST", "/api/webhooks/deliveries/"+ids[2]+"/replay", s.partner, nil, key...)
	require.Equal(t, http.StatusAccepted, r.status, string(r.raw))
	replay := r.data()
	assert.NotEqual(t, ids[2], replay["id"])
	assert.Equal(t, "evt_2", replay["eventId"])
	assert.Equal(t, "manual", replay["trigger"])
	assert.Equal(t, ids[2], replay["replayOf"])
	again := s.do(t, "POST", "/api/v2/webhooks/deliveries/"+ids[2]+"/replay", s.partner, nil, key...)
	assert.Equal(t, replay["id"], again.data()["id"], "the same Idempotency-Key replays the answer")
	r = s.do(t, "GET", "/api/webhooks/deliveries?eventId=evt_2", s.partner, nil)
	assert.Len(t, r.body["data"], 2)

	r = s.do(t, "POST", "/api/webhooks/deliveries/"+ids[2]+"/replay", s.other, nil, idem()...)
	assert.Equal(t, http.StatusNotFound, r.status)
	s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/disable", s.partner, nil)
	r = s.do(t, "POST", "/api/webhooks/deliveries/"+ids[2]+"/replay", s.partner, nil, idem()...)
	assert.Equal(t, http.StatusConflict, r.status)
	assert.Equal(t, "endpoint_disabled", r.body["code"])
	assert.Equal(t, "Endpoint "+ep+" is disabled_by_partner; enable it before replaying to it.", r.body["detail"])
}
