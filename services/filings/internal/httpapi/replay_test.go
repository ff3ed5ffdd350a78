package httpapi_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/journal"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// paidState is what a refused replay must leave unchanged: what the payer
// holds, how many settlements the facilitator made, how many cases opened.
type paidState struct {
	balance     uint64
	settlements int
	opened      int64
}

func (s *stack) paidState(t *testing.T) paidState {
	t.Helper()
	usdc, _ := x402.USDC("eip155:84532")
	settled, err := s.ledger.Settlements(context.Background(), "eip155:84532", usdc.Address.Hex())
	require.NoError(t, err)
	return paidState{balance: s.payerBalance(t), settlements: len(settled), opened: outboxLength(t, s)}
}

func (s *stack) payFeeWith(t *testing.T, orch, feeID, payment string) reply {
	t.Helper()
	return s.do(t, http.MethodPost, "/api/fees/"+feeID+"/x402", orch, "", nil, x402.HeaderPaymentSignature, payment)
}

// One x402 payment pays one fee: presented again for another fee of the
// same amount, in the same tenant or another, it is refused and opens
// nothing, charges nothing.
func TestOnePaymentPaysOneFee(t *testing.T) {
	s := newStack(t)
	first := readyToOpen(t, s)
	sameTenant := readyToOpen(t, s)
	otherTenant := func(r *auth.MintRequest) { r.Tenant = "tenant-other" }
	otherOrch, otherCred := authtest.Mint(t, s.credentials, auth.RolePlatformOrchestrator, otherTenant)
	elsewhere := readyToOpenAs(t, s, otherOrch, otherCred.PublicID, otherTenant)

	offer := s.checkout(t, first.FeeID)
	require.Equal(t, offer, s.checkout(t, sameTenant.FeeID), "same amount, same requirements")
	require.Equal(t, offer, s.checkoutAs(t, otherOrch, elsewhere.FeeID))
	payment := s.payment(t, offer)
	require.Equal(t, http.StatusCreated, s.payFeeWith(t, s.orchestrator, first.FeeID, payment).status)
	before := s.paidState(t)

	for _, tc := range []struct {
		name, orch, feeID string
	}{
		{"another draft of the tenant", s.orchestrator, sameTenant.FeeID},
		{"a draft of another tenant", otherOrch, elsewhere.FeeID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := s.payFeeWith(t, tc.orch, tc.feeID, payment)
			require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
			require.Equal(t, "payment_already_used", rep.code)
			require.Equal(t, before, s.paidState(t), "nothing charged, nothing opened")
			fee := s.do(t, http.MethodGet, "/api/fees/"+tc.feeID, tc.orch, "", nil)
			require.Contains(t, string(fee.body), `"status":"quoted"`)
		})
	}
	// The fee it paid still answers the payer's retry.
	require.Equal(t, http.StatusOK, s.payFeeWith(t, s.orchestrator, first.FeeID, payment).status)
}

// Readiness and filings share one Redis and one settlement journal: a
// payment that bought a readiness report pays no fee, and a payment that
// paid a fee buys no report.
func TestPaymentUsedOnAnotherRouteIsRefused(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	d := readyToOpen(t, s)
	offer := s.checkout(t, d.FeeID)
	// Two payments of the fee's amount are settled below.
	require.NoError(t, s.ledger.Fund(ctx, offer.Network, offer.Asset, crypto.PubkeyToAddress(s.payer.PublicKey).Hex(), 1000_000_000))
	// The readiness service's journal, as it claims a report's payment.
	reports, err := journal.New(journal.Config{Owner: "readiness", Lease: 30 * time.Second, FulfilledOnSettle: true}, s.rdb, s.facClient, quiet())
	require.NoError(t, err)
	sign := func() x402.PaymentPayload {
		p, err := x402.NewExactPayment(s.payer, offer, time.Now(), rand.Reader)
		require.NoError(t, err)
		return p
	}

	// The report first, then the fee.
	reportPaid := sign()
	_, err = reports.Pay(ctx, journal.Purchase{Resource: "/api/x402/dispute-readiness", Fingerprint: "report-body", Payment: reportPaid, Offer: offer})
	require.NoError(t, err)
	before := s.paidState(t)
	encoded, err := x402.EncodeHeader(reportPaid)
	require.NoError(t, err)
	rep := s.payFeeWith(t, s.orchestrator, d.FeeID, encoded)
	require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
	require.Equal(t, "payment_already_used", rep.code)
	require.Equal(t, before, s.paidState(t))

	// The fee first, then the report.
	feePaid := sign()
	encoded, err = x402.EncodeHeader(feePaid)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, s.payFeeWith(t, s.orchestrator, d.FeeID, encoded).status)
	before = s.paidState(t)
	_, err = reports.Pay(ctx, journal.Purchase{Resource: "/api/x402/dispute-readiness", Fingerprint: "report-body", Payment: feePaid, Offer: offer})
	require.ErrorIs(t, err, journal.ErrAlreadyUsed)
	require.Equal(t, before, s.paidState(t))
}

// Twenty presentations of one payment to twenty fees at once: one opens
// its case, one settlement is made.
func TestConcurrentPresentationsOfOnePaymentOpenOneCase(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		s := newStackOn(t, rdb)
		const fees = 20
		drafts := make([]feeDraft, fees)
		for i := range drafts {
			drafts[i] = readyToOpen(t, s)
		}
		offer := s.checkout(t, drafts[0].FeeID)
		payment := s.payment(t, offer)
		before := s.paidState(t)

		statuses := make([]int, fees)
		codes := make([]string, fees)
		var wg sync.WaitGroup
		for i, d := range drafts {
			wg.Go(func() {
				rep := s.payFeeWith(t, s.orchestrator, d.FeeID, payment)
				statuses[i], codes[i] = rep.status, rep.code
			})
		}
		wg.Wait()
		created := 0
		for i := range statuses {
			switch statuses[i] {
			case http.StatusCreated:
				created++
			case http.StatusConflict:
				require.Contains(t, []string{"payment_already_used", "payment_in_progress"}, codes[i])
			default:
				t.Fatalf("presentation %d: %d %s", i, statuses[i], codes[i])
			}
		}
		require.Equal(t, 1, created, "exactly one opening")
		after := s.paidState(t)
		require.Equal(t, before.settlements+1, after.settlements, "exactly one settlement in the ledger")
		require.Equal(t, before.balance-600_000_000, after.balance, "charged once")
		require.Equal(t, before.opened+1, after.opened, "one case-opened event")
	})
}

// The resource URL a payer is asked to sign for is the configured one,
// whatever Host or X-Forwarded-* headers the request brings.
func TestForgedHostDoesNotReachTheFeeChallenge(t *testing.T) {
	s := newStack(t)
	d := readyToOpen(t, s)
	forged := []string{"Host", "attacker.example", "X-Forwarded-Host", "attacker.example", "X-Forwarded-Proto", "https"}
	unpaid := s.do(t, http.MethodPost, "/api/fees/"+d.FeeID+"/x402", s.orchestrator, "", nil, forged...)
	require.Equal(t, http.StatusPaymentRequired, unpaid.status)
	checkout := s.do(t, http.MethodPost, "/api/fees/"+d.FeeID+"/checkout", s.orchestrator, newKey(), map[string]any{}, forged...)
	require.Equal(t, http.StatusOK, checkout.status)
	decoded, err := base64.StdEncoding.DecodeString(unpaid.header.Get(x402.HeaderPaymentRequired))
	require.NoError(t, err)
	for _, raw := range []string{string(unpaid.body), string(checkout.body), string(decoded)} {
		require.NotContains(t, raw, "attacker.example")
	}
	var pr x402.PaymentRequired
	require.NoError(t, json.Unmarshal(unpaid.body, &pr))
	require.Equal(t, publicBase+"/api/fees/"+d.FeeID+"/x402", pr.Resource.URL)
}

// Two PAYMENT-SIGNATURE headers are refused whole: whichever copy a server
// read, one payment could be verified and another settled.
func TestTwoPaymentSignaturesAreRefused(t *testing.T) {
	s := newStack(t)
	d := readyToOpen(t, s)
	offer := s.checkout(t, d.FeeID)
	before := s.paidState(t)
	rep := s.do(t, http.MethodPost, "/api/fees/"+d.FeeID+"/x402", s.orchestrator, "", nil,
		x402.HeaderPaymentSignature, s.payment(t, offer), x402.HeaderPaymentSignature, s.payment(t, offer))
	require.Equal(t, http.StatusBadRequest, rep.status, string(rep.body))
	require.Equal(t, "invalid_payload", rep.code)
	require.Equal(t, before, s.paidState(t))
}

// A live fee is paid with real money only: it offers Base, and a Base
// Sepolia payment (test tokens anyone can mint) is refused.
func TestLiveFeeRefusesATestNetworkPayment(t *testing.T) {
	s := newStack(t)
	live := func(r *auth.MintRequest) { r.Environment = auth.Live }
	orch, cred := authtest.Mint(t, s.credentials, auth.RolePlatformOrchestrator, live)
	d := readyToOpenAs(t, s, orch, cred.PublicID, live)

	rep := s.do(t, http.MethodPost, "/api/fees/"+d.FeeID+"/checkout", orch, newKey(), map[string]any{})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	var intent struct {
		Data struct {
			X402 x402.PaymentRequired `json:"x402"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rep.body, &intent))
	require.NotEmpty(t, intent.Data.X402.Accepts)
	for _, o := range intent.Data.X402.Accepts {
		require.Equal(t, "eip155:8453", o.Network, "live offers no test network")
	}

	sepolia, _ := x402.USDC("eip155:84532")
	testOffer := intent.Data.X402.Accepts[0]
	testOffer.Network, testOffer.Asset = sepolia.Network, sepolia.Address.Hex()
	testOffer.Extra.Name, testOffer.Extra.Version = sepolia.Name, sepolia.Version
	before := s.paidState(t)
	paid := s.payFeeWith(t, orch, d.FeeID, s.payment(t, testOffer))
	require.Equal(t, http.StatusPaymentRequired, paid.status, string(paid.body))
	var pr x402.PaymentRequired
	require.NoError(t, json.Unmarshal(paid.body, &pr))
	require.Equal(t, x402.ReasonInvalidNetwork, pr.Error)
	require.Equal(t, before, s.paidState(t), "nothing settled, nothing opened")
}
