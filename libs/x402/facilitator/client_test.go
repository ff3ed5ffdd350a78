package facilitator_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
)

// stub is a facilitator that answers with status and body after reading
// the whole request.
func stub(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// hang never answers; it returns when the client gives up (or the test
// ends).
func hang(release <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
}

// reset reads the request, then drops the connection without a word.
func reset(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	_ = conn.Close()
}

func TestClientClassifiesFailures(t *testing.T) {
	release := make(chan struct{})
	const refusal = `{"success":false,"errorReason":"insufficient_funds","transaction":"","network":"eip155:84532","payer":"0x857b06519E91e3A54538791bDbb0E22373e36b66"}`
	const settled = `{"success":true,"transaction":"0x1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef","network":"eip155:84532","payer":"0x857b06519E91e3A54538791bDbb0E22373e36b66"}`

	tests := []struct {
		name    string
		op      string // verify, settle or supported
		handler http.HandlerFunc
		down    bool // the server is not listening at all
		hangs   bool // the server never answers
		wantErr error
		// check inspects a decoded answer when wantErr is nil.
		check func(t *testing.T, resp any)
	}{
		{name: "connection refused on verify", op: "verify", down: true, wantErr: facilitator.ErrUnavailable},
		{name: "connection refused on settle", op: "settle", down: true, wantErr: facilitator.ErrUnavailable},
		{name: "connection refused on supported", op: "supported", down: true, wantErr: facilitator.ErrUnavailable},
		{name: "hangs past the timeout on verify", op: "verify", handler: hang(release), hangs: true, wantErr: facilitator.ErrUnavailable},
		{name: "hangs past the timeout on settle", op: "settle", handler: hang(release), hangs: true, wantErr: facilitator.ErrOutcomeUnknown},
		{name: "connection reset after the request on verify", op: "verify", handler: reset, wantErr: facilitator.ErrUnavailable},
		{name: "connection reset after the request on settle", op: "settle", handler: reset, wantErr: facilitator.ErrOutcomeUnknown},
		{name: "500 on verify", op: "verify", handler: stub(500, `{"error":"boom"}`), wantErr: facilitator.ErrUnavailable},
		{name: "500 on settle", op: "settle", handler: stub(500, `{"error":"boom"}`), wantErr: facilitator.ErrOutcomeUnknown},
		{name: "502 with a refusal body on settle is still unknown", op: "settle", handler: stub(502, refusal), wantErr: facilitator.ErrOutcomeUnknown},
		{name: "503 on supported", op: "supported", handler: stub(503, ``), wantErr: facilitator.ErrUnavailable},
		{name: "429 on settle", op: "settle", handler: stub(429, `{}`), wantErr: facilitator.ErrUnavailable},
		{name: "429 on verify", op: "verify", handler: stub(429, `{}`), wantErr: facilitator.ErrUnavailable},
		{name: "200 not JSON on verify", op: "verify", handler: stub(200, `<html>`), wantErr: facilitator.ErrUnavailable},
		{name: "200 not JSON on settle", op: "settle", handler: stub(200, `<html>`), wantErr: facilitator.ErrOutcomeUnknown},
		{name: "200 without success on settle", op: "settle", handler: stub(200, `{}`), wantErr: facilitator.ErrOutcomeUnknown},
		{name: "200 without isValid on verify", op: "verify", handler: stub(200, `{"payer":"0x1"}`), wantErr: facilitator.ErrUnavailable},
		{name: "200 success without transaction on settle", op: "settle", handler: stub(200, `{"success":true,"transaction":"","network":"eip155:84532"}`), wantErr: facilitator.ErrOutcomeUnknown},
		{name: "200 with trailing data on settle", op: "settle", handler: stub(200, settled+`{}`), wantErr: facilitator.ErrOutcomeUnknown},
		{name: "401 on settle", op: "settle", handler: stub(401, `{"error":"unauthorized"}`), wantErr: facilitator.ErrRejected},
		{name: "404 on verify", op: "verify", handler: stub(404, `not found`), wantErr: facilitator.ErrRejected},
		{name: "404 on supported", op: "supported", handler: stub(404, `not found`), wantErr: facilitator.ErrRejected},
		{
			name: "redirect on settle is not followed",
			op:   "settle",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
			},
			wantErr: facilitator.ErrRejected,
		},
		{
			name:    "refusal with 400 on settle is a refusal",
			op:      "settle",
			handler: stub(400, refusal),
			check: func(t *testing.T, resp any) {
				s := resp.(x402.SettleResponse)
				require.False(t, s.Success)
				require.Equal(t, "insufficient_funds", s.ErrorReason)
			},
		},
		{
			name:    "refusal with 200 on verify is a refusal",
			op:      "verify",
			handler: stub(200, `{"isValid":false,"invalidReason":"invalid_exact_evm_payload_signature","payer":"0x857b06519E91e3A54538791bDbb0E22373e36b66"}`),
			check: func(t *testing.T, resp any) {
				v := resp.(x402.VerifyResponse)
				require.False(t, v.IsValid)
				require.Equal(t, x402.ReasonInvalidSignature, v.InvalidReason)
			},
		},
		{
			name:    "refusal with 400 on verify is a refusal",
			op:      "verify",
			handler: stub(400, `{"isValid":false,"invalidReason":"insufficient_funds"}`),
			check: func(t *testing.T, resp any) {
				require.Equal(t, x402.ReasonInsufficientFunds, resp.(x402.VerifyResponse).InvalidReason)
			},
		},
		{
			name:    "fields a facilitator adds are ignored",
			op:      "settle",
			handler: stub(200, `{"success":true,"transaction":"0xab","network":"eip155:84532","payer":"0x857b06519E91e3A54538791bDbb0E22373e36b66","receipt":{"block":1}}`),
			check: func(t *testing.T, resp any) {
				require.Equal(t, x402.SettleResponse{Success: true, Transaction: "0xab", Network: "eip155:84532", Payer: "0x857b06519E91e3A54538791bDbb0E22373e36b66"}, resp)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(tt.handler)
			t.Cleanup(ts.Close)
			if tt.down {
				ts.Close()
			}
			// A short timeout only where the stub hangs, so that a slow
			// machine does not turn an answer into a timeout.
			timeout := 5 * time.Second
			if tt.hangs {
				timeout = 200 * time.Millisecond
			}
			c, err := facilitator.NewClient(facilitator.ClientConfig{BaseURL: ts.URL, Timeout: timeout})
			require.NoError(t, err)
			resp, err := callOp(c, tt.op)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				for _, other := range []error{facilitator.ErrUnavailable, facilitator.ErrOutcomeUnknown, facilitator.ErrRejected} {
					if other != tt.wantErr {
						require.NotErrorIs(t, err, other, "exactly one class")
					}
				}
				return
			}
			require.NoError(t, err)
			tt.check(t, resp)
		})
	}
	close(release)
}

func callOp(c *facilitator.Client, op string) (any, error) {
	ctx := context.Background()
	req := x402.VerifyRequest{X402Version: x402.Version}
	switch op {
	case "verify":
		return c.Verify(ctx, req)
	case "settle":
		return c.Settle(ctx, x402.SettleRequest(req))
	}
	return c.Supported(ctx)
}

func TestClientSendsWhatTheAPIExpects(t *testing.T) {
	type seen struct{ method, path, auth, contentType string }
	got := make(chan seen, 3)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got <- seen{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type")}
		switch r.URL.Path {
		case "/x402/verify":
			_, _ = io.WriteString(w, `{"isValid":true,"payer":"0x857b06519E91e3A54538791bDbb0E22373e36b66"}`)
		case "/x402/settle":
			_, _ = io.WriteString(w, `{"success":true,"transaction":"0xab","network":"eip155:84532"}`)
		default:
			_, _ = io.WriteString(w, `{"kinds":[],"extensions":[],"signers":{}}`)
		}
	}))
	t.Cleanup(ts.Close)
	c, err := facilitator.NewClient(facilitator.ClientConfig{BaseURL: ts.URL + "/x402/", Authorization: envconf.Secret("Bearer abc")})
	require.NoError(t, err)
	ctx := context.Background()

	v, err := c.Verify(ctx, x402.VerifyRequest{X402Version: 2})
	require.NoError(t, err)
	require.True(t, v.IsValid)
	require.Equal(t, seen{"POST", "/x402/verify", "Bearer abc", "application/json"}, <-got)

	s, err := c.Settle(ctx, x402.SettleRequest{X402Version: 2})
	require.NoError(t, err)
	require.True(t, s.Success)
	require.Equal(t, seen{"POST", "/x402/settle", "Bearer abc", "application/json"}, <-got)

	_, err = c.Supported(ctx)
	require.NoError(t, err)
	require.Equal(t, seen{"GET", "/x402/supported", "Bearer abc", ""}, <-got)
}

func TestNewClientRefusesABadConfig(t *testing.T) {
	for _, cfg := range []facilitator.ClientConfig{
		{},
		{BaseURL: "127.0.0.1:8085"},
		{BaseURL: "ftp://facilitator"},
		{BaseURL: "http://facilitator?x=1"},
		{BaseURL: "http://facilitator", Timeout: -time.Second},
	} {
		_, err := facilitator.NewClient(cfg)
		require.Error(t, err, "%+v", cfg)
	}
}

// Concurrent payments reuse their connections to the facilitator: eight
// callers making twenty calls each open about their eight connections (the
// default two idle per host would dial again for most calls, over a
// hundred times). net/http returns a connection to the pool from its read
// goroutine once the body is read, so a caller that starts its next call
// first may dial once more: the bound allows that, twice over.
func TestClientKeepsConnectionsForConcurrentCalls(t *testing.T) {
	var dialled atomic.Int64
	answer := stub(200, `{"isValid":true,"payer":"0x857b06519E91e3A54538791bDbb0E22373e36b66"}`)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond) // the calls overlap, as concurrent payments' do
		answer(w, r)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dialled.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c, err := facilitator.NewClient(facilitator.ClientConfig{BaseURL: srv.URL})
	require.NoError(t, err)

	const callers, calls = 8, 20
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range calls {
				_, err := c.Verify(context.Background(), x402.VerifyRequest{X402Version: x402.Version})
				require.NoError(t, err)
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, dialled.Load(), int64(2*callers), "connections opened for %d calls", callers*calls)
}
