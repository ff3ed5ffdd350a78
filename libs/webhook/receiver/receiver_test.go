package receiver_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/webhook/receiver"
	"github.com/pcourt/pcourt/libs/webhook/signature"
)

// clock is a settable clock shared by the test, the cache and the handler.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newSigner(t testing.TB, env signature.Environment, name string) *signature.Signer {
	t.Helper()
	seed := sha256.Sum256([]byte(name))
	priv := ed25519.NewKeyFromSeed(seed[:])
	kid, err := signature.NewKeyID(env, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), priv.Public().(ed25519.PublicKey))
	require.NoError(t, err)
	s, err := signature.NewSigner(kid, priv)
	require.NoError(t, err)
	return s
}

// jwksServer publishes a key set that the test can change, and counts fetches.
type jwksServer struct {
	*httptest.Server
	mu           sync.Mutex
	keys         []signature.JWK
	cacheControl string
	fail         bool
	fetches      atomic.Int32
}

func newJWKSServer(t testing.TB, signers ...*signature.Signer) *jwksServer {
	t.Helper()
	s := &jwksServer{cacheControl: "public, max-age=300"}
	s.publish(signers...)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.fail {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		data, err := signature.MarshalJWKS(s.keys...)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("Cache-Control", s.cacheControl)
		_, _ = w.Write(data)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) publish(signers ...*signature.Signer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = nil
	for _, sg := range signers {
		s.keys = append(s.keys, sg.JWK())
	}
}

func (s *jwksServer) setFail(fail bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = fail
}

func eventBody(eventID, deliveryID string, sequence int) []byte {
	return []byte(fmt.Sprintf(`{"schemaVersion":"case-event-v2","eventId":%q,"deliveryId":%q,"sequence":%d,"type":"case.opened","occurredAt":"2026-11-23T09:59:58.000Z","caseId":"case_1","externalCaseId":"ext-1","actionRequired":true,"deadlineAt":"2026-11-30T12:00:00.000Z"}`,
		eventID, deliveryID, sequence))
}

func deliver(t testing.TB, h http.Handler, s *signature.Signer, body []byte, eventID string, at time.Time) *httptest.ResponseRecorder {
	t.Helper()
	hdr, err := s.Sign(body, eventID, toA, at)
	require.NoError(t, err)
	return post(h, hdr.HTTPHeader(), body)
}

func post(h http.Handler, hdr http.Header, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/pcourt", bytes.NewReader(body))
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// recorder is a callback that keeps what it was given.
type recorder struct {
	mu   sync.Mutex
	got  []receiver.Delivery
	fail error
}

func (r *recorder) callback(_ context.Context, d receiver.Delivery) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	r.got = append(r.got, d)
	return nil
}

func (r *recorder) deliveries() []receiver.Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]receiver.Delivery(nil), r.got...)
}

type fixture struct {
	clock  *clock
	signer *signature.Signer
	jwks   *jwksServer
	cache  *receiver.JWKSCache
	rec    *recorder
	h      *receiver.Handler
}

// toA is the recipient of the fixtures' deliveries: the receiver's own
// endpoint.
var toA = signature.Recipient{EndpointID: "we_a"}

func newFixture(t testing.TB, cfg receiver.Config) *fixture {
	t.Helper()
	if cfg.EndpointID == "" {
		cfg.EndpointID = toA.EndpointID
	}
	f := &fixture{clock: newClock(), signer: newSigner(t, signature.Sandbox, "key A"), rec: &recorder{}}
	f.jwks = newJWKSServer(t, f.signer)
	cache, err := receiver.NewJWKSCache(f.jwks.URL+"/api/webhooks/keys", receiver.JWKSConfig{Client: f.jwks.Client(), Now: f.clock.Now})
	require.NoError(t, err)
	f.cache = cache
	cfg.Now = f.clock.Now
	f.h, err = receiver.NewHandler(cache, f.rec.callback, cfg)
	require.NoError(t, err)
	return f
}

func TestHandlerVerifiesDecodesAndDeduplicates(t *testing.T) {
	f := newFixture(t, receiver.Config{})
	body := eventBody("evt_1", "dlv_1", 3)
	rec := deliver(t, f.h, f.signer, body, "evt_1", f.clock.Now().Add(-time.Second))
	require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())

	got := f.rec.deliveries()
	require.Len(t, got, 1)
	require.Equal(t, receiver.Event{
		SchemaVersion: "case-event-v2", EventID: "evt_1", DeliveryID: "dlv_1", Sequence: 3, Type: "case.opened",
		OccurredAt: time.Date(2026, 11, 23, 9, 59, 58, 0, time.UTC), CaseID: "case_1", ExternalCaseID: "ext-1",
		ActionRequired: true, DeadlineAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
	}, got[0].Event)
	require.Equal(t, f.signer.KeyID(), got[0].KeyID)
	require.Equal(t, body, got[0].Body)

	// The same event again, as another delivery signed afresh later: acknowledged, not handed over twice.
	f.clock.Advance(time.Minute)
	again := eventBody("evt_1", "dlv_2", 3)
	rec = deliver(t, f.h, f.signer, again, "evt_1", f.clock.Now())
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "duplicate\n", rec.Body.String())
	// An exact replay of the first attempt's bytes and headers, too.
	rec = deliver(t, f.h, f.signer, body, "evt_1", f.clock.Now().Add(-time.Second))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Len(t, f.rec.deliveries(), 1)
	require.Equal(t, int32(1), f.jwks.fetches.Load(), "the key set is fetched once and cached")
}

func TestHandlerRefusesFastWithAShortReason(t *testing.T) {
	f := newFixture(t, receiver.Config{MaxBodyBytes: 1024})
	now := f.clock.Now()
	body := eventBody("evt_1", "dlv_1", 1)
	signed, err := f.signer.Sign(body, "evt_1", toA, now)
	require.NoError(t, err)

	stale, err := f.signer.Sign(body, "evt_1", toA, now.Add(-6*time.Minute))
	require.NoError(t, err)
	missing := signed.HTTPHeader()
	missing.Del(signature.HeaderSignature)
	other := newSigner(t, signature.Sandbox, "key X")
	forged, err := other.Sign(body, "evt_1", toA, now)
	require.NoError(t, err)
	forged.KeyID = f.signer.KeyID()
	unknown, err := other.Sign(body, "evt_1", toA, now)
	require.NoError(t, err)
	extra := []byte(strings.Replace(string(body), `"caseId"`, `"surprise":1,"caseId"`, 1))
	extraSigned, err := f.signer.Sign(extra, "evt_1", toA, now)
	require.NoError(t, err)
	forB, err := f.signer.Sign(body, "evt_1", signature.Recipient{EndpointID: "we_b", Test: true}, now)
	require.NoError(t, err)

	for _, c := range []struct {
		name   string
		header http.Header
		body   []byte
		status int
		text   string
	}{
		{"stale timestamp", stale.HTTPHeader(), body, http.StatusUnauthorized, "timestamp_window"},
		{"tampered body", signed.HTTPHeader(), eventBody("evt_1", "dlv_1", 2), http.StatusUnauthorized, "digest_mismatch"},
		{"missing header", missing, body, http.StatusBadRequest, "header_missing"},
		{"forged under a published key id", forged.HTTPHeader(), body, http.StatusUnauthorized, "bad_signature"},
		{"key not published", unknown.HTTPHeader(), body, http.StatusUnauthorized, "unknown_key"},
		{"signed for another partner's endpoint", forB.HTTPHeader(), body, http.StatusUnauthorized, "recipient_mismatch"},
		{"valid signature, not a case-event-v2", extraSigned.HTTPHeader(), extra, http.StatusBadRequest, "event_invalid"},
		{"body over the limit", signed.HTTPHeader(), bytes.Repeat([]byte("x"), 1025), http.StatusRequestEntityTooLarge, "body_too_large"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := post(f.h, c.header, c.body)
			require.Equal(t, c.status, rec.Code)
			require.Equal(t, c.text+"\n", rec.Body.String())
			require.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
		})
	}
	require.Empty(t, f.rec.deliveries(), "nothing refused reaches the callback")

	req := httptest.NewRequest(http.MethodGet, "/webhooks/pcourt", nil)
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	require.Equal(t, http.MethodPost, rec.Header().Get("Allow"))
}

func TestHandlerEnvironmentRefusesKeysOfTheOtherEnvironment(t *testing.T) {
	f := newFixture(t, receiver.Config{Environment: signature.Live})
	rec := deliver(t, f.h, f.signer, eventBody("evt_1", "dlv_1", 1), "evt_1", f.clock.Now())
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, "unknown_key\n", rec.Body.String())
	require.Zero(t, f.jwks.fetches.Load(), "a sandbox key id is refused before any fetch")

	_, err := receiver.NewHandler(receiver.StaticKeys{}, (&recorder{}).callback, receiver.Config{EndpointID: "we_a", Environment: "prod"})
	require.Error(t, err)
}

func TestKeyRotationRefreshesOnANewKeyID(t *testing.T) {
	f := newFixture(t, receiver.Config{})
	rec := deliver(t, f.h, f.signer, eventBody("evt_1", "dlv_1", 1), "evt_1", f.clock.Now())
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.Equal(t, int32(1), f.jwks.fetches.Load())

	// The sender publishes key B beside A, then signs with B.
	next := newSigner(t, signature.Sandbox, "key B")
	f.jwks.publish(f.signer, next)
	f.clock.Advance(time.Minute)
	rec = deliver(t, f.h, next, eventBody("evt_2", "dlv_2", 2), "evt_2", f.clock.Now())
	require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
	require.Equal(t, int32(2), f.jwks.fetches.Load(), "an unknown key id refreshes the fresh set")

	// A stream of unknown key ids fetches at most once per interval.
	forger := newSigner(t, signature.Sandbox, "key F")
	f.clock.Advance(time.Minute)
	for i := range 5 {
		id := fmt.Sprintf("evt_f%d", i)
		rec = deliver(t, f.h, forger, eventBody(id, "dlv", 1), id, f.clock.Now())
		require.Equal(t, http.StatusUnauthorized, rec.Code)
		require.Equal(t, "unknown_key\n", rec.Body.String())
	}
	require.Equal(t, int32(3), f.jwks.fetches.Load(), "one refresh for five unknown key ids")

	// Key A retired and unpublished: once the cache refreshes, it is gone.
	f.jwks.publish(next)
	f.clock.Advance(6 * time.Minute) // past max-age=300
	rec = deliver(t, f.h, f.signer, eventBody("evt_3", "dlv_3", 3), "evt_3", f.clock.Now())
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, "unknown_key\n", rec.Body.String())
}

func TestJWKSCacheHonoursMaxAgeAndServesStaleOnFailure(t *testing.T) {
	clk := newClock()
	a := newSigner(t, signature.Sandbox, "key A")
	srv := newJWKSServer(t, a)
	srv.cacheControl = "max-age=60"
	cache, err := receiver.NewJWKSCache(srv.URL, receiver.JWKSConfig{Client: srv.Client(), Now: clk.Now, MinRefreshInterval: 10 * time.Second})
	require.NoError(t, err)
	ctx := context.Background()

	key, err := cache.Lookup(ctx, a.KeyID())
	require.NoError(t, err)
	require.Equal(t, a.PublicKey(), key)
	clk.Advance(59 * time.Second)
	_, err = cache.Lookup(ctx, a.KeyID())
	require.NoError(t, err)
	require.Equal(t, int32(1), srv.fetches.Load(), "fresh within max-age")

	clk.Advance(2 * time.Second)
	_, err = cache.Lookup(ctx, a.KeyID())
	require.NoError(t, err)
	require.Equal(t, int32(2), srv.fetches.Load(), "expired after max-age")

	srv.setFail(true)
	clk.Advance(2 * time.Minute)
	key, err = cache.Lookup(ctx, a.KeyID())
	require.NoError(t, err, "the last good set serves while the endpoint fails")
	require.Equal(t, a.PublicKey(), key)
	require.Equal(t, int32(3), srv.fetches.Load())

	_, err = cache.Lookup(ctx, "pcwh_sandbox_2026-11-01_000000000000")
	require.Error(t, err)
	require.ErrorIs(t, err, signature.ErrUnknownKey, "within the interval, no fetch: the set held says unknown")
	require.Equal(t, int32(3), srv.fetches.Load())

	clk.Advance(time.Minute)
	_, err = cache.Lookup(ctx, "pcwh_sandbox_2026-11-01_000000000000")
	require.Error(t, err)
	require.NotErrorIs(t, err, signature.ErrUnknownKey, "a failed refresh cannot prove the key unknown")

	_, err = receiver.NewJWKSCache("file:///etc/passwd", receiver.JWKSConfig{})
	require.Error(t, err)
}

func TestHandlerAnswers503WhenNoKeySetCanBeFetched(t *testing.T) {
	f := newFixture(t, receiver.Config{})
	f.jwks.setFail(true)
	rec := deliver(t, f.h, f.signer, eventBody("evt_1", "dlv_1", 1), "evt_1", f.clock.Now())
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Equal(t, "key_set_unavailable\n", rec.Body.String())

	f.jwks.setFail(false)
	f.clock.Advance(time.Minute)
	rec = deliver(t, f.h, f.signer, eventBody("evt_1", "dlv_2", 1), "evt_1", f.clock.Now())
	require.Equal(t, http.StatusNoContent, rec.Code, "the sender's retry goes through")
}

func TestCallbackFailureLetsARedeliveryThrough(t *testing.T) {
	f := newFixture(t, receiver.Config{})
	f.rec.fail = errors.New("database down")
	rec := deliver(t, f.h, f.signer, eventBody("evt_1", "dlv_1", 1), "evt_1", f.clock.Now())
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.Equal(t, "callback_failed\n", rec.Body.String())

	f.rec.fail = nil
	rec = deliver(t, f.h, f.signer, eventBody("evt_1", "dlv_2", 1), "evt_1", f.clock.Now())
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.Len(t, f.rec.deliveries(), 1)
}

func TestAsyncAcknowledgesBeforeTheCallback(t *testing.T) {
	clk := newClock()
	s := newSigner(t, signature.Sandbox, "key A")
	release := make(chan struct{})
	handed := make(chan receiver.Delivery, 4)
	h, err := receiver.NewHandler(receiver.StaticKeys{s.KeyID(): s.PublicKey()}, func(ctx context.Context, d receiver.Delivery) error {
		<-release
		handed <- d
		return ctx.Err()
	}, receiver.Config{EndpointID: toA.EndpointID, Async: true, MaxInFlight: 1, Now: clk.Now})
	require.NoError(t, err)

	rec := deliver(t, h, s, eventBody("evt_1", "dlv_1", 1), "evt_1", clk.Now())
	require.Equal(t, http.StatusAccepted, rec.Code, "answered while the callback is still blocked")

	rec = deliver(t, h, s, eventBody("evt_2", "dlv_2", 2), "evt_2", clk.Now())
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, "capacity of one is in use")
	require.Equal(t, "busy\n", rec.Body.String())

	close(release)
	select {
	case d := <-handed:
		require.Equal(t, "evt_1", d.Event.EventID)
	case <-time.After(10 * time.Second):
		t.Fatal("the callback never ran")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, h.Shutdown(ctx))

	rec = deliver(t, h, s, eventBody("evt_2", "dlv_3", 2), "evt_2", clk.Now())
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Equal(t, "shutting_down\n", rec.Body.String())
}

func TestMemoryDeduper(t *testing.T) {
	clk := newClock()
	d := receiver.NewMemoryDeduper(2, time.Hour, clk.Now)
	ctx := context.Background()
	claim := func(id string) bool {
		first, err := d.Claim(ctx, id)
		require.NoError(t, err)
		return first
	}
	require.True(t, claim("a"))
	require.False(t, claim("a"))
	require.True(t, claim("b"))
	require.True(t, claim("c"), "over capacity, the oldest goes")
	require.Equal(t, 2, d.Len())
	require.True(t, claim("a"), "a was evicted")
	require.False(t, claim("c"))

	require.NoError(t, d.Release(ctx, "c"))
	require.True(t, claim("c"), "released ids can be claimed again")

	clk.Advance(time.Hour)
	require.True(t, claim("a"), "expired after the ttl")
}

// TestHandlerAgreesWithTheConformanceVectors runs every published vector
// through the handler: accepted ones are processed, refused ones get the
// status of their reason and the reason as the body.
func TestHandlerAgreesWithTheConformanceVectors(t *testing.T) {
	data, err := os.ReadFile("../signature/testdata/conformance.json")
	require.NoError(t, err)
	var f struct {
		EndpointID string          `json:"endpointId"`
		JWKS       json.RawMessage `json:"jwks"`
		Vectors    []struct {
			Name       string      `json:"name"`
			Now        string      `json:"now"`
			BodyBase64 string      `json:"bodyBase64"`
			Headers    [][2]string `json:"headers"`
			Expect     string      `json:"expect"`
			Reason     string      `json:"reason"`
		} `json:"vectors"`
	}
	require.NoError(t, json.Unmarshal(data, &f))
	keys, err := signature.ParseJWKS(f.JWKS)
	require.NoError(t, err)
	for _, v := range f.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			now, err := signature.ParseTimestamp(v.Now)
			require.NoError(t, err)
			body, err := base64.StdEncoding.DecodeString(v.BodyBase64)
			require.NoError(t, err)
			h, err := receiver.NewHandler(receiver.StaticKeys(keys), (&recorder{}).callback, receiver.Config{EndpointID: f.EndpointID, Now: func() time.Time { return now }})
			require.NoError(t, err)
			hdr := http.Header{}
			for _, kv := range v.Headers {
				hdr.Add(kv[0], kv[1])
			}
			rec := post(h, hdr, body)
			if v.Expect == "accept" {
				require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
				return
			}
			require.Contains(t, []int{http.StatusBadRequest, http.StatusUnauthorized}, rec.Code)
			require.Equal(t, v.Reason+"\n", rec.Body.String())
		})
	}
}

func TestDecodeEvent(t *testing.T) {
	good := string(eventBody("evt_1", "dlv_1", 1))
	_, err := receiver.DecodeEvent([]byte(good))
	require.NoError(t, err)
	for name, body := range map[string]string{
		"unknown member":   strings.Replace(good, `"caseId"`, `"x":1,"caseId"`, 1),
		"missing caseId":   strings.Replace(good, `"caseId":"case_1",`, "", 1),
		"sequence zero":    strings.Replace(good, `"sequence":1`, `"sequence":0`, 1),
		"sequence string":  strings.Replace(good, `"sequence":1`, `"sequence":"1"`, 1),
		"occurredAt +00":   strings.Replace(good, `09:59:58.000Z`, `09:59:58.000+00:00`, 1),
		"deadlineAt short": strings.Replace(good, `12:00:00.000Z`, `12:00:00Z`, 1),
		"other schema":     strings.Replace(good, `case-event-v2`, `case-event-v3`, 1),
		"trailing data":    good + "{}",
	} {
		_, err := receiver.DecodeEvent([]byte(body))
		require.ErrorIs(t, err, receiver.ErrEvent, name)
	}
}

// TestHandlerTellsTestEventsFromCaseFacts: a test event is handed over
// marked as one, so the partner's code can acknowledge it without acting
// on it; a receiver must name its endpoint to be made at all.
func TestHandlerTellsTestEventsFromCaseFacts(t *testing.T) {
	f := newFixture(t, receiver.Config{})
	now := f.clock.Now()
	fact, err := f.signer.Sign(eventBody("evt_1", "dlv_1", 1), "evt_1", toA, now)
	require.NoError(t, err)
	test, err := f.signer.Sign(eventBody("evt_test_1", "dlv_2", 1), "evt_test_1", signature.Recipient{EndpointID: toA.EndpointID, Test: true}, now)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, post(f.h, fact.HTTPHeader(), eventBody("evt_1", "dlv_1", 1)).Code)
	require.Equal(t, http.StatusNoContent, post(f.h, test.HTTPHeader(), eventBody("evt_test_1", "dlv_2", 1)).Code)
	got := f.rec.deliveries()
	require.Len(t, got, 2)
	require.False(t, got[0].Test, "a case fact")
	require.True(t, got[1].Test, "a test event")

	for _, id := range []string{"", "we a"} {
		_, err = receiver.NewHandler(receiver.StaticKeys{}, (&recorder{}).callback, receiver.Config{EndpointID: id})
		require.Error(t, err, "endpoint id %q", id)
	}
}
