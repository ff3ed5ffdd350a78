package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// A tribunal member (adjudicator, reviewer) manages its own endpoints and
// deliveries as a partner's orchestrator does, under its own partner id:
// no partner sees them, it sees no partner's, and a party's agent is
// still refused.
func TestTribunalMembersManageTheirOwnEndpoints(t *testing.T) {
	s := newStack(t)
	r := s.do(t, "POST", "/api/webhooks/endpoints", s.reviewer, map[string]any{"url": "https://hooks.tribunal.example/reviewer"}, idem()...)
	require.Equal(t, http.StatusCreated, r.status, string(r.raw))
	id := r.data()["id"].(string)

	r = s.do(t, "GET", "/api/webhooks/endpoints/"+id, s.reviewer, nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "https://hooks.tribunal.example/reviewer", r.data()["url"])
	r = s.do(t, "PATCH", "/api/v2/webhooks/endpoints/"+id, s.reviewer, map[string]any{"description": "reviewer desk"})
	require.Equal(t, http.StatusOK, r.status, string(r.raw))
	r = s.do(t, "POST", "/api/webhooks/endpoints/"+id+"/disable", s.reviewer, nil)
	require.Equal(t, http.StatusOK, r.status)
	r = s.do(t, "POST", "/api/webhooks/endpoints/"+id+"/enable", s.reviewer, nil)
	require.Equal(t, http.StatusOK, r.status)

	// The partner's own endpoint, which the reviewer must not see.
	r = s.do(t, "POST", "/api/webhooks/endpoints", s.partner, map[string]any{"url": "https://hooks.partner.example/pc"}, idem()...)
	require.Equal(t, http.StatusCreated, r.status)
	partnerEndpoint := r.data()["id"].(string)

	for name, token := range map[string]string{"the partner's orchestrator": s.partner, "another partner's orchestrator": s.other,
		"another tribunal member": s.adjudicator, "the partner in live": s.live} {
		r = s.do(t, "GET", "/api/webhooks/endpoints/"+id, token, nil)
		assert.Equal(t, http.StatusNotFound, r.status, name)
		assert.Equal(t, "endpoint_not_found", r.body["code"], name)
		r = s.do(t, "PATCH", "/api/webhooks/endpoints/"+id, token, map[string]any{"description": "x"})
		assert.Equal(t, http.StatusNotFound, r.status, name)
		r = s.do(t, "DELETE", "/api/webhooks/endpoints/"+id, token, nil)
		assert.Equal(t, http.StatusNotFound, r.status, name)
		r = s.do(t, "GET", "/api/webhooks/endpoints", token, nil)
		require.Equal(t, http.StatusOK, r.status, name)
		for _, e := range r.body["data"].([]any) {
			assert.NotEqual(t, id, e.(map[string]any)["id"], name)
		}
	}
	r = s.do(t, "GET", "/api/webhooks/endpoints/"+partnerEndpoint, s.reviewer, nil)
	assert.Equal(t, http.StatusNotFound, r.status, "the reviewer does not see the partner's endpoint")
	r = s.do(t, "GET", "/api/webhooks/endpoints", s.reviewer, nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Len(t, r.body["data"], 1)
	assert.Equal(t, id, r.body["data"].([]any)[0].(map[string]any)["id"])

	// The adjudicator registers its own, on the v2 alias.
	r = s.do(t, "POST", "/api/v2/webhooks/endpoints", s.adjudicator, map[string]any{"url": "https://hooks.tribunal.example/ai"}, idem()...)
	require.Equal(t, http.StatusCreated, r.status, string(r.raw))
	r = s.do(t, "GET", "/api/v2/webhooks/endpoints", s.adjudicator, nil)
	require.Len(t, r.body["data"], 1)

	// A delivery to the reviewer's endpoint is the reviewer's alone.
	now := time.Now()
	d := store.Delivery{ID: "dlv_reviewer_1", EventID: "evt_r1", EventType: "case.opened", EndpointID: id,
		Tenant: "tenant-test", Environment: "sandbox", PartnerID: "tribunal-reviewer-1", Status: store.StatusDelivered, Trigger: store.TriggerScheduled,
		CreatedAt: now.Add(-time.Minute), NextAttemptAt: now.Add(-time.Minute),
		Event: delivery.Event{SchemaVersion: "case-event-v2", EventID: "evt_r1", Sequence: 1, Type: "case.opened", OccurredAt: "2026-11-23T12:00:00.000Z", CaseID: "c", ExternalCaseID: "x"}}
	_, err := s.deliveries.Create(context.Background(), d)
	require.NoError(t, err)
	r = s.do(t, "GET", "/api/webhooks/deliveries/"+d.ID, s.reviewer, nil)
	require.Equal(t, http.StatusOK, r.status, string(r.raw))
	r = s.do(t, "GET", "/api/webhooks/deliveries", s.reviewer, nil)
	require.Len(t, r.body["data"], 1)
	r = s.do(t, "POST", "/api/webhooks/deliveries/"+d.ID+"/replay", s.reviewer, nil, idem()...)
	require.Equal(t, http.StatusAccepted, r.status, string(r.raw))
	for name, token := range map[string]string{"the partner's orchestrator": s.partner, "another partner's orchestrator": s.other, "another tribunal member": s.adjudicator} {
		r = s.do(t, "GET", "/api/webhooks/deliveries/"+d.ID, token, nil)
		assert.Equal(t, http.StatusNotFound, r.status, name)
		r = s.do(t, "POST", "/api/webhooks/deliveries/"+d.ID+"/replay", token, nil, idem()...)
		assert.Equal(t, http.StatusNotFound, r.status, name)
		r = s.do(t, "GET", "/api/webhooks/deliveries", token, nil)
		assert.Empty(t, r.body["data"], name)
	}

	// A party's agent manages no endpoint, its partner's or a member's.
	for _, req := range []struct{ method, path string }{
		{"GET", "/api/webhooks/endpoints"},
		{"GET", "/api/webhooks/endpoints/" + id},
		{"GET", "/api/webhooks/deliveries"},
		{"POST", "/api/webhooks/endpoints"},
	} {
		var body any
		if req.method == "POST" {
			body = map[string]any{"url": "https://hooks.partner.example/agent"}
		}
		r = s.do(t, req.method, req.path, s.claimant, body, idem()...)
		assert.Equal(t, http.StatusForbidden, r.status, req.path)
		assert.Equal(t, "forbidden", r.body["code"], req.path)
	}
}
