package httpapi_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/x402"
)

// feeGated is a claimant-initiated draft whose fee (USD 600) is collected
// before the case opens.
func feeGated() map[string]any {
	body := twoParty()
	body["intakeMode"] = "claimant_initiated"
	body["claim"] = map[string]any{"amountInDisputeMinor": 2_000_000, "remedy": "money_obligation", "summary": "A wholesale order was paid and never shipped."}
	return body
}

type feeDraft struct {
	draftData
	FeeID string
}

// readyToOpen prepares a fee-gated draft and confirms it completely.
func readyToOpen(t *testing.T, s *stack) feeDraft {
	t.Helper()
	return readyToOpenAs(t, s, s.orchestrator, s.orchID)
}

// readyToOpenAs is readyToOpen for the orchestrator credential orch (public
// id orchID), with a respondent agent of its tenant and environment minted
// with the same options.
func readyToOpenAs(t *testing.T, s *stack, orch, orchID string, opts ...func(*auth.MintRequest)) feeDraft {
	t.Helper()
	rep := s.do(t, http.MethodPost, "/api/v2/case-drafts", orch, newKey(), feeGated())
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	var env struct {
		Data struct {
			draftData
			Fee struct {
				FeeID      string `json:"feeId"`
				Collection string `json:"collection"`
			} `json:"fee"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rep.body, &env))
	require.Equal(t, "collect_before_opening", env.Data.Fee.Collection)
	d := env.Data.draftData
	require.Equal(t, http.StatusAccepted, s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", orch, newKey(),
		confirmation(d, "p-claimant", orchID, "org-acme")).status)
	respondent, cred := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, append(opts, authtest.WithAgent("agent-bob-7"))...)
	require.NoError(t, s.credentials.Grant(context.Background(), auth.Membership{Resource: "draft:" + d.DraftID, Side: auth.Respondent, Subject: auth.CredentialSubject(cred.PublicID), ExpiresAt: time.Now().Add(time.Hour)}))
	last := s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", respondent, newKey(),
		confirmation(d, "p-respondent", "agent-bob-7", "agent-bob"))
	require.Equal(t, http.StatusAccepted, last.status, "the last confirmation waits for the fee: %s", last.body)
	require.Contains(t, string(last.body), `"status":"ready_to_open"`)
	return feeDraft{draftData: d, FeeID: env.Data.Fee.FeeID}
}

func (s *stack) checkout(t *testing.T, feeID string) x402.PaymentRequirements {
	t.Helper()
	return s.checkoutAs(t, s.orchestrator, feeID)
}

func (s *stack) checkoutAs(t *testing.T, orch, feeID string) x402.PaymentRequirements {
	t.Helper()
	rep := s.do(t, http.MethodPost, "/api/fees/"+feeID+"/checkout", orch, newKey(), map[string]any{})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Equal(t, "no-store", rep.header.Get("Cache-Control"))
	var intent struct {
		Data struct {
			Provider string               `json:"provider"`
			X402     x402.PaymentRequired `json:"x402"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rep.body, &intent))
	require.Equal(t, "x402", intent.Data.Provider)
	require.Len(t, intent.Data.X402.Accepts, 1)
	return intent.Data.X402.Accepts[0]
}

func (s *stack) payment(t *testing.T, offer x402.PaymentRequirements) string {
	t.Helper()
	p, err := x402.NewExactPayment(s.payer, offer, time.Now(), rand.Reader)
	require.NoError(t, err)
	h, err := x402.EncodeHeader(p)
	require.NoError(t, err)
	return h
}

func (s *stack) payerBalance(t *testing.T) uint64 {
	usdc, _ := x402.USDC("eip155:84532")
	b, err := s.ledger.Balance(context.Background(), "eip155:84532", usdc.Address.Hex(), crypto.PubkeyToAddress(s.payer.PublicKey).Hex())
	require.NoError(t, err)
	return b
}

func TestPayingTheFeeOpensAReadyToOpenDraft(t *testing.T) {
	s := newStack(t)
	d := readyToOpen(t, s)
	require.Zero(t, outboxLength(t, s), "not opened while the fee is unpaid")

	offer := s.checkout(t, d.FeeID)
	require.Equal(t, "600000000", offer.Amount, "USD 600.00 in USDC atomic units")
	require.Equal(t, offer, s.checkout(t, d.FeeID), "a retry returns the same provider intent")

	unpaid := s.do(t, http.MethodPost, "/api/fees/"+d.FeeID+"/x402", s.orchestrator, "", nil)
	require.Equal(t, http.StatusPaymentRequired, unpaid.status)

	before := s.payerBalance(t)
	payment := s.payment(t, offer)
	paid := s.do(t, http.MethodPost, "/api/fees/"+d.FeeID+"/x402", s.orchestrator, "", nil, x402.HeaderPaymentSignature, payment)
	require.Equal(t, http.StatusCreated, paid.status, string(paid.body))
	require.NotEmpty(t, paid.header.Get(x402.HeaderPaymentResponse))
	require.Equal(t, "no-store", paid.header.Get("Cache-Control"), "the 201 carries showOnce")
	var o opened
	require.NoError(t, json.Unmarshal(paid.body, &o))
	require.Equal(t, d.ReservedCaseID, o.Data.CaseID)
	require.NotNil(t, o.Data.ShowOnce, "the payer who opened the case gets the capabilities once")
	require.Equal(t, before-600_000_000, s.payerBalance(t))
	require.Equal(t, int64(1), outboxLength(t, s))

	again := s.do(t, http.MethodPost, "/api/fees/"+d.FeeID+"/x402", s.orchestrator, "", nil, x402.HeaderPaymentSignature, payment)
	require.Equal(t, http.StatusOK, again.status, "a retry of the same payment answers the fee's state: %s", again.body)
	require.NotContains(t, string(again.body), "showOnce")
	require.Equal(t, before-600_000_000, s.payerBalance(t), "charged once")

	other := s.do(t, http.MethodPost, "/api/fees/"+d.FeeID+"/x402", s.orchestrator, "", nil, x402.HeaderPaymentSignature, s.payment(t, offer))
	require.Equal(t, http.StatusConflict, other.status)
	require.Equal(t, "fee_already_paid", other.code)
	require.Equal(t, before-600_000_000, s.payerBalance(t), "a second payment is never settled")

	fee := s.do(t, http.MethodGet, "/api/fees/"+d.FeeID, s.orchestrator, "", nil)
	require.Contains(t, string(fee.body), `"status":"paid"`)
	require.Contains(t, string(fee.body), `"caseStatus":"open"`)
}

func TestCheckoutRefusesATargetInTheBody(t *testing.T) {
	s := newStack(t)
	d := readyToOpen(t, s)
	for _, body := range []map[string]any{{"caseId": d.ReservedCaseID}, {"feeRecordId": d.FeeID}, {"promotionCode": "FREE"}, {"priceSelection": "discount"}} {
		rep := s.do(t, http.MethodPost, "/api/fees/"+d.FeeID+"/checkout", s.orchestrator, newKey(), body)
		require.Equal(t, http.StatusBadRequest, rep.status, "%v", body)
		require.Equal(t, "invalid_checkout", rep.code)
	}
}

// The facilitator settles but the answer is lost: the payer is told to come
// back; the reconciler learns the outcome and opens the case; the payer's
// retry finds the fee paid — charged once.
func TestLostSettlementIsReconciledAndOpensTheCase(t *testing.T) {
	s := newStack(t)
	d := readyToOpen(t, s)
	offer := s.checkout(t, d.FeeID)
	before := s.payerBalance(t)
	payment := s.payment(t, offer)

	s.loseSettle.Store(true)
	rep := s.do(t, http.MethodPost, "/api/fees/"+d.FeeID+"/x402", s.orchestrator, "", nil, x402.HeaderPaymentSignature, payment)
	require.Equal(t, http.StatusServiceUnavailable, rep.status, string(rep.body))
	require.Equal(t, "awaiting_payment_reconciliation", rep.code)
	other := s.do(t, http.MethodPost, "/api/fees/"+d.FeeID+"/x402", s.orchestrator, "", nil, x402.HeaderPaymentSignature, s.payment(t, offer))
	require.Equal(t, http.StatusConflict, other.status, "no second payment while the first is unresolved")
	require.Equal(t, "fee_payment_in_progress", other.code)

	s.loseSettle.Store(false)
	n, err := s.reconciler.Once(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, int64(1), outboxLength(t, s), "the reconciler opened the case")
	require.Equal(t, before-600_000_000, s.payerBalance(t))

	retry := s.do(t, http.MethodPost, "/api/fees/"+d.FeeID+"/x402", s.orchestrator, "", nil, x402.HeaderPaymentSignature, payment)
	require.Equal(t, http.StatusOK, retry.status, string(retry.body))
	require.Contains(t, string(retry.body), `"status":"opened"`)
	require.Equal(t, before-600_000_000, s.payerBalance(t), "charged once")
}

func TestRefusedFeePaymentLeavesTheFeeOpenToAnotherPayment(t *testing.T) {
	s := newStack(t)
	d := readyToOpen(t, s)
	offer := s.checkout(t, d.FeeID)
	poor, err := crypto.GenerateKey()
	require.NoError(t, err)
	p, err := x402.NewExactPayment(poor, offer, time.Now(), rand.Reader)
	require.NoError(t, err)
	h, _ := x402.EncodeHeader(p)

	rep := s.do(t, http.MethodPost, "/api/fees/"+d.FeeID+"/x402", s.orchestrator, "", nil, x402.HeaderPaymentSignature, h)
	require.Equal(t, http.StatusPaymentRequired, rep.status, string(rep.body))
	var pr x402.PaymentRequired
	require.NoError(t, json.Unmarshal(rep.body, &pr))
	require.Equal(t, x402.ReasonInsufficientFunds, pr.Error, "refused at verification, before anything was settled")
	require.Empty(t, rep.header.Get(x402.HeaderPaymentResponse), "no settlement was attempted")
	require.Zero(t, outboxLength(t, s))

	ok := s.do(t, http.MethodPost, "/api/fees/"+d.FeeID+"/x402", s.orchestrator, "", nil, x402.HeaderPaymentSignature, s.payment(t, offer))
	require.Equal(t, http.StatusCreated, ok.status, string(ok.body))
}

// The card checkout alias names its fee in the body and answers what its
// successor, POST /api/fees/{feeId}/checkout, answers: the provider intent
// (x402: no card processor is integrated, and none is faked). Another
// partner's or tenant's fee does not exist for it.
func TestTheCardCheckoutAliasAnswersItsSuccessorsIntent(t *testing.T) {
	s := newStack(t)
	d := readyToOpen(t, s)
	canonical := s.do(t, http.MethodPost, "/api/fees/"+d.FeeID+"/checkout", s.orchestrator, newKey(), nil)
	require.Equal(t, http.StatusOK, canonical.status, string(canonical.body))
	alias := s.do(t, http.MethodPost, "/api/v2/fees/processor/checkout", s.orchestrator, newKey(), map[string]any{"feeId": d.FeeID, "priceSelection": "standard"})
	require.Equal(t, http.StatusOK, alias.status, string(alias.body))
	var a, b struct {
		Data json.RawMessage `json:"data"`
	}
	require.NoError(t, json.Unmarshal(canonical.body, &a))
	require.NoError(t, json.Unmarshal(alias.body, &b))
	require.JSONEq(t, string(a.Data), string(b.Data))

	for name, body := range map[string]map[string]any{
		"no fee":          {"priceSelection": "standard"},
		"a promotion":     {"feeId": d.FeeID, "promotionCode": "FREE"},
		"another pricing": {"feeId": d.FeeID, "priceSelection": "discount"},
	} {
		rep := s.do(t, http.MethodPost, "/api/v2/fees/processor/checkout", s.orchestrator, newKey(), body)
		require.Equal(t, http.StatusBadRequest, rep.status, name)
		require.Equal(t, "invalid_checkout", rep.code, name)
	}
	for _, token := range []string{s.partnerC, s.otherTenant} {
		rep := s.do(t, http.MethodPost, "/api/v2/fees/processor/checkout", token, newKey(), map[string]any{"feeId": d.FeeID})
		require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
		require.Equal(t, "fee_not_found", rep.code)
	}
}
