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
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
)

var keyN int

func idem() []string {
	keyN++
	return []string{"Idempotency-Key", fmt.Sprintf("test-key-%08d", keyN)}
}

func TestEndpointLifecycle(t *testing.T) {
	s := newStack(t)
	for _, base := range []string{"/api/webhooks", "/api/v2/webhooks"} {
		t.Run(base, func(t *testing.T) {
			r := s.do(t, "POST", base+"/endpoints", s.partner, map[string]any{"url": "https://hooks.partner.example/pc"}, idem()...)
			require.Equal(t, http.StatusCreated, r.status, string(r.raw))
			ep := r.data()
			id := ep["id"].(string)
			assert.Regexp(t, `^we_[0-9a-f]{24}$`, id)
			assert.Equal(t, "enabled", ep["status"])
			assert.Equal(t, []any{}, ep["eventTypes"], "no filter: every type")
			assert.Equal(t, "sandbox", ep["environment"])
			assert.Equal(t, "no-store", r.header.Get("Cache-Control"))
			assert.NotEmpty(t, r.body["requestId"])

			r = s.do(t, "GET", base+"/endpoints/"+id, s.partner, nil)
			require.Equal(t, http.StatusOK, r.status)
			assert.Equal(t, "private, no-store", r.header.Get("Cache-Control"))

			r = s.do(t, "GET", base+"/endpoints/"+id, s.other, nil)
			assert.Equal(t, http.StatusNotFound, r.status, "another partner sees 404")
			assert.Equal(t, "endpoint_not_found", r.body["code"])
			r = s.do(t, "GET", base+"/endpoints/"+id, s.live, nil)
			assert.Equal(t, http.StatusNotFound, r.status, "the other environment sees 404")
			r = s.do(t, "PATCH", base+"/endpoints/"+id, s.other, map[string]any{"description": "x"})
			assert.Equal(t, http.StatusNotFound, r.status)
			r = s.do(t, "DELETE", base+"/endpoints/"+id, s.other, nil)
			assert.Equal(t, http.StatusNotFound, r.status)

			r = s.do(t, "PATCH", base+"/endpoints/"+id, s.partner, map[string]any{"eventTypes": []string{"case.opened"}, "description": "ops"})
			require.Equal(t, http.StatusOK, r.status, string(r.raw))
			assert.Equal(t, []any{"case.opened"}, r.data()["eventTypes"])
			assert.Equal(t, "ops", r.data()["description"])
			r = s.do(t, "PATCH", base+"/endpoints/"+id, s.partner, map[string]any{"eventTypes": nil})
			require.Equal(t, http.StatusOK, r.status)
			assert.Equal(t, []any{}, r.data()["eventTypes"], "null resets the filter")
			assert.Equal(t, "ops", r.data()["description"], "absent members are unchanged")

			r = s.do(t, "POST", base+"/endpoints/"+id+"/disable", s.partner, nil)
			require.Equal(t, http.StatusOK, r.status)
			assert.Equal(t, "disabled_by_partner", r.data()["status"])
			r = s.do(t, "POST", base+"/endpoints/"+id+"/enable", s.partner, nil)
			require.Equal(t, http.StatusOK, r.status)
			assert.Equal(t, "enabled", r.data()["status"])

			r = s.do(t, "GET", base+"/endpoints", s.partner, nil)
			require.Equal(t, http.StatusOK, r.status)
			assert.Len(t, r.body["data"], 1)
			r = s.do(t, "GET", base+"/endpoints", s.other, nil)
			assert.Empty(t, r.body["data"])

			r = s.do(t, "DELETE", base+"/endpoints/"+id, s.partner, nil)
			assert.Equal(t, http.StatusNoContent, r.status)
			r = s.do(t, "GET", base+"/endpoints/"+id, s.partner, nil)
			assert.Equal(t, http.StatusNotFound, r.status)
		})
	}
}

func TestEndpointRefusals(t *testing.T) {
	s := newStack(t)
	tests := []struct {
		name   string
		token  string
		body   any
		status int
		code   string
	}{
		{"no url", s.partner, map[string]any{"description": "x"}, 400, "invalid_endpoint"},
		{"http in live", s.live, map[string]any{"url": "http://hooks.partner.example/"}, 400, "invalid_endpoint"},
		{"credentials in url", s.partner, map[string]any{"url": "https://u:p@hooks.partner.example/"}, 400, "invalid_endpoint"},
		{"metadata address", s.partner, map[string]any{"url": "https://169.254.169.254/"}, 422, "endpoint_url_forbidden"},
		{"private address", s.partner, map[string]any{"url": "https://10.0.0.8/"}, 422, "endpoint_url_forbidden"},
		{"unknown member", s.partner, map[string]any{"url": "https://hooks.partner.example/", "secret": "x"}, 400, "unknown_field"},
		{"bad event type", s.partner, map[string]any{"url": "https://hooks.partner.example/", "eventTypes": []string{"Nope!"}}, 400, "invalid_endpoint"},
		{"wrong type", s.partner, map[string]any{"url": 7}, 400, "invalid_field_type"},
		{"claimant agent", s.claimant, map[string]any{"url": "https://hooks.partner.example/"}, 403, "forbidden"},
		{"no credential", "", map[string]any{"url": "https://hooks.partner.example/"}, 401, "unauthenticated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(t, "POST", "/api/webhooks/endpoints", tc.token, tc.body, idem()...)
			assert.Equal(t, tc.status, r.status, string(r.raw))
			assert.Equal(t, tc.code, r.body["code"])
		})
	}
	r := s.do(t, "POST", "/api/webhooks/endpoints", s.partner, map[string]any{"url": "https://hooks.partner.example/"})
	assert.Equal(t, "idempotency_key_missing", r.body["code"])

	key := idem()
	first := s.do(t, "POST", "/api/webhooks/endpoints", s.partner, map[string]any{"url": "https://hooks.partner.example/a"}, key...)
	again := s.do(t, "POST", "/api/webhooks/endpoints", s.partner, map[string]any{"url": "https://hooks.partner.example/a"}, key...)
	require.Equal(t, http.StatusCreated, again.status)
	assert.Equal(t, first.data()["id"], again.data()["id"], "a retry returns the same endpoint")
	list := s.do(t, "GET", "/api/webhooks/endpoints", s.partner, nil)
	assert.Len(t, list.body["data"], 1)
}

func TestKeysArePublicAndCacheable(t *testing.T) {
	s := newStack(t)
	r := s.do(t, "GET", "/api/webhooks/keys", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "public, max-age=300", r.header.Get("Cache-Control"))
	ks := r.body["keys"].([]any)
	require.Len(t, ks, 2)
	for _, k := range ks {
		m := k.(map[string]any)
		assert.Equal(t, "OKP", m["kty"])
		assert.Equal(t, "Ed25519", m["crv"])
		assert.NotContains(t, m, "d")
	}
	r = s.do(t, "GET", "/api/webhooks/keys?environment=live", "", nil)
	require.Len(t, r.body["keys"], 1)
	assert.Regexp(t, `^pcwh_live_`, r.body["keys"].([]any)[0].(map[string]any)["kid"])
	r = s.do(t, "GET", "/api/webhooks/keys?environment=prod", "", nil)
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Equal(t, "invalid_query", r.body["code"])
}

// An endpoint the service disabled shows why in its own GET: the
// operational event is durable, not only a log line.
func TestAutomaticDisableIsReadableOnTheEndpoint(t *testing.T) {
	s := newStack(t)
	r := s.do(t, "POST", "/api/webhooks/endpoints", s.partner, map[string]any{"url": "https://hooks.partner.example/"}, idem()...)
	require.Equal(t, http.StatusCreated, r.status)
	id := r.data()["id"].(string)
	assert.Equal(t, []any{}, r.data()["operationalEvents"])

	at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	scope := endpoints.Scope{Tenant: "tenant-test", Environment: "sandbox", PartnerID: "partner-test"}
	_, err := s.endpoints.Modify(context.Background(), scope, id, func(e endpoints.Endpoint) (endpoints.Endpoint, error) {
		next, _ := endpoints.RecordAttempt(e, delivery.DefaultHealthPolicy(), delivery.Gone, at)
		return next, nil
	})
	require.NoError(t, err)

	for _, base := range []string{"/api/webhooks", "/api/v2/webhooks"} {
		r = s.do(t, "GET", base+"/endpoints/"+id, s.partner, nil)
		require.Equal(t, http.StatusOK, r.status)
		assert.Equal(t, "disabled_after_failures", r.data()["status"])
		assert.Equal(t, []any{map[string]any{"type": "endpoint.disabled", "at": "2026-11-23T12:00:00Z", "reason": "gone", "failures": float64(0)}},
			r.data()["operationalEvents"])
	}
	r = s.do(t, "POST", "/api/webhooks/endpoints/"+id+"/enable", s.partner, nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.Len(t, r.data()["operationalEvents"], 1, "enabling again keeps the record")
}
