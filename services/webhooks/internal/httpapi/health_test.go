package httpapi_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/dispatch"
	"github.com/pcourt/pcourt/services/webhooks/internal/egress"
	"github.com/pcourt/pcourt/services/webhooks/internal/keys"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// receiver is a partner's HTTP receiver that answers status and keeps
// what it was sent.
type receiver struct {
	url    string
	status atomic.Int32
	mu     sync.Mutex
	got    []received
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t testing.TB, status int) *receiver {
	r := &receiver{}
	r.status.Store(int32(status))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{req.Header.Clone(), b})
		r.mu.Unlock()
		w.WriteHeader(int(r.status.Load()))
	}))
	t.Cleanup(ts.Close)
	r.url = ts.URL + "/hook"
	return r
}

func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// send runs one pass of a real sender over the stack's schedule.
func (s *stack) send(t testing.TB) {
	t.Helper()
	policy := egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	cfg := dispatch.DefaultConfig()
	clients := dispatch.Clients{
		Sandbox: egress.NewClient(egress.NewDialer(policy.ForEnvironment("sandbox"), nil, time.Second), cfg.Timeout, cfg.Concurrency),
		Live:    egress.NewClient(egress.NewDialer(policy.ForEnvironment("live"), nil, time.Second), cfg.Timeout, cfg.Concurrency),
	}
	sender := dispatch.New(cfg, s.deliveries, s.endpoints, s.ring, clients, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, nil)
	sender.Poll(context.Background())
	sender.Wait()
}

func TestTestEventsAreSignedDeliveriesCountedInTheHealth(t *testing.T) {
	s := newStack(t)
	rcv := newReceiver(t, http.StatusInternalServerError)
	r := s.do(t, "POST", "/api/webhooks/endpoints", s.partner, map[string]any{"url": rcv.url, "eventTypes": []string{"opened"}}, idem()...)
	require.Equal(t, http.StatusCreated, r.status, string(r.raw))
	ep := r.data()["id"].(string)

	r = s.do(t, "GET", "/api/webhooks/endpoints/"+ep+"/health", s.partner, nil)
	require.Equal(t, http.StatusOK, r.status, string(r.raw))
	h := r.data()
	assert.EqualValues(t, 0, h["attempts"])
	assert.Nil(t, h["successRate"], "no attempts, no rate")
	assert.EqualValues(t, 0, h["consecutiveFailures"])
	assert.NotContains(t, h, "disableAt")
	assert.Equal(t, "private, no-store", r.header.Get("Cache-Control"))

	// A test event of a type the endpoint does not subscribe to is still
	// sent: the partner asked for it, to this endpoint.
	r = s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/test", s.partner, map[string]any{"type": "answer_filed"}, idem()...)
	require.Equal(t, http.StatusAccepted, r.status, string(r.raw))
	d := r.data()
	assert.Equal(t, "test", d["trigger"])
	assert.Equal(t, "answer_filed", d["eventType"])
	assert.Regexp(t, `^evt_test_[0-9a-f]{24}$`, d["eventId"])
	assert.Equal(t, "/api/webhooks/deliveries/"+d["id"].(string), r.header.Get("Location"))

	s.send(t)
	require.Len(t, rcv.got, 1)
	var body map[string]any
	require.NoError(t, json.Unmarshal(rcv.got[0].body, &body))
	assert.Equal(t, "case_test", body["caseId"])
	assert.Equal(t, d["eventId"], body["eventId"])
	assert.Equal(t, d["id"], body["deliveryId"])
	jwks := s.do(t, "GET", "/api/webhooks/keys?environment=sandbox", "", nil)
	set, err := signature.ParseJWKS(jwks.raw)
	require.NoError(t, err)
	got, err := signature.Verify(rcv.got[0].header, rcv.got[0].body, ep, set.Lookup, time.Now(), 5*time.Minute)
	require.NoError(t, err, "signed with a published key, for this endpoint, as every delivery")
	assert.True(t, got.Test, "signed as a test event")

	before := time.Now()
	r = s.do(t, "GET", "/api/v2/webhooks/endpoints/"+ep+"/health", s.partner, nil)
	require.Equal(t, http.StatusOK, r.status, string(r.raw))
	h = r.data()
	assert.EqualValues(t, 1, h["attempts"])
	assert.EqualValues(t, 0, h["successes"])
	assert.EqualValues(t, 0, h["successRate"])
	assert.EqualValues(t, 1, h["consecutiveFailures"])
	assert.EqualValues(t, 10, h["disableMinFailures"])
	failingSince, err := time.Parse(time.RFC3339Nano, h["failingSince"].(string))
	require.NoError(t, err)
	disableAt, err := time.Parse(time.RFC3339Nano, h["disableAt"].(string))
	require.NoError(t, err)
	assert.Equal(t, 5*24*time.Hour, disableAt.Sub(failingSince), "the streak disables after five days of failures")
	assert.WithinDuration(t, before, failingSince, 10*time.Second)
	since, err := time.Parse(time.RFC3339Nano, h["since"].(string))
	require.NoError(t, err)
	assert.WithinDuration(t, before.Add(-23*time.Hour), since, time.Hour, "the last 24 clock hours")

	rcv.status.Store(http.StatusNoContent)
	r = s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/test", s.partner, map[string]any{}, idem()...)
	require.Equal(t, http.StatusAccepted, r.status, string(r.raw))
	assert.Equal(t, "opened", r.data()["eventType"], "no type: the catalogue's first")
	s.send(t)
	r = s.do(t, "GET", "/api/webhooks/endpoints/"+ep+"/health", s.partner, nil)
	h = r.data()
	assert.EqualValues(t, 2, h["attempts"])
	assert.EqualValues(t, 1, h["successes"])
	assert.EqualValues(t, 0.5, h["successRate"])
	assert.EqualValues(t, 1, h["consecutiveFailures"], "one success does not end a streak; three in a row do")
	assert.Positive(t, h["latencyP95Ms"])

	// Hour by hour: 24 clock hours by default, 168 with window=7d, oldest
	// first, the hour of "until" last; the two attempts are in them, an
	// hour without any is listed with zeros.
	assert.Equal(t, "24h", h["window"])
	for window, n := range map[string]int{"24h": 24, "7d": 168} {
		r = s.do(t, "GET", "/api/webhooks/endpoints/"+ep+"/health?window="+window, s.partner, nil)
		require.Equal(t, http.StatusOK, r.status, string(r.raw))
		until, err := time.Parse(time.RFC3339Nano, r.data()["until"].(string))
		require.NoError(t, err)
		hours := r.data()["hours"].([]any)
		require.Len(t, hours, n, window)
		var attempts, successes float64
		for i, raw := range hours {
			hr := raw.(map[string]any)
			start, err := time.Parse(time.RFC3339Nano, hr["start"].(string))
			require.NoError(t, err)
			assert.Equal(t, until.Truncate(time.Hour).Add(-time.Duration(n-1-i)*time.Hour), start, window)
			attempts += hr["attempts"].(float64)
			successes += hr["successes"].(float64)
			if hr["attempts"].(float64) == 0 {
				assert.Nil(t, hr["successRate"], window)
				assert.EqualValues(t, 0, hr["latencyP50Ms"], window)
			} else {
				assert.Positive(t, hr["latencyP50Ms"], window)
				assert.GreaterOrEqual(t, hr["latencyP95Ms"], hr["latencyP50Ms"], window)
			}
		}
		assert.EqualValues(t, 2, attempts, window)
		assert.EqualValues(t, 1, successes, window)
	}
	r = s.do(t, "GET", "/api/webhooks/endpoints/"+ep+"/health?window=30d", s.partner, nil)
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Equal(t, "invalid_query", r.body["code"])

	// A replay of a test event is a test event too, and signed as one.
	r = s.do(t, "POST", "/api/webhooks/deliveries/"+d["id"].(string)+"/replay", s.partner, nil, idem()...)
	require.Equal(t, http.StatusAccepted, r.status, string(r.raw))
	assert.Equal(t, true, r.data()["test"])
	s.send(t)
	all := rcv.received()
	require.Len(t, all, 3)
	assert.Equal(t, "true", all[2].header.Get(signature.HeaderTest))
	assert.Equal(t, ep, all[2].header.Get(signature.HeaderEndpointID))
}

func TestTestEventAndHealthRefusals(t *testing.T) {
	s := newStack(t)
	r := s.do(t, "POST", "/api/webhooks/endpoints", s.partner, map[string]any{"url": "https://hooks.partner.example/"}, idem()...)
	require.Equal(t, http.StatusCreated, r.status)
	ep := r.data()["id"].(string)

	for _, tc := range []struct {
		name, method, path, token string
		body                      any
		status                    int
		code                      string
	}{
		{"another partner's health", "GET", "/health", s.other, nil, 404, "endpoint_not_found"},
		{"the other environment's health", "GET", "/health", s.live, nil, 404, "endpoint_not_found"},
		{"another partner's test", "POST", "/test", s.other, map[string]any{}, 404, "endpoint_not_found"},
		{"unknown type", "POST", "/test", s.partner, map[string]any{"type": "case.exploded"}, 400, "invalid_test_event"},
		{"unknown member", "POST", "/test", s.partner, map[string]any{"type": "opened", "caseId": "c1"}, 400, "unknown_field"},
		{"no body", "POST", "/test", s.partner, nil, 400, "empty_body"},
		{"claimant agent", "POST", "/test", s.claimant, map[string]any{}, 403, "forbidden"},
		{"no credential", "GET", "/health", "", nil, 401, "unauthenticated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(t, tc.method, "/api/webhooks/endpoints/"+ep+tc.path, tc.token, tc.body, idem()...)
			assert.Equal(t, tc.status, r.status, string(r.raw))
			assert.Equal(t, tc.code, r.body["code"])
			assert.Equal(t, "application/problem+json", r.header.Get("Content-Type"))
		})
	}
	r = s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/test", s.partner, map[string]any{"type": "case.exploded"}, idem()...)
	assert.Equal(t, `type "case.exploded" is not a case event type; the case-event-v2 schema lists them.`, r.body["detail"])
	r = s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/test", s.partner, map[string]any{})
	assert.Equal(t, "idempotency_key_missing", r.body["code"])

	s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/disable", s.partner, nil)
	r = s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/test", s.partner, map[string]any{}, idem()...)
	assert.Equal(t, http.StatusConflict, r.status)
	assert.Equal(t, "endpoint_disabled", r.body["code"])
	assert.Equal(t, "Endpoint "+ep+" is disabled_by_partner; enable it before sending it a test event.", r.body["detail"])

	r = s.do(t, "GET", "/api/webhooks/deliveries", s.partner, nil)
	assert.Empty(t, r.body["data"], "no refusal scheduled anything")
}

// "Re-enable and replay what failed" is one request: enable: true turns a
// disabled endpoint on before the recovery starts.
func TestRecoverCanEnableTheEndpointFirst(t *testing.T) {
	s := newStack(t)
	r := s.do(t, "POST", "/api/webhooks/endpoints", s.partner, map[string]any{"url": "https://hooks.partner.example/"}, idem()...)
	require.Equal(t, http.StatusCreated, r.status)
	ep := r.data()["id"].(string)
	s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/disable", s.partner, nil)
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)

	r = s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/recover", s.other, map[string]any{"since": since, "enable": true}, idem()...)
	assert.Equal(t, http.StatusNotFound, r.status, "another partner's endpoint")
	r = s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/recover", s.partner, map[string]any{"since": "soon", "enable": true}, idem()...)
	assert.Equal(t, http.StatusBadRequest, r.status)
	r = s.do(t, "GET", "/api/webhooks/endpoints/"+ep, s.partner, nil)
	assert.Equal(t, "disabled_by_partner", r.data()["status"], "a refused recovery enables nothing")

	r = s.do(t, "POST", "/api/webhooks/endpoints/"+ep+"/recover", s.partner, map[string]any{"since": since, "enable": true}, idem()...)
	require.Equal(t, http.StatusAccepted, r.status, string(r.raw))
	r = s.do(t, "GET", "/api/webhooks/endpoints/"+ep, s.partner, nil)
	assert.Equal(t, "enabled", r.data()["status"])
}

// Deliveries filter by event type, case id and the last answer's HTTP
// status; the single read carries the exact body the attempts sent.
func TestDeliveryFiltersAndTheExactRequestBody(t *testing.T) {
	s := newStack(t)
	rcv := newReceiver(t, http.StatusNoContent)
	r := s.do(t, "POST", "/api/webhooks/endpoints", s.partner, map[string]any{"url": rcv.url}, idem()...)
	require.Equal(t, http.StatusCreated, r.status)
	ep := r.data()["id"].(string)
	failing := newReceiver(t, http.StatusServiceUnavailable)
	r = s.do(t, "POST", "/api/webhooks/endpoints", s.partner, map[string]any{"url": failing.url}, idem()...)
	require.Equal(t, http.StatusCreated, r.status)
	down := r.data()["id"].(string)

	now := time.Now()
	for i, tc := range []struct{ endpoint, typ, caseID string }{
		{ep, "opened", "case_1"}, {ep, "answer_filed", "case_1"}, {ep, "opened", "case_2"}, {down, "opened", "case_2"},
	} {
		ev := delivery.Event{SchemaVersion: "case-event-v2", EventID: fmt.Sprintf("evt_f%d", i), Sequence: int64(i + 1), Type: tc.typ, OccurredAt: "2026-11-23T12:00:00.000Z", CaseID: tc.caseID, ExternalCaseID: "x"}
		_, err := s.deliveries.Create(context.Background(), store.Delivery{ID: fmt.Sprintf("dlv_f%d", i), EventID: fmt.Sprintf("evt_f%d", i), EventType: tc.typ,
			EndpointID: tc.endpoint, Tenant: "tenant-test", Environment: "sandbox", PartnerID: "partner-test", Status: store.StatusScheduled,
			Trigger: store.TriggerScheduled, CreatedAt: now.Add(time.Duration(i) * time.Millisecond), NextAttemptAt: now, Event: ev})
		require.NoError(t, err)
	}
	s.send(t)

	ids := func(query, token string) []string {
		t.Helper()
		r := s.do(t, "GET", "/api/webhooks/deliveries?"+query, token, nil)
		require.Equal(t, http.StatusOK, r.status, string(r.raw))
		out := []string{}
		for _, d := range r.body["data"].([]any) {
			out = append(out, d.(map[string]any)["id"].(string))
		}
		return out
	}
	assert.Equal(t, []string{"dlv_f3", "dlv_f2", "dlv_f0"}, ids("eventType=opened", s.partner))
	assert.Equal(t, []string{"dlv_f1", "dlv_f0"}, ids("caseId=case_1", s.partner))
	assert.Equal(t, []string{"dlv_f3"}, ids("responseStatus=503", s.partner))
	assert.Equal(t, []string{"dlv_f2"}, ids("caseId=case_2&responseStatus=204&eventType=opened", s.partner))
	assert.Empty(t, ids("caseId=case_1", s.other), "another partner's filters see nothing of it")

	r = s.do(t, "GET", "/api/webhooks/deliveries?responseStatus=503", s.partner, nil)
	assert.EqualValues(t, 503, r.body["data"].([]any)[0].(map[string]any)["lastResponseStatus"])
	for _, q := range []string{"eventType=case.exploded", "responseStatus=99", "responseStatus=abc", "caseId=" + strings.Repeat("c", 161)} {
		r = s.do(t, "GET", "/api/webhooks/deliveries?"+q, s.partner, nil)
		assert.Equal(t, http.StatusBadRequest, r.status, q)
		assert.Equal(t, "invalid_query", r.body["code"], q)
	}

	r = s.do(t, "GET", "/api/webhooks/deliveries/dlv_f1", s.partner, nil)
	require.Equal(t, http.StatusOK, r.status)
	var sent []byte
	for _, got := range rcv.received() {
		if strings.Contains(string(got.body), `"dlv_f1"`) {
			sent = got.body
		}
	}
	require.NotEmpty(t, sent)
	assert.Equal(t, string(sent), r.data()["requestBody"], "the exact bytes the receiver got")
	r = s.do(t, "GET", "/api/webhooks/deliveries", s.partner, nil)
	assert.NotContains(t, r.body["data"].([]any)[0], "requestBody", "only on the single read")
}

// GET /api/webhooks/keys/status states each published key's rotation:
// next, active (the one that signs now) or retired, with its dates, and no
// key material.
func TestKeyStatusStatesTheRotation(t *testing.T) {
	now := time.Now().UTC()
	day := func(d int) time.Time { return now.AddDate(0, 0, d).Truncate(24 * time.Hour) }
	cfg := keys.DefaultConfig(dispatch.DefaultConfig().RetryHorizon())
	var ks []keys.Key
	var pems [][]byte
	for _, created := range []time.Time{day(-30), day(-12), day(-5), day(0)} {
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		require.NoError(t, err)
		id, err := signature.NewKeyID(signature.Sandbox, created, pub)
		require.NoError(t, err)
		k, err := keys.FromSeed(cfg, id, priv.Seed())
		require.NoError(t, err)
		ks = append(ks, k)
		p, err := keys.MarshalPEM(priv)
		require.NoError(t, err)
		pems = append(pems, p)
	}
	ring, err := keys.New(cfg, ks...)
	require.NoError(t, err)
	s := newStack(t, ring)

	r := s.do(t, "GET", "/api/webhooks/keys/status?environment=sandbox", "", nil)
	require.Equal(t, http.StatusOK, r.status, string(r.raw))
	assert.Equal(t, "public, max-age=60", r.header.Get("Cache-Control"))
	list := r.body["data"].([]any)
	require.Len(t, list, 3, "the key superseded ten days ago is past its grace: unpublished, not listed")
	states := map[string]map[string]any{}
	for _, k := range list {
		m := k.(map[string]any)
		states[m["state"].(string)] = m
		assert.Equal(t, "sandbox", m["environment"])
		assert.NotContains(t, m, "d")
		assert.NotContains(t, m, "x")
	}
	require.Contains(t, states, "retired")
	require.Contains(t, states, "active")
	require.Contains(t, states, "next")
	assert.Equal(t, ks[1].ID, states["retired"]["kid"])
	assert.Equal(t, ks[2].ID, states["active"]["kid"])
	assert.Equal(t, true, states["active"]["signsNow"])
	assert.Equal(t, false, states["retired"]["signsNow"])
	assert.Equal(t, ks[3].ID, states["next"]["kid"])
	assert.Equal(t, states["active"]["retiresAt"], states["next"]["activatesAt"], "the active key retires when the next activates")
	assert.Equal(t, ks[3].ActivatesAt.UTC().Format(time.RFC3339), states["next"]["activatesAt"])
	assert.NotContains(t, states["next"], "retiresAt")
	assert.NotEmpty(t, states["retired"]["unpublishedAt"])
	for _, p := range pems {
		assert.NotContains(t, string(r.raw), string(p[30:60]), "no private key")
	}

	r = s.do(t, "GET", "/api/webhooks/keys/status", "", nil)
	assert.Len(t, r.body["data"], 3, "live has none in this ring")
	r = s.do(t, "GET", "/api/webhooks/keys/status?environment=prod", "", nil)
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Equal(t, "invalid_query", r.body["code"])
}
