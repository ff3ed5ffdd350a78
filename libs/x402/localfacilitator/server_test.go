package localfacilitator_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
)

var txPattern = regexp.MustCompile(`^0x[0-9a-f]{64}$`)

func TestVerifyValid(t *testing.T) {
	f := newFixture(t)
	key := f.payer(t, 10000)
	resp, err := f.client.Verify(context.Background(), verifyRequest(f.offer, f.pay(t, key, f.offer)))
	require.NoError(t, err)
	require.Equal(t, x402.VerifyResponse{IsValid: true, Payer: address(key).Hex()}, resp)
	require.Equal(t, uint64(10000), f.balance(t, address(key).Hex()), "verifying moves nothing")
	require.Empty(t, f.settlements(t))
}

// TestRefusals sends every kind of bad payment to /verify and to /settle:
// each is refused with the specification's reason, and neither endpoint
// changes the ledger.
func TestRefusals(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()

	tests := []struct {
		name string
		fund uint64
		// build returns the request to send, paid by key.
		build      func(t *testing.T, key *ecdsa.PrivateKey) x402.VerifyRequest
		wantReason string
		// wantPayer: the refusal names the payer (the authorization parsed).
		wantPayer bool
	}{
		{
			name: "x402Version of the request is not 2",
			fund: 1_000_000,
			build: func(t *testing.T, key *ecdsa.PrivateKey) x402.VerifyRequest {
				req := verifyRequest(f.offer, f.pay(t, key, f.offer))
				req.X402Version = 1
				return req
			},
			wantReason: x402.ReasonInvalidX402Version,
		},
		{
			name: "network not supported",
			fund: 1_000_000,
			build: func(t *testing.T, key *ecdsa.PrivateKey) x402.VerifyRequest {
				offer := f.offer
				offer.Network = "eip155:1"
				return verifyRequest(offer, f.pay(t, key, offer))
			},
			wantReason: x402.ReasonInvalidNetwork,
		},
		{
			name: "asset is not the network's USDC",
			fund: 1_000_000,
			build: func(t *testing.T, key *ecdsa.PrivateKey) x402.VerifyRequest {
				offer := f.offer
				offer.Asset = newAddress(t).Hex()
				return verifyRequest(offer, f.pay(t, key, offer))
			},
			wantReason: x402.ReasonInvalidPaymentRequirements,
		},
		{
			name: "payTo is not the authorization's recipient",
			fund: 1_000_000,
			build: func(t *testing.T, key *ecdsa.PrivateKey) x402.VerifyRequest {
				p := f.pay(t, key, f.offer)
				offer := f.offer
				offer.PayTo = newAddress(t).Hex()
				return verifyRequest(offer, p)
			},
			wantReason: x402.ReasonRecipientMismatch,
			wantPayer:  true,
		},
		{
			name: "amount is not the authorized value",
			fund: 1_000_000,
			build: func(t *testing.T, key *ecdsa.PrivateKey) x402.VerifyRequest {
				p := f.pay(t, key, f.offer)
				offer := f.offer
				offer.Amount = "20000"
				return verifyRequest(offer, p)
			},
			wantReason: x402.ReasonValueMismatch,
			wantPayer:  true,
		},
		{
			name: "expired",
			fund: 1_000_000,
			build: func(t *testing.T, key *ecdsa.PrivateKey) x402.VerifyRequest {
				p := f.pay(t, key, f.offer)
				p.Payload.Authorization.ValidBefore = f.clock.At(-1)
				resign(t, key, f.offer, &p)
				return verifyRequest(f.offer, p)
			},
			wantReason: x402.ReasonValidBefore,
			wantPayer:  true,
		},
		{
			name: "not valid yet",
			fund: 1_000_000,
			build: func(t *testing.T, key *ecdsa.PrivateKey) x402.VerifyRequest {
				p := f.pay(t, key, f.offer)
				p.Payload.Authorization.ValidAfter = f.clock.At(30)
				resign(t, key, f.offer, &p)
				return verifyRequest(f.offer, p)
			},
			wantReason: x402.ReasonValidAfter,
			wantPayer:  true,
		},
		{
			name: "signed by another key",
			fund: 1_000_000,
			build: func(t *testing.T, key *ecdsa.PrivateKey) x402.VerifyRequest {
				p := f.pay(t, key, f.offer)
				resign(t, f.payer(t, 0), f.offer, &p)
				return verifyRequest(f.offer, p)
			},
			wantReason: x402.ReasonInvalidSignature,
			wantPayer:  true,
		},
		{
			name: "signature tampered with",
			fund: 1_000_000,
			build: func(t *testing.T, key *ecdsa.PrivateKey) x402.VerifyRequest {
				p := f.pay(t, key, f.offer)
				p.Payload.Signature = p.Payload.Signature[:10] + flipHex(p.Payload.Signature[10]) + p.Payload.Signature[11:]
				return verifyRequest(f.offer, p)
			},
			wantReason: x402.ReasonInvalidSignature,
			wantPayer:  true,
		},
		{
			// Base Sepolia's USDC signs as "USDC"; "USD Coin" is Base's
			// name. The offer and the signature agree with each other, but
			// the contract recovers under its own domain.
			name: "signed under a wrong EIP-712 domain name",
			fund: 1_000_000,
			build: func(t *testing.T, key *ecdsa.PrivateKey) x402.VerifyRequest {
				offer := f.offer
				offer.Extra.Name = "USD Coin"
				return verifyRequest(offer, f.pay(t, key, offer))
			},
			wantReason: x402.ReasonInvalidSignature,
			wantPayer:  true,
		},
		{
			name: "malformed authorization",
			fund: 1_000_000,
			build: func(t *testing.T, key *ecdsa.PrivateKey) x402.VerifyRequest {
				p := f.pay(t, key, f.offer)
				p.Payload.Authorization.Nonce = "0x1234"
				return verifyRequest(f.offer, p)
			},
			wantReason: x402.ReasonInvalidPayload,
		},
		{
			name: "nonce already used by another authorization",
			fund: 1_000_000,
			build: func(t *testing.T, key *ecdsa.PrivateKey) x402.VerifyRequest {
				first := f.pay(t, key, f.offer)
				settled, err := f.client.Settle(ctx, x402.SettleRequest(verifyRequest(f.offer, first)))
				require.NoError(t, err)
				require.True(t, settled.Success, settled.ErrorMessage)
				second := f.pay(t, key, f.offer)
				second.Payload.Authorization.Nonce = first.Payload.Authorization.Nonce
				second.Payload.Authorization.ValidBefore = f.clock.At(50)
				resign(t, key, f.offer, &second)
				return verifyRequest(f.offer, second)
			},
			wantReason: localfacilitator.ReasonNonceAlreadyUsed,
			wantPayer:  true,
		},
		{
			name: "balance below the amount",
			fund: 9999,
			build: func(t *testing.T, key *ecdsa.PrivateKey) x402.VerifyRequest {
				return verifyRequest(f.offer, f.pay(t, key, f.offer))
			},
			wantReason: x402.ReasonInsufficientFunds,
			wantPayer:  true,
		},
		{
			name: "never funded",
			build: func(t *testing.T, key *ecdsa.PrivateKey) x402.VerifyRequest {
				return verifyRequest(f.offer, f.pay(t, key, f.offer))
			},
			wantReason: x402.ReasonInsufficientFunds,
			wantPayer:  true,
		},
		{
			name: "amount above what the ledger can hold",
			fund: localfacilitator.MaxAmount,
			build: func(t *testing.T, key *ecdsa.PrivateKey) x402.VerifyRequest {
				offer := f.offerTo(t, newAddress(t), strconv.FormatUint(localfacilitator.MaxAmount+1, 10))
				return verifyRequest(offer, f.pay(t, key, offer))
			},
			wantReason: x402.ReasonInsufficientFunds,
			wantPayer:  true,
		},
	}
	for _, tt := range tests {
		for _, endpoint := range []string{"verify", "settle"} {
			t.Run(tt.name+"/"+endpoint, func(t *testing.T) {
				key := f.payer(t, tt.fund)
				req := tt.build(t, key)
				payer, payTo := address(key).Hex(), req.PaymentRequirements.PayTo
				before := [2]uint64{f.balance(t, payer), balanceOrZero(t, f, payTo)}
				settlementsBefore := len(f.settlements(t))

				var reason, gotPayer string
				if endpoint == "verify" {
					resp, err := f.client.Verify(ctx, req)
					require.NoError(t, err)
					require.False(t, resp.IsValid)
					require.NotEmpty(t, resp.InvalidMessage, "a refusal explains itself")
					reason, gotPayer = resp.InvalidReason, resp.Payer
				} else {
					resp, err := f.client.Settle(ctx, x402.SettleRequest(req))
					require.NoError(t, err)
					require.False(t, resp.Success)
					require.Empty(t, resp.Transaction)
					require.Equal(t, req.PaymentRequirements.Network, resp.Network)
					reason, gotPayer = resp.ErrorReason, resp.Payer
				}
				require.Equal(t, tt.wantReason, reason)
				if tt.wantPayer {
					require.Equal(t, payer, gotPayer)
				}
				require.Equal(t, before, [2]uint64{f.balance(t, payer), balanceOrZero(t, f, payTo)}, "a refusal moves nothing")
				require.Len(t, f.settlements(t), settlementsBefore, "a refusal records nothing")
			})
		}
	}
}

// balanceOrZero reads addr's balance, or 0 when a case made addr
// something the ledger cannot key.
func balanceOrZero(t *testing.T, f *fixture, addr string) uint64 {
	t.Helper()
	n, err := f.ledger.Balance(context.Background(), f.asset.Network, f.asset.Address.Hex(), addr)
	if err != nil {
		return 0
	}
	return n
}

func flipHex(c byte) string {
	if c == '0' {
		return "1"
	}
	return "0"
}

func TestSettleMovesFundsExactlyOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	key := f.payer(t, 10000) // exactly the amount
	payer, payTo := address(key), common.HexToAddress(f.offer.PayTo)
	req := verifyRequest(f.offer, f.pay(t, key, f.offer))

	first, err := f.client.Settle(ctx, x402.SettleRequest(req))
	require.NoError(t, err)
	require.True(t, first.Success, first.ErrorMessage)
	require.Regexp(t, txPattern, first.Transaction)
	require.Equal(t, x402.SettleResponse{Success: true, Payer: payer.Hex(), Transaction: first.Transaction, Network: "eip155:84532", Amount: "10000"}, first)
	require.Equal(t, uint64(0), f.balance(t, payer.Hex()))
	require.Equal(t, uint64(10000), f.balance(t, payTo.Hex()))

	again, err := f.client.Settle(ctx, x402.SettleRequest(req))
	require.NoError(t, err)
	require.Empty(t, cmp.Diff(first, again), "settling the same authorization again answers the original outcome")
	require.Equal(t, uint64(0), f.balance(t, payer.Hex()), "and debits nothing more")
	require.Equal(t, uint64(10000), f.balance(t, payTo.Hex()))

	verified, err := f.client.Verify(ctx, req)
	require.NoError(t, err)
	require.False(t, verified.IsValid, "a spent authorization no longer verifies, so nobody can sell against it twice")
	require.Equal(t, localfacilitator.ReasonNonceAlreadyUsed, verified.InvalidReason)

	settlements := f.settlements(t)
	require.Len(t, settlements, 1)
	require.Empty(t, cmp.Diff(localfacilitator.Settlement{
		Transaction: first.Transaction,
		Network:     "eip155:84532",
		Asset:       f.asset.Address,
		From:        payer,
		To:          payTo,
		Amount:      10000,
		Nonce:       req.PaymentPayload.Payload.Authorization.Nonce,
		SettledAt:   start.UTC(),
	}, settlements[0]))

	// The reconciler may ask again after the authorization has expired: it
	// still gets the original outcome, while a fresh verification is
	// refused as expired.
	f.clock.Advance(time.Hour)
	late, err := f.client.Settle(ctx, x402.SettleRequest(req))
	require.NoError(t, err)
	require.Empty(t, cmp.Diff(first, late))
	expired, err := f.client.Verify(ctx, req)
	require.NoError(t, err)
	require.Equal(t, x402.ReasonValidBefore, expired.InvalidReason)
	require.Len(t, f.settlements(t), 1)
}

func TestSettleRecordAnswersOnlyItsOwnRequirements(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	key := f.payer(t, 50000)
	p := f.pay(t, key, f.offer)
	settled, err := f.client.Settle(ctx, x402.SettleRequest(verifyRequest(f.offer, p)))
	require.NoError(t, err)
	require.True(t, settled.Success)

	dearer := f.offer
	dearer.Amount = "20000"
	resp, err := f.client.Settle(ctx, x402.SettleRequest(verifyRequest(dearer, p)))
	require.NoError(t, err)
	require.False(t, resp.Success, "a settlement of 10000 is not the outcome of a request for 20000")
	require.Equal(t, x402.ReasonValueMismatch, resp.ErrorReason)
	require.Equal(t, uint64(40000), f.balance(t, address(key).Hex()))
}

func TestConcurrentSettlesOfOnePaymentDebitOnce(t *testing.T) {
	f := newFixture(t)
	key := f.payer(t, 100000)
	req := x402.SettleRequest(verifyRequest(f.offer, f.pay(t, key, f.offer)))

	const n = 20
	resps := make([]x402.SettleResponse, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { resps[i], errs[i] = f.client.Settle(context.Background(), req) })
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		require.True(t, resps[i].Success, resps[i].ErrorMessage)
		require.Empty(t, cmp.Diff(resps[0], resps[i]))
	}
	require.Equal(t, uint64(90000), f.balance(t, address(key).Hex()))
	require.Equal(t, uint64(10000), f.balance(t, f.offer.PayTo))
	require.Len(t, f.settlements(t), 1)
}

func TestSettleRefusesACreditAboveTheLedgerLimit(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	key := f.payer(t, 10000)
	require.NoError(t, f.ledger.Fund(ctx, f.asset.Network, f.asset.Address.Hex(), f.offer.PayTo, localfacilitator.MaxAmount-9999))

	resp, err := f.client.Settle(ctx, x402.SettleRequest(verifyRequest(f.offer, f.pay(t, key, f.offer))))
	require.NoError(t, err)
	require.False(t, resp.Success)
	require.Equal(t, x402.ReasonInvalidTransactionState, resp.ErrorReason)
	require.Equal(t, uint64(10000), f.balance(t, address(key).Hex()))
	require.Equal(t, localfacilitator.MaxAmount-9999, f.balance(t, f.offer.PayTo))
	require.Empty(t, f.settlements(t))
}

func TestSupported(t *testing.T) {
	f := newFixture(t)
	resp, err := f.client.Supported(context.Background())
	require.NoError(t, err)
	require.Equal(t, []x402.SupportedKind{
		{X402Version: 2, Scheme: "exact", Network: "eip155:8453"},
		{X402Version: 2, Scheme: "exact", Network: "eip155:84532"},
	}, resp.Kinds)

	// The specification requires all three fields, even empty.
	raw := get(t, f.url+"/supported", "")
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(raw.body), &fields))
	require.JSONEq(t, `[]`, string(fields["extensions"]))
	require.JSONEq(t, `{}`, string(fields["signers"]))
}

// TestStrictDecoding: a body that is not exactly a request is refused with
// 400 and a problem that says why, and changes nothing.
func TestStrictDecoding(t *testing.T) {
	f := newFixture(t)
	key := f.payer(t, 10000)
	valid, err := json.Marshal(verifyRequest(f.offer, f.pay(t, key, f.offer)))
	require.NoError(t, err)
	withField := func(path []string, v string) string {
		var m map[string]any
		require.NoError(t, json.Unmarshal(valid, &m))
		inner := m
		for _, k := range path[:len(path)-1] {
			inner = inner[k].(map[string]any)
		}
		inner[path[len(path)-1]] = json.RawMessage(v)
		out, err := json.Marshal(m)
		require.NoError(t, err)
		return string(out)
	}

	tests := []struct {
		name     string
		body     string
		wantCode string
	}{
		{"unknown top-level field", withField([]string{"surprise"}, `1`), "unknown_field"},
		{"unknown field in the authorization", withField([]string{"paymentPayload", "payload", "authorization", "extra"}, `"x"`), "unknown_field"},
		{"trailing data", string(valid) + `{}`, "trailing_data"},
		{"wrong type", withField([]string{"x402Version"}, `"2"`), "invalid_field_type"},
		{"not JSON", `{"x402Version":`, "malformed_json"},
		{"empty", ``, "empty_body"},
	}
	for _, tt := range tests {
		for _, path := range []string{"/verify", "/settle"} {
			t.Run(tt.name+path, func(t *testing.T) {
				resp := post(t, f.url+path, tt.body, "")
				require.Equal(t, http.StatusBadRequest, resp.status, resp.body)
				require.Equal(t, "application/problem+json", resp.contentType)
				require.Equal(t, tt.wantCode, problemCode(t, resp.body))
			})
		}
	}
	require.Equal(t, uint64(10000), f.balance(t, address(key).Hex()))
	require.Empty(t, f.settlements(t))
}

func TestBearerToken(t *testing.T) {
	f := newFixture(t, withToken("s3cret-token", "Bearer s3cret-token"))
	ctx := context.Background()
	key := f.payer(t, 10000)
	body, err := json.Marshal(verifyRequest(f.offer, f.pay(t, key, f.offer)))
	require.NoError(t, err)

	tests := []struct {
		name, auth, wantCode string
	}{
		{"no Authorization", "", "unauthenticated"},
		{"wrong token", "Bearer s3cret-tokeN", "invalid_credential"},
		{"wrong scheme", "Basic s3cret-token", "invalid_credential"},
	}
	for _, tt := range tests {
		for _, path := range []string{"/verify", "/settle", "/supported"} {
			t.Run(tt.name+path, func(t *testing.T) {
				var resp response
				if path == "/supported" {
					resp = get(t, f.url+path, tt.auth)
				} else {
					resp = post(t, f.url+path, string(body), tt.auth)
				}
				require.Equal(t, http.StatusUnauthorized, resp.status)
				require.Equal(t, tt.wantCode, problemCode(t, resp.body))
				require.True(t, strings.HasPrefix(resp.wwwAuthenticate, "Bearer"))
			})
		}
	}
	require.Equal(t, uint64(10000), f.balance(t, address(key).Hex()))

	// The client configured with the header gets through.
	settled, err := f.client.Settle(ctx, x402.SettleRequest(verifyRequest(f.offer, f.pay(t, key, f.offer))))
	require.NoError(t, err)
	require.True(t, settled.Success)

	// A client without it is rejected, which is not a refusal of the payment.
	bare, err := facilitator.NewClient(facilitator.ClientConfig{BaseURL: f.url})
	require.NoError(t, err)
	_, err = bare.Verify(ctx, verifyRequest(f.offer, f.pay(t, key, f.offer)))
	require.ErrorIs(t, err, facilitator.ErrRejected)
}

// TestLedgerDown: without Redis the facilitator answers 503, which the
// client reports as unavailable for /verify and as an unknown outcome for
// /settle.
func TestLedgerDown(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	key := f.payer(t, 10000)
	req := verifyRequest(f.offer, f.pay(t, key, f.offer))
	f.redis.Stop()

	_, err := f.client.Verify(ctx, req)
	require.ErrorIs(t, err, facilitator.ErrUnavailable)
	_, err = f.client.Settle(ctx, x402.SettleRequest(req))
	require.ErrorIs(t, err, facilitator.ErrOutcomeUnknown)
}

type response struct {
	status          int
	contentType     string
	wwwAuthenticate string
	body            string
}

func post(t *testing.T, url, body, auth string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	return do(t, req, auth)
}

func get(t *testing.T, url, auth string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	return do(t, req, auth)
}

func do(t *testing.T, req *http.Request, auth string) response {
	t.Helper()
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{
		status:          resp.StatusCode,
		contentType:     resp.Header.Get("Content-Type"),
		wwwAuthenticate: resp.Header.Get("WWW-Authenticate"),
		body:            string(b),
	}
}

func problemCode(t *testing.T, body string) string {
	t.Helper()
	var p struct {
		Code string `json:"code"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &p), body)
	return p.Code
}
