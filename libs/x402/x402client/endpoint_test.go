package x402client_test

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/x402"
)

var testPayTo = common.HexToAddress("0x209693Bc6afc0C5328bA36FaF03C514EF312287C")

// testNow is the clock of the endpoint and of the clients that pay it.
var testNow = time.Unix(1_780_000_000, 0)

// usdcOffer returns the exact offer of amount USDC atomic units on network.
func usdcOffer(t testing.TB, network, amount string) x402.PaymentRequirements {
	t.Helper()
	asset, ok := x402.USDC(network)
	require.True(t, ok, network)
	offer, err := asset.Offer(amount, testPayTo, 60)
	require.NoError(t, err)
	return offer
}

// paidEndpoint is a resource server of x402 version 2 over HTTP, as small
// as a test allows but with nothing of the protocol faked: it challenges
// with PAYMENT-REQUIRED, decodes PAYMENT-SIGNATURE strictly, matches the
// accepted offer against its own, verifies the EIP-3009 signature at its
// clock, remembers authorization nonces, and answers with PAYMENT-RESPONSE.
// The same payment with the same body gets the stored answer again, marked
// replayed; the same payment with another body is a conflict.
//
// Set the fields, then call start.
type paidEndpoint struct {
	offers     []x402.PaymentRequirements
	extensions x402.Extensions

	// Fault knobs.
	challengeInBodyOnly bool   // 402 without the PAYMENT-REQUIRED header
	challengeHeader     string // PAYMENT-REQUIRED value instead of the real one
	challengeBody       string // 402 body instead of the PaymentRequired JSON
	responseHeader      string // PAYMENT-RESPONSE value instead of the real one
	refusePayments      bool   // answer every paid request 402
	dropFirstAnswer     bool   // settle the first payment, then drop the connection
	cutFirstChallenge   bool   // send the first challenge's headers and half its body, then close
	cutFirstPaidAnswer  bool   // settle the first payment, send half its answer, then close
	gatewayFirst        int    // answer the first request with this status, as a gateway would

	mu         sync.Mutex
	requests   int
	signatures []string // PAYMENT-SIGNATURE values, in arrival order
	payers     []common.Address
	paymentIDs []string
	keys       []string // Idempotency-Key values received
	bodies     [][]byte
	settled    map[string]storedAnswer // by authorization nonce
	dropped    bool
	cut        bool
	paidCut    bool
}

// writeCutChallenge answers with a challenge whose body stops halfway.
func (e *paidEndpoint) writeCutChallenge(w http.ResponseWriter, r *http.Request) {
	body, err := json.Marshal(e.challenge(r, "PAYMENT-SIGNATURE header is required"))
	if err != nil {
		panic(err)
	}
	writeCut(w, "402 Payment Required", body)
}

// writeCut sends the status line, headers with the whole body's
// Content-Length, half of the body, and closes the connection.
func writeCut(w http.ResponseWriter, status string, body []byte) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", status, len(body))
	_, _ = buf.Write(body[:len(body)/2])
	_ = buf.Flush()
}

type storedAnswer struct {
	fingerprint [32]byte
	body        []byte
	settlement  x402.SettleResponse
}

// start serves the endpoint at /paid, and a free resource at /free, and
// returns the base URL.
func (e *paidEndpoint) start(t testing.TB) string {
	t.Helper()
	e.settled = map[string]storedAnswer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/paid", e.serveHTTP)
	mux.HandleFunc("/free", func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.requests++
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"free":true}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func (e *paidEndpoint) challenge(r *http.Request, msg string) x402.PaymentRequired {
	return x402.PaymentRequired{
		X402Version: x402.Version,
		Error:       msg,
		Resource:    x402.ResourceInfo{URL: "http://" + r.Host + r.URL.Path, Description: "test resource", MimeType: "application/json"},
		Accepts:     e.offers,
		Extensions:  e.extensions,
	}
}

func (e *paidEndpoint) writeChallenge(w http.ResponseWriter, r *http.Request, msg string, settlement *x402.SettleResponse) {
	pr := e.challenge(r, msg)
	body, err := json.Marshal(pr)
	if err != nil {
		panic(err)
	}
	header, err := x402.EncodeHeader(pr)
	if err != nil {
		panic(err)
	}
	if e.challengeHeader != "" {
		header = e.challengeHeader
	}
	if e.challengeBody != "" {
		body = []byte(e.challengeBody)
	}
	if !e.challengeInBodyOnly {
		w.Header().Set(x402.HeaderPaymentRequired, header)
	}
	if settlement != nil {
		v, err := x402.EncodeHeader(settlement)
		if err != nil {
			panic(err)
		}
		w.Header().Set(x402.HeaderPaymentResponse, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusPaymentRequired)
	_, _ = w.Write(body)
}

func (e *paidEndpoint) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.requests++
	if v, ok := r.Header["Idempotency-Key"]; ok {
		e.keys = append(e.keys, v...)
	}
	sig := r.Header.Get(x402.HeaderPaymentSignature)
	if e.gatewayFirst != 0 && e.requests == 1 {
		http.Error(w, "upstream unavailable", e.gatewayFirst)
		return
	}
	if sig == "" && e.cutFirstChallenge && !e.cut {
		e.cut = true
		e.writeCutChallenge(w, r)
		return
	}
	if sig == "" {
		e.writeChallenge(w, r, "PAYMENT-SIGNATURE header is required", nil)
		return
	}
	e.signatures = append(e.signatures, sig)
	e.bodies = append(e.bodies, body)

	var p x402.PaymentPayload
	if err := x402.DecodeHeader(sig, &p); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if e.refusePayments {
		e.writeChallenge(w, r, "payment refused", &x402.SettleResponse{
			Success: false, ErrorReason: x402.ReasonInsufficientFunds, Network: p.Accepted.Network,
		})
		return
	}
	ours, err := x402.MatchOffer(e.offers, p.Accepted)
	if err != nil {
		e.writeChallenge(w, r, err.Error(), nil)
		return
	}
	payer, reason, err := x402.VerifyExact(ours, p, testNow)
	if err != nil {
		e.writeChallenge(w, r, reason, nil)
		return
	}
	e.payers = append(e.payers, payer)
	e.paymentIDs = append(e.paymentIDs, extractPaymentID(p.Extensions))

	fingerprint := sha256.Sum256(append([]byte(sig+"\n"), body...))
	nonce := p.Payload.Authorization.Nonce
	stored, seen := e.settled[nonce]
	switch {
	case seen && stored.fingerprint != fingerprint:
		http.Error(w, "authorization already used for another request", http.StatusConflict)
		return
	case !seen:
		tx := sha256.Sum256([]byte(nonce))
		stored = storedAnswer{
			fingerprint: fingerprint,
			body:        body,
			settlement: x402.SettleResponse{
				Success: true, Payer: payer.Hex(), Transaction: hexutil.Encode(tx[:]),
				Network: ours.Network, Amount: ours.Amount,
			},
		}
		e.settled[nonce] = stored
	}
	if e.dropFirstAnswer && !e.dropped {
		e.dropped = true
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		_ = conn.Close()
		return
	}

	header, err := x402.EncodeHeader(stored.settlement)
	if err != nil {
		panic(err)
	}
	if e.responseHeader != "" {
		header = e.responseHeader
	}
	answer, err := json.Marshal(map[string]any{
		"echo":    json.RawMessage(orNull(stored.body)),
		"payment": map[string]any{"payer": payer.Hex(), "replayed": seen, "transaction": stored.settlement.Transaction},
	})
	if err != nil {
		panic(err)
	}
	if e.cutFirstPaidAnswer && !e.paidCut {
		e.paidCut = true
		writeCut(w, "200 OK", answer)
		return
	}
	w.Header().Set(x402.HeaderPaymentResponse, header)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(answer)
}

func orNull(b []byte) []byte {
	if len(b) == 0 || !json.Valid(b) {
		return []byte("null")
	}
	return b
}

// extractPaymentID reads info.id of the payment-identifier extension as a
// server would, independently of the client's code.
func extractPaymentID(exts x402.Extensions) string {
	raw, ok := exts["payment-identifier"]
	if !ok {
		return ""
	}
	var ext struct {
		Info struct {
			ID string `json:"id"`
		} `json:"info"`
	}
	if err := json.Unmarshal(raw, &ext); err != nil {
		panic(errors.New("payment-identifier extension is not an object with info"))
	}
	return ext.Info.ID
}

// stats returns what the endpoint has seen so far.
func (e *paidEndpoint) idempotencyKeys() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.keys...)
}

func (e *paidEndpoint) stats() (requests int, signatures []string, payers []common.Address, paymentIDs []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.requests, append([]string(nil), e.signatures...), append([]common.Address(nil), e.payers...), append([]string(nil), e.paymentIDs...)
}
