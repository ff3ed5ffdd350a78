package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
	"github.com/pcourt/pcourt/services/readiness/internal/httpapi"
)

func TestUnpaidRequestGetsTheChallenge(t *testing.T) {
	s := newStack(t)
	a := s.post(t, validBody, "")
	require.Equal(t, 402, a.status)
	require.Equal(t, "no-store", a.header.Get("Cache-Control"))
	pr := a.required
	require.Equal(t, 2, pr.X402Version)
	require.Equal(t, "payment_required", pr.Error)
	require.Equal(t, publicBase+"/api/x402/dispute-readiness", pr.Resource.URL)
	require.Len(t, pr.Accepts, 1, "sandbox offers its test network only")
	for _, o := range pr.Accepts {
		require.Equal(t, "exact", o.Scheme)
		require.Equal(t, "10000", o.Amount, "USD 0.010000 in USDC's 6 decimals")
		require.True(t, strings.EqualFold(payTo, o.PayTo))
		usdc, ok := x402.USDC(o.Network)
		require.True(t, ok)
		require.True(t, strings.EqualFold(usdc.Address.Hex(), o.Asset))
	}
	require.Contains(t, pr.Extensions, "bazaar")
	require.Contains(t, pr.Extensions, "payment-identifier")
	var bazaar struct {
		Info struct {
			Input struct {
				Method string          `json:"method"`
				Body   json.RawMessage `json:"body"`
			} `json:"input"`
		} `json:"info"`
		Schema struct {
			Properties struct {
				Input struct {
					Properties struct {
						Body struct {
							Required []string `json:"required"`
						} `json:"body"`
					} `json:"properties"`
				} `json:"input"`
			} `json:"properties"`
		} `json:"schema"`
	}
	// The full discovery metadata is in the body; the header's compact form
	// is TestChallengeHeaderIsCompactAndTheBodyFull's.
	var full x402.PaymentRequired
	require.NoError(t, json.Unmarshal(a.body, &full))
	require.NoError(t, json.Unmarshal(full.Extensions["bazaar"], &bazaar))
	require.Equal(t, "POST", bazaar.Info.Input.Method)
	require.Contains(t, bazaar.Schema.Properties.Input.Properties.Body.Required, "claimantType", "the request schema is published")
	// The advertised example is itself a valid request.
	require.Equal(t, 402, s.post(t, bazaar.Info.Input.Body, "").status)
}

func TestPaidRequestGetsTheReportAndSettlesOnce(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		s := newStack(t, withRedis(rdb))
		before := s.ledgerState(t)
		payment := encode(t, s.sign(t, s.offer(t), nil))

		a := s.post(t, validBody, payment)
		require.Equal(t, 200, a.status, string(a.body))
		require.True(t, a.report.OK)
		require.Equal(t, "x402", a.report.Payment.Protocol)
		require.Equal(t, "0.010000", a.report.Payment.PriceUsd)
		require.False(t, a.report.Payment.Replayed)
		require.Equal(t, testnet, a.report.Payment.Network)
		require.NotNil(t, a.settled)
		require.True(t, a.settled.Success)
		require.Equal(t, a.settled.Transaction, a.report.Payment.Transaction)
		require.Contains(t, string(a.report.Data), `"readyToFile":true`)

		after := s.ledgerState(t)
		require.Equal(t, before.payer-10000, after.payer)
		require.Equal(t, before.payee+10000, after.payee)
		require.Equal(t, before.settlements+1, after.settlements)
		require.Equal(t, before.outbox+1, after.outbox, "the settlement event is in the outbox")

		// The same payment and body again: the stored report, nothing settled.
		again := s.post(t, validBody, payment)
		require.Equal(t, 200, again.status)
		require.True(t, again.report.Payment.Replayed)
		require.JSONEq(t, string(a.report.Data), string(again.report.Data))
		require.Equal(t, string(a.report.Data), string(again.report.Data), "byte for byte")
		require.Equal(t, after, s.ledgerState(t))

		// The same body re-serialised is the same request.
		var v map[string]any
		require.NoError(t, json.Unmarshal(validBody, &v))
		reordered, _ := json.MarshalIndent(v, "", "  ")
		require.Equal(t, 200, s.post(t, reordered, payment).status)

		// So is the same amount spelled another way (RFC 8785 numbers).
		amount, ok := v["amountInDisputeUsd"].(float64)
		require.True(t, ok)
		respelled := bytes.Replace(reordered, []byte(`"amountInDisputeUsd": `+strconv.FormatFloat(amount, 'f', -1, 64)),
			[]byte(`"amountInDisputeUsd": `+strconv.FormatFloat(amount, 'e', -1, 64)), 1)
		require.NotEqual(t, string(reordered), string(respelled))
		require.Equal(t, 200, s.post(t, respelled, payment).status, "an equal number in exponent form is the same request")
	})
}

func TestFiftyConcurrentRetriesOfOnePaymentSettleOnce(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		s := newStack(t, withRedis(rdb))
		before := s.ledgerState(t)
		payment := encode(t, s.sign(t, s.offer(t), nil))

		const n = 50
		answers := make([]answer, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				// A client that gets 409 payment_in_progress retries the same request.
				deadline := time.Now().Add(20 * time.Second)
				for {
					a := s.post(t, validBody, payment)
					if a.status != 409 || time.Now().After(deadline) {
						answers[i] = a
						return
					}
					require.Equal(t, "payment_in_progress", a.problem)
					time.Sleep(10 * time.Millisecond) // the client's retry pause, as Retry-After asks
				}
			})
		}
		wg.Wait()

		fresh := 0
		for _, a := range answers {
			require.Equal(t, 200, a.status, string(a.body))
			require.Equal(t, string(answers[0].report.Data), string(a.report.Data), "every 200 carries the same report")
			if !a.report.Payment.Replayed {
				fresh++
			}
		}
		require.Equal(t, 1, fresh, "replayed is true on all but one")
		after := s.ledgerState(t)
		require.Equal(t, before.settlements+1, after.settlements, "one settlement")
		require.Equal(t, before.payer-10000, after.payer, "one ledger entry")
		require.Equal(t, before.outbox+1, after.outbox)
	})
}

// Every refusal has its status and code, and leaves the ledger, the
// settlements and the outbox as they were.
func TestRefusalsChangeNothing(t *testing.T) {
	s := newStack(t)
	offer := s.offer(t)
	other, err := json.Marshal(map[string]any{"x": 1})
	require.NoError(t, err)
	usedElsewhere := s.sign(t, offer, nil)
	fc, err := facilitator.NewClient(facilitator.ClientConfig{BaseURL: s.facProxy.URL})
	require.NoError(t, err)
	settled, err := fc.Settle(context.Background(), x402.SettleRequest{X402Version: 2, PaymentPayload: usedElsewhere, PaymentRequirements: offer})
	require.NoError(t, err)
	require.True(t, settled.Success, "the nonce is now used at the facilitator")

	tampered := s.sign(t, offer, nil)
	tampered.Payload.Signature = tampered.Payload.Signature[:10] + flip(tampered.Payload.Signature[10:11]) + tampered.Payload.Signature[11:]
	expired := s.sign(t, offer, nil)
	expired.Payload.Authorization.ValidBefore = fmt.Sprint(time.Now().Add(-time.Minute).Unix())
	future := s.sign(t, offer, nil)
	future.Payload.Authorization.ValidAfter = fmt.Sprint(time.Now().Add(time.Hour).Unix())

	tests := []struct {
		name   string
		body   []byte
		header string
		status int
		code   string // problem code, or the 402 error
	}{
		{"body is not JSON", []byte(`{"claimantType":`), encode(t, s.sign(t, offer, nil)), 400, "malformed_json"},
		{"unknown field", []byte(`{"claimantType":"human","colour":"red"}`), encode(t, s.sign(t, offer, nil)), 400, "unknown_field"},
		{"wrong type", []byte(strings.Replace(string(validBody), `"amountInDisputeUsd":40000`, `"amountInDisputeUsd":"40000"`, 1)), "", 400, "invalid_field_type"},
		{"missing required field", []byte(`{"claimantType":"human"}`), "", 400, "invalid_readiness_request"},
		{"amount out of range", []byte(strings.Replace(string(validBody), `40000`, `10000001`, 1)), "", 400, "invalid_readiness_request"},
		{"not an object", []byte(`[1]`), "", 400, "invalid_field_type"},
		{"null, not an object", []byte(` null `), "", 400, "invalid_field_type"},
		{"a member in another case", []byte(strings.Replace(string(validBody), `"remedy"`, `"Remedy"`, 1)), "", 400, "unknown_field"},
		{"a null for a boolean the spec requires", []byte(strings.Replace(string(validBody), `"mutualConsentReported":true`, `"mutualConsentReported":null`, 1)), "", 400, "invalid_readiness_request"},
		{"an object for a number", []byte(strings.Replace(string(validBody), `"amountInDisputeUsd":40000`, `"amountInDisputeUsd":{"usd":40000}`, 1)), "", 400, "invalid_field_type"},
		{"oversize body", []byte(`{"claimantType":"` + strings.Repeat("a", 17<<10) + `"}`), "", 413, "body_too_large"},
		{"no payment", validBody, "", 402, "payment_required"},
		{"malformed payment header", validBody, "not-base64!", 400, "invalid_payload"},
		{"payment header is not a payload", validBody, encode(t, other), 400, "invalid_payload"},
		{"wrong network", validBody, encode(t, s.sign(t, offer, func(o *x402.PaymentRequirements) { o.Network = "eip155:1" })), 402, x402.ReasonInvalidNetwork},
		{"wrong amount", validBody, encode(t, s.sign(t, offer, func(o *x402.PaymentRequirements) { o.Amount = "9999" })), 402, x402.ReasonValueMismatch},
		{"wrong payee", validBody, encode(t, s.sign(t, offer, func(o *x402.PaymentRequirements) { o.PayTo = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC" })), 402, x402.ReasonRecipientMismatch},
		{"expired", validBody, encode(t, expired), 402, x402.ReasonValidBefore},
		{"valid only in the future", validBody, encode(t, future), 402, x402.ReasonValidAfter},
		{"bad signature", validBody, encode(t, tampered), 402, x402.ReasonInvalidSignature},
		{"nonce already used", validBody, encode(t, usedElsewhere), 402, localfacilitator.ReasonNonceAlreadyUsed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := s.ledgerState(t)
			a := s.post(t, tc.body, tc.header)
			require.Equal(t, tc.status, a.status, string(a.body))
			if tc.status == 402 {
				require.Equal(t, tc.code, a.required.Error)
			} else {
				require.Equal(t, tc.code, a.problem)
			}
			require.Equal(t, before, s.ledgerState(t), "nothing moved")
		})
	}
}

func flip(c string) string {
	if c == "a" {
		return "b"
	}
	return "a"
}

func TestSamePaymentForAnotherRequestIsAConflict(t *testing.T) {
	s := newStack(t)
	payment := encode(t, s.sign(t, s.offer(t), nil))
	require.Equal(t, 200, s.post(t, validBody, payment).status)
	before := s.ledgerState(t)
	other := []byte(strings.Replace(string(validBody), `40000`, `40001`, 1))
	a := s.post(t, other, payment)
	require.Equal(t, 409, a.status)
	require.Equal(t, "payment_request_mismatch", a.problem)
	require.Equal(t, before, s.ledgerState(t))
}

func TestPaymentIdentifier(t *testing.T) {
	s := newStack(t)
	offer := s.offer(t)
	withID := func(id string) string {
		p := s.sign(t, offer, nil)
		p.Extensions = x402.Extensions{"payment-identifier": json.RawMessage(`{"info":{"required":false,"id":"` + id + `"}}`)}
		return encode(t, p)
	}
	first := withID("pay_7d5d747be160e280504c099d984bcfe0")
	require.Equal(t, 200, s.post(t, validBody, first).status)
	require.True(t, s.post(t, validBody, first).report.Payment.Replayed, "same id, same payload: the stored response")

	before := s.ledgerState(t)
	a := s.post(t, validBody, withID("pay_7d5d747be160e280504c099d984bcfe0"))
	require.Equal(t, 409, a.status, "same id, different payload")
	require.Equal(t, "payment_identifier_conflict", a.problem)
	require.Equal(t, before, s.ledgerState(t))

	a = s.post(t, validBody, withID("short"))
	require.Equal(t, 400, a.status)
	require.Equal(t, "invalid_payload", a.problem)
}

func TestSettlementCapReached(t *testing.T) {
	s := newStack(t, withPayerCap(1))
	offer := s.offer(t)
	require.Equal(t, 200, s.post(t, validBody, encode(t, s.sign(t, offer, nil))).status)
	before := s.ledgerState(t)
	a := s.post(t, validBody, encode(t, s.sign(t, offer, nil)))
	require.Equal(t, 429, a.status)
	require.Equal(t, "settlement_cap_reached", a.problem)
	require.NotEmpty(t, a.header.Get("Retry-After"))
	require.Equal(t, before, s.ledgerState(t))
}

func TestDisabledResource(t *testing.T) {
	s := newStack(t, withDisabled())
	a := s.post(t, validBody, "")
	require.Equal(t, 503, a.status)
	require.Equal(t, "resource_disabled", a.problem)
}

func TestFacilitatorDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := "http://" + l.Addr().String()
	l.Close()
	s := newStack(t, withFacilitatorAt(dead))
	before := s.ledgerState(t)
	a := s.post(t, validBody, encode(t, s.sign(t, s.offer(t), nil)))
	require.Equal(t, 503, a.status)
	require.Equal(t, "facilitator_unavailable", a.problem)
	require.NotEmpty(t, a.header.Get("Retry-After"))
	require.Equal(t, before, s.ledgerState(t))
}

// The facilitator settles but its answer is lost: the outcome is unknown,
// the request is told to come back, and once the reconciler has asked the
// facilitator again the same request gets its report — settled once.
func TestSettlementPendingIsReconciled(t *testing.T) {
	s := newStack(t)
	before := s.ledgerState(t)
	payment := encode(t, s.sign(t, s.offer(t), nil))

	s.settle.Store(1)
	a := s.post(t, validBody, payment)
	require.Equal(t, 503, a.status, string(a.body))
	require.Equal(t, "awaiting_payment_reconciliation", a.problem)
	a = s.post(t, validBody, payment)
	require.Equal(t, 503, a.status, "still unknown until reconciled")
	require.Equal(t, before.outbox, s.ledgerState(t).outbox, "no event before the outcome is known")

	s.settle.Store(0)
	resolved, err := s.seller.ReconcileOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, resolved)

	a = s.post(t, validBody, payment)
	require.Equal(t, 200, a.status, string(a.body))
	require.True(t, a.settled.Success)
	after := s.ledgerState(t)
	require.Equal(t, before.settlements+1, after.settlements, "settled once, not twice")
	require.Equal(t, before.payer-10000, after.payer)
	require.Equal(t, before.outbox+1, after.outbox)
}

// Verification passes, then the payer's funds go to another payment before
// ours settles: the settlement is refused, the caller gets 402 with the
// failed SettleResponse and no report, and a retry gets the same refusal.
func TestSettlementRefusedAfterVerification(t *testing.T) {
	s := newStack(t, withFunding(10000)) // exactly one report's worth
	offer := s.offer(t)
	ours := encode(t, s.sign(t, offer, nil))
	competing := s.sign(t, offer, nil)
	direct, err := facilitator.NewClient(facilitator.ClientConfig{BaseURL: s.facURL})
	require.NoError(t, err)
	spend := func() {
		r, err := direct.Settle(context.Background(), x402.SettleRequest{X402Version: 2, PaymentPayload: competing, PaymentRequirements: offer})
		require.NoError(t, err)
		require.True(t, r.Success)
	}
	s.onSettle.Store(&spend)

	before := s.ledgerState(t)
	a := s.post(t, validBody, ours)
	require.Equal(t, 402, a.status, string(a.body))
	require.Equal(t, x402.ReasonInsufficientFunds, a.required.Error)
	require.NotNil(t, a.settled, "PAYMENT-RESPONSE carries the failed settlement")
	require.False(t, a.settled.Success)
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(a.body, &top))
	require.NotContains(t, top, "data", "no report without payment")

	after := s.ledgerState(t)
	require.Equal(t, before.settlements+1, after.settlements, "only the competing payment settled")
	require.Equal(t, before.outbox, after.outbox, "no settlement event for ours")

	again := s.post(t, validBody, ours)
	require.Equal(t, 402, again.status)
	require.Equal(t, x402.ReasonInsufficientFunds, again.required.Error)
}

// The resource URL a payer is asked to sign for is the configured one,
// whatever Host or X-Forwarded-* headers the request brings.
func TestForgedHostDoesNotReachTheChallenge(t *testing.T) {
	s := newStack(t)
	a := s.post(t, validBody, "", "Host", "attacker.example", "X-Forwarded-Host", "attacker.example", "X-Forwarded-Proto", "http")
	require.Equal(t, 402, a.status)
	require.Equal(t, publicBase+httpapi.Path, a.required.Resource.URL)
	require.NotContains(t, string(a.body), "attacker.example")
	decoded, err := base64.StdEncoding.DecodeString(a.header.Get(x402.HeaderPaymentRequired))
	require.NoError(t, err)
	require.NotContains(t, string(decoded), "attacker.example")
}

// Two PAYMENT-SIGNATURE headers are refused whole: whichever copy a server
// read, one payment could be verified and another settled.
func TestTwoPaymentSignaturesAreRefused(t *testing.T) {
	s := newStack(t)
	offer := s.offer(t)
	before := s.ledgerState(t)
	a := s.post(t, validBody, encode(t, s.sign(t, offer, nil)), x402.HeaderPaymentSignature, encode(t, s.sign(t, offer, nil)))
	require.Equal(t, 400, a.status)
	require.Equal(t, "invalid_payload", a.problem)
	require.Equal(t, before, s.ledgerState(t), "nothing settled")
}

// Readiness and filings share one Redis and one settlement journal: a
// payment that paid a filing fee buys no report, and a payment that bought
// a report pays no fee.
func TestPaymentUsedOnAnotherRouteIsRefused(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	offer := s.offer(t)
	fees, err := journal.New(journal.Config{Owner: "filings", Lease: 30 * time.Second}, s.rdb, s.facClient, quiet())
	require.NoError(t, err)

	// Fee first, then the report.
	feePaid := s.sign(t, offer, nil)
	_, err = fees.Pay(ctx, journal.Purchase{Resource: "/api/fees/fee-1/x402", Ref: "draft-1", Payment: feePaid, Offer: offer})
	require.NoError(t, err)
	before := s.ledgerState(t)
	a := s.post(t, validBody, encode(t, feePaid))
	require.Equal(t, 409, a.status)
	require.Equal(t, "payment_already_used", a.problem)
	require.Equal(t, before, s.ledgerState(t), "no report, no settlement, no event")

	// The report first, then the fee.
	reportPaid := s.sign(t, offer, nil)
	require.Equal(t, 200, s.post(t, validBody, encode(t, reportPaid)).status)
	before = s.ledgerState(t)
	_, err = fees.Pay(ctx, journal.Purchase{Resource: "/api/fees/fee-2/x402", Ref: "draft-2", Payment: reportPaid, Offer: offer})
	require.ErrorIs(t, err, journal.ErrAlreadyUsed)
	require.Equal(t, before, s.ledgerState(t))
}
