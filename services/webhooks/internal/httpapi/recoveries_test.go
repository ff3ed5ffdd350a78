package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/recovery"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

func TestRecoverAnEndpoint(t *testing.T) {
	s := newStack(t)
	r := s.do(t, "POST", "/api/webhooks/endpoints", s.partner, map[string]any{"url": "https://hooks.partner.example/"}, idem()...)
	require.Equal(t, http.StatusCreated, r.status)
	ep := r.data()["id"].(string)
	// An hour ago, a minute apart: three failed, then scheduled, delivered, cancelled.
	var ids []string
	for i, status := range []string{"failed", "failed", "failed", "scheduled", "delivered", "cancelled"} {
		at := time.Now().Add(-time.Hour + time.Duration(i)*time.Minute)
		d := store.Delivery{ID: fmt.Sprintf("dlv_r%d", i), EventID: fmt.Sprintf("evt_r%d", i), EventType: "case.opened", EndpointID: ep,
			Tenant: "tenant-test", Environment: "sandbox", PartnerID: "partner-test", Status: status, Trigger: store.TriggerScheduled,
			CreatedAt: at, NextAttemptAt: at, Event: delivery.Event{}}
		_, err := s.deliveries.Create(context.Background(), d)
		require.NoError(t, err)
		ids = append(ids, d.ID)
	}
	since := time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339Nano)

	for _, body := range []map[string]any{
		{},
		{"since": "yesterday"},
		{"since": time.Now().Add(-8 * 24 * time.Hour).Format(time.RFC3339)},
		{"since": since, "until": time.Now().Add(time.Hour).Format(time.RFC3339)},
		{"since": since, "extra": true},
	} {
		r = s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/recover", s.partner, body, idem()...)
		assert.Equal(t, http.StatusBadRequest, r.status, "%v: %s", body, r.raw)
	}
	r = s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/recover", s.partner, map[string]any{"since": since})
	assert.Equal(t, http.StatusBadRequest, r.status, "Idempotency-Key is required")
	r = s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/recover", s.other, map[string]any{"since": since}, idem()...)
	assert.Equal(t, http.StatusNotFound, r.status, "another partner's endpoint")
	assert.Equal(t, "endpoint_not_found", r.body["code"])

	key := idem()
	r = s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/recover", s.partner, map[string]any{"since": since}, key...)
	require.Equal(t, http.StatusAccepted, r.status, string(r.raw))
	job := r.data()
	id := job["id"].(string)
	assert.Regexp(t, `^rcv_[0-9a-f]{24}$`, id)
	assert.Equal(t, "running", job["status"])
	assert.EqualValues(t, 6, job["total"])
	assert.EqualValues(t, 0, job["scheduled"])
	assert.Equal(t, map[string]any{"scheduled": 0.0, "delivered": 0.0, "failed": 0.0, "cancelled": 0.0}, job["replays"], "nothing replayed yet")
	assert.Equal(t, "/api/webhooks/endpoints/"+ep+"/recoveries/"+id, r.header.Get("Location"))
	assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
	again := s.do(t, "POST", "/api/v2/webhooks/endpoints/"+ep+"/recover", s.partner, map[string]any{"since": since}, key...)
	assert.Equal(t, id, again.data()["id"], "the same Idempotency-Key replays the answer, on either route")
	r = s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/recover", s.partner, map[string]any{"since": since}, idem()...)
	assert.Equal(t, http.StatusConflict, r.status)
	assert.Equal(t, "recovery_in_progress", r.body["code"])
	assert.Contains(t, r.body["detail"], id)

	w := recovery.NewWorker(recovery.DefaultConfig(), s.recoveries, s.deliveries, s.endpoints, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, nil)
	for {
		worked, err := w.Step(context.Background())
		require.NoError(t, err)
		if !worked {
			break
		}
	}
	for _, base := range []string{"/api/webhooks", "/api/v2/webhooks"} {
		r = s.do(t, "GET", base+"/endpoints/"+ep+"/recoveries/"+id, s.partner, nil)
		require.Equal(t, http.StatusOK, r.status, string(r.raw))
		assert.Equal(t, "private, no-store", r.header.Get("Cache-Control"))
		got := r.data()
		assert.Equal(t, "completed", got["status"])
		assert.EqualValues(t, 6, got["scanned"])
		assert.EqualValues(t, 4, got["scheduled"], "the three failed deliveries and the cancelled one")
		assert.Equal(t, map[string]any{"scheduled": 4.0, "delivered": 0.0, "failed": 0.0, "cancelled": 0.0}, got["replays"], "queued, none sent yet")
		assert.NotEmpty(t, got["completedAt"])
	}
	r = s.do(t, "GET", "/api/webhooks/deliveries?endpointId="+ep+"&status=scheduled", s.partner, nil)
	replayOf := map[string]bool{}
	for _, d := range r.body["data"].([]any) {
		d := d.(map[string]any)
		if d["trigger"] == "recovery" {
			replayOf[d["replayOf"].(string)] = true
		}
	}
	assert.Equal(t, map[string]bool{ids[0]: true, ids[1]: true, ids[2]: true, ids[5]: true}, replayOf)

	// The sender delivers two of the replays and gives up on one: the
	// recovery says so, in the shape the OpenAPI document gives it.
	outcomes := []string{store.StatusDelivered, store.StatusDelivered, store.StatusFailed}
	for n := range s.deliveries.Shards() {
		claimed, err := s.deliveries.Claim(context.Background(), n, time.Now(), time.Minute, 100, "tok")
		require.NoError(t, err)
		for _, d := range claimed {
			if d.RecoveryID != id || len(outcomes) == 0 {
				continue
			}
			d.Status, d.Attempts, outcomes = outcomes[0], 1, outcomes[1:]
			require.NoError(t, s.deliveries.Complete(context.Background(), "tok", d, &store.Attempt{Number: 1, Outcome: "success"}))
		}
	}
	require.Empty(t, outcomes)
	for _, base := range []string{"/api/webhooks", "/api/v2/webhooks"} {
		r = s.documented(t, base+"/endpoints/"+ep+"/recoveries/"+id, s.partner)
		require.Equal(t, http.StatusOK, r.status, string(r.raw))
		assert.Equal(t, map[string]any{"scheduled": 1.0, "delivered": 2.0, "failed": 1.0, "cancelled": 0.0}, r.data()["replays"])
	}

	r = s.do(t, "GET", "/api/webhooks/endpoints/"+ep+"/recoveries/"+id, s.other, nil)
	assert.Equal(t, http.StatusNotFound, r.status, "another partner")
	assert.Equal(t, "recovery_not_found", r.body["code"])
	r = s.do(t, "GET", "/api/webhooks/endpoints/we_other/recoveries/"+id, s.partner, nil)
	assert.Equal(t, http.StatusNotFound, r.status, "under another endpoint")

	s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/disable", s.partner, nil)
	r = s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/recover", s.partner, map[string]any{"since": since}, idem()...)
	assert.Equal(t, http.StatusConflict, r.status)
	assert.Equal(t, "endpoint_disabled", r.body["code"])
	assert.Equal(t, "Endpoint "+ep+` is disabled_by_partner; enable it before recovering to it, or send "enable": true.`, r.body["detail"])
}
