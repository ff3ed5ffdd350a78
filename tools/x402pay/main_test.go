package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/x402"
)

// anvilKey0 is Anvil's and Hardhat's account 0: a public development key.
const (
	anvilKey0   = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
	anvilPayer0 = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"
)

var payTo = common.HexToAddress("0x209693Bc6afc0C5328bA36FaF03C514EF312287C")

// readinessEndpoint is a small x402 version 2 resource server shaped like
// the readiness report: 402 with PAYMENT-REQUIRED, then a verified
// payment answered 200 with PAYMENT-RESPONSE and a body that says whether
// the answer was replayed. It checks the signature for real (x402.VerifyExact).
type readinessEndpoint struct {
	amount string

	mu        sync.Mutex
	paid      map[string]bool // authorization nonces settled
	headers   http.Header     // of the last paid request
	bodies    []string        // of paid requests
	unpaid    int
	signature int
}

func (e *readinessEndpoint) start(t *testing.T) string {
	t.Helper()
	e.paid = map[string]bool{}
	asset, ok := x402.USDC("eip155:84532")
	require.True(t, ok)
	offer, err := asset.Offer(e.amount, payTo, 60)
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		defer e.mu.Unlock()
		sig := r.Header.Get(x402.HeaderPaymentSignature)
		if sig == "" {
			e.unpaid++
			pr := x402.PaymentRequired{
				X402Version: x402.Version,
				Error:       "PAYMENT-SIGNATURE header is required",
				Resource:    x402.ResourceInfo{URL: "http://" + r.Host + r.URL.Path},
				Accepts:     []x402.PaymentRequirements{offer},
			}
			h, err := x402.EncodeHeader(pr)
			if err != nil {
				panic(err)
			}
			w.Header().Set(x402.HeaderPaymentRequired, h)
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusPaymentRequired)
			_, _ = io.WriteString(w, `{"type":"https://pcourt.dev/problems/payment_required","title":"Payment required","status":402,"code":"payment_required"}`)
			return
		}
		e.signature++
		var p x402.PaymentPayload
		if err := x402.DecodeHeader(sig, &p); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ours, err := x402.MatchOffer([]x402.PaymentRequirements{offer}, p.Accepted)
		if err != nil {
			http.Error(w, err.Error(), http.StatusPaymentRequired)
			return
		}
		payer, _, err := x402.VerifyExact(ours, p, time.Now())
		if err != nil {
			http.Error(w, err.Error(), http.StatusPaymentRequired)
			return
		}
		nonce := p.Payload.Authorization.Nonce
		replayed := e.paid[nonce]
		e.paid[nonce] = true
		e.headers = r.Header.Clone()
		e.bodies = append(e.bodies, string(body))
		tx := sha256.Sum256([]byte(nonce))
		h, err := x402.EncodeHeader(x402.SettleResponse{Success: true, Payer: payer.Hex(), Transaction: hexutil.Encode(tx[:]), Network: ours.Network, Amount: ours.Amount})
		if err != nil {
			panic(err)
		}
		w.Header().Set(x402.HeaderPaymentResponse, h)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"ready":   true,
			"payment": map[string]any{"payer": payer.Hex(), "replayed": replayed},
		})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/api/x402/dispute-readiness"
}

func runCLI(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestPaysAndPrintsTheReceipt(t *testing.T) {
	e := &readinessEndpoint{amount: "10000"}
	url := e.start(t)
	file := filepath.Join(t.TempDir(), "request.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"claim":"double charge"}`), 0o600))

	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		body string
	}{
		{"key flag, inline body", nil, []string{"-key", anvilKey0, "-d", `{"claim":"x"}`, "-H", "X-Request-Id: demo-1", url}, `{"claim":"x"}`},
		{"key from the environment, body from a file", map[string]string{"X402_PRIVATE_KEY": anvilKey0}, []string{"-d", "@" + file, "-H", "X-Request-Id: demo-1", url}, `{"claim":"double charge"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := runCLI(t, tc.env, tc.args...)
			require.NoError(t, err, stderr)

			var body map[string]any
			require.NoError(t, json.Unmarshal([]byte(stdout), &body), stdout)
			require.Equal(t, true, body["ready"])
			require.Contains(t, stdout, "\n  \"payment\": {", "pretty JSON")

			for _, want := range []string{
				"paid 0.010000 USDC (10000 atomic units) on eip155:84532",
				"asset        0x036CbD53842c5426634e7929541eC2318f3dCF7e",
				"payTo        " + payTo.Hex(),
				"payer        " + anvilPayer0,
				"transaction  0x",
				"replayed     false",
				"status       200 OK",
			} {
				require.Contains(t, stderr, want)
			}
			e.mu.Lock()
			defer e.mu.Unlock()
			require.Equal(t, tc.body, e.bodies[len(e.bodies)-1])
			require.Equal(t, "demo-1", e.headers.Get("X-Request-Id"))
			require.Equal(t, "application/json", e.headers.Get("Content-Type"))
		})
	}
}

func TestRefusals(t *testing.T) {
	e := &readinessEndpoint{amount: "20000000"} // 20 USDC, above the default maximum
	url := e.start(t)

	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		wantErr string
		stderr  string
	}{
		{"no key", nil, []string{url}, "no payer key", ""},
		{"key not hex", nil, []string{"-key", "0xnothex", url}, "not a secp256k1 private key", ""},
		{"amount above the maximum", nil, []string{"-key", anvilKey0, "-d", "{}", url}, "above the configured maximum", `"code": "payment_required"`},
		{"network not offered", nil, []string{"-key", anvilKey0, "-network", "eip155:8453", "-max", "30000000", url}, "no acceptable x402 offer", "402 Payment Required"},
		{"unknown network", nil, []string{"-key", anvilKey0, "-network", "eip155:1", url}, "no known USDC deployment", ""},
		{"no URL", nil, []string{"-key", anvilKey0}, "exactly one URL", "usage: x402pay"},
		{"missing body file", nil, []string{"-key", anvilKey0, "-d", "@/nonexistent/request.json", url}, "reading -d", ""},
		{"bad header", nil, []string{"-key", anvilKey0, "-H", "no colon", url}, "is not 'Name: value'", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := runCLI(t, tc.env, tc.args...)
			require.ErrorContains(t, err, tc.wantErr)
			require.Empty(t, stdout)
			require.NotContains(t, err.Error(), strings.TrimPrefix(anvilKey0, "0x"), "the key is never printed")
			if tc.stderr != "" {
				require.Contains(t, stderr, tc.stderr)
			}
		})
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	require.Zero(t, e.signature, "nothing was signed")
}
