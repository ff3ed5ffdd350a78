package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/webhook/signature"
)

// syncBuffer is a bytes.Buffer safe to read while the receiver writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestReceiverPrintsVerifiedEvents(t *testing.T) {
	seed := sha256.Sum256([]byte("webhook-receiver test key"))
	priv := ed25519.NewKeyFromSeed(seed[:])
	kid, err := signature.NewKeyID(signature.Sandbox, time.Now(), priv.Public().(ed25519.PublicKey))
	require.NoError(t, err)
	signer, err := signature.NewSigner(kid, priv)
	require.NoError(t, err)
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := signature.MarshalJWKS(signer.JWK())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(jwks.Close)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-jwks", jwks.URL + "/api/webhooks/keys", "-addr", "127.0.0.1:0", "-path", "/hooks", "-endpoint", "we_a"}, stdout, stderr,
			func(addr string) { addrs <- addr })
	}()
	var addr string
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("receiver stopped: %v\n%s", err, stderr)
	case <-time.After(10 * time.Second):
		t.Fatal("receiver did not start")
	}

	send := func(body []byte, eventID string, to signature.Recipient, at time.Time, tamper bool) *http.Response {
		t.Helper()
		h, err := signer.Sign(body, eventID, to, at)
		require.NoError(t, err)
		if tamper {
			body = bytes.Replace(body, []byte(`"sequence":1`), []byte(`"sequence":2`), 1)
		}
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/hooks", bytes.NewReader(body))
		require.NoError(t, err)
		h.Apply(req.Header)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		return resp
	}
	body := func(eventID string) []byte {
		return []byte(fmt.Sprintf("{\n  \"schemaVersion\": \"case-event-v2\", \"eventId\": %q, \"deliveryId\": \"dlv_1\", \"sequence\":1,\n  \"type\": \"case.opened\", \"occurredAt\": \"2026-11-23T10:00:00.000Z\", \"caseId\": \"case_1\", \"externalCaseId\": \"ext-1\", \"actionRequired\": false\n}", eventID))
	}

	toA := signature.Recipient{EndpointID: "we_a"}
	require.Equal(t, http.StatusUnauthorized, send(body("evt_tampered"), "evt_tampered", toA, time.Now(), true).StatusCode)
	require.Equal(t, http.StatusUnauthorized, send(body("evt_stale"), "evt_stale", toA, time.Now().Add(-time.Hour), false).StatusCode)
	require.Equal(t, http.StatusUnauthorized, send(body("evt_for_b"), "evt_for_b", signature.Recipient{EndpointID: "we_b"}, time.Now(), false).StatusCode,
		"a delivery signed for another endpoint")
	require.Equal(t, http.StatusNoContent, send(body("evt_1"), "evt_1", toA, time.Now(), false).StatusCode)
	require.Equal(t, http.StatusOK, send(body("evt_1"), "evt_1", toA, time.Now(), false).StatusCode, "a redelivery is a duplicate")
	require.Equal(t, http.StatusNoContent, send(body("evt_2"), "evt_2", signature.Recipient{EndpointID: "we_a", Test: true}, time.Now(), false).StatusCode)

	// Deliveries are printed before they are acknowledged (the callback is synchronous).
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.Len(t, lines, 2, "only verified events are printed, once each:\n%s", stdout)
	for i, want := range []string{"evt_1", "evt_2"} {
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &ev), lines[i])
		require.Equal(t, want, ev["eventId"])
		require.Equal(t, "case-event-v2", ev["schemaVersion"])
		require.NotContains(t, lines[i], "\n  ", "one compact line per event")
	}
	require.Contains(t, stderr.String(), "reason=digest_mismatch")
	require.Contains(t, stderr.String(), "reason=timestamp_window")
	require.Contains(t, stderr.String(), "reason=recipient_mismatch")
	require.Contains(t, stderr.String(), "test event verified", "evt_2 was a test event")
	require.Equal(t, 1, strings.Count(stderr.String(), "test event verified"), "evt_1 was not")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("receiver did not stop")
	}
}

func TestFlags(t *testing.T) {
	var stderr bytes.Buffer
	_, err := parseFlags([]string{"-nope"}, &stderr)
	require.Error(t, err)
	_, err = parseFlags([]string{"extra"}, &stderr)
	require.Error(t, err)
	_, err = parseFlags([]string{"-addr", "127.0.0.1:0"}, &stderr)
	require.ErrorContains(t, err, "-endpoint is required")
	err = run(context.Background(), []string{"-endpoint", "we_a", "-env", "prod"}, io.Discard, io.Discard, nil)
	require.ErrorContains(t, err, "environment")
	err = run(context.Background(), []string{"-endpoint", "we_a", "-jwks", "ftp://x"}, io.Discard, io.Discard, nil)
	require.ErrorContains(t, err, "jwks url")
}
