package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
	"github.com/pcourt/pcourt/services/filings/internal/store"
)

// Facilitator settles x402 payments. Settle must answer a repeat of a
// settled authorization with the original outcome.
type Facilitator interface {
	Settle(ctx context.Context, req x402.SettleRequest) (x402.SettleResponse, error)
}

// FeePayments configures paying fees with x402.
type FeePayments struct {
	PayTo             string   // receives fees; empty switches x402 checkout off
	Networks          []string // CAIP-2 networks offered, USDC on each
	MaxTimeoutSeconds int
	Facilitator       Facilitator
	// Lease bounds one request's hold on a fee payment; it must exceed the
	// facilitator timeout.
	Lease time.Duration
}

// Problem codes of fee checkout and payment.
var (
	CheckoutUnavailable    = problem.Code{Name: "fee_checkout_unavailable", Status: http.StatusServiceUnavailable, Title: "Fee checkout unavailable"}
	InvalidCheckout        = problem.Code{Name: "invalid_checkout", Status: http.StatusBadRequest, Title: "Invalid checkout"}
	InvalidPayload         = problem.Code{Name: "invalid_payload", Status: http.StatusBadRequest, Title: "Invalid payment payload"}
	FeePaymentInProgress   = problem.Code{Name: "payment_in_progress", Status: http.StatusConflict, Title: "Payment in progress"}
	OtherFeePayment        = problem.Code{Name: "fee_payment_in_progress", Status: http.StatusConflict, Title: "Another payment of this fee in progress"}
	AwaitingReconciliation = problem.Code{Name: "awaiting_payment_reconciliation", Status: http.StatusServiceUnavailable, Title: "Awaiting payment reconciliation"}
)

// usdcUnitsPerCent converts USD minor units to USDC atomic units (6 decimals).
const usdcUnitsPerCent = 10_000

// committedOffers are the x402 requirements a fee is paid with, fixed when
// the fee is quoted so that every checkout returns the same intent.
func (f FeePayments) committedOffers(fee draft.Fee) ([]x402.PaymentRequirements, error) {
	if f.PayTo == "" || fee.AmountMinor <= 0 {
		return nil, nil
	}
	amount := strconv.FormatInt(fee.AmountMinor*usdcUnitsPerCent, 10)
	var offers []x402.PaymentRequirements
	for _, n := range f.Networks {
		asset, ok := x402.USDC(n)
		if !ok {
			return nil, fmt.Errorf("network %q has no known USDC", n)
		}
		o, err := asset.Offer(amount, common.HexToAddress(f.PayTo), f.MaxTimeoutSeconds)
		if err != nil {
			return nil, err
		}
		offers = append(offers, o)
	}
	return offers, nil
}

// checkoutBody carries only the choices a payer has; the fee is the path's.
type checkoutBody struct {
	PromotionCode  string `json:"promotionCode,omitempty"`
	PriceSelection string `json:"priceSelection,omitempty"`
}

// checkout answers the provider intent of a fee: the x402 requirements
// committed when it was quoted. A retry returns the same intent.
func (h *handlers) checkout(c *gin.Context) {
	body, err := httpserver.ReadBody(c)
	if err != nil {
		_ = c.Error(err)
		return
	}
	var fields map[string]json.RawMessage
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := httpserver.DecodeStrict(body, &fields); err != nil {
			_ = c.Error(err)
			return
		}
	}
	for _, named := range []string{"caseId", "feeRecordId", "feeId"} {
		if _, ok := fields[named]; ok {
			_ = c.Error(problem.Newf(InvalidCheckout, "The fee is named by the path; %s is refused in the body.", named))
			return
		}
	}
	var b checkoutBody
	if len(fields) > 0 {
		if err := httpserver.DecodeStrict(body, &b); err != nil {
			_ = c.Error(err)
			return
		}
	}
	if b.PromotionCode != "" {
		_ = c.Error(problem.Newf(InvalidCheckout, "Promotion code %q is not valid for this fee.", b.PromotionCode))
		return
	}
	if b.PriceSelection != "" && b.PriceSelection != "standard" {
		_ = c.Error(problem.Newf(InvalidCheckout, "priceSelection must be standard; %q is not offered.", b.PriceSelection))
		return
	}
	cred, _ := auth.CredentialFrom(c.Request.Context())
	_, d, offers, err := h.payableFee(c, cred)
	if err != nil {
		_ = c.Error(err)
		return
	}
	f := d.Fee()
	c.JSON(http.StatusOK, gin.H{"data": gin.H{
		"feeId": f.FeeID, "provider": "x402", "currency": f.Currency, "amountMinor": f.AmountMinor, "status": f.Status,
		"paymentPath": "/api/fees/" + f.FeeID + "/x402",
		"x402":        h.paymentRequired(c, f.FeeID, offers, ""),
	}, "requestId": requestid.Get(c)})
}

// payableFee resolves the path's fee to its draft, checks the caller may pay
// it (orchestrators, and agents of the claimant side), and returns its
// committed offers.
func (h *handlers) payableFee(c *gin.Context, cred auth.Credential) (store.FeeIndex, draft.Draft, []x402.PaymentRequirements, error) {
	feeID := c.Param("feeId")
	idx, err := h.drafts.Fee(c.Request.Context(), feeID)
	if errors.Is(err, store.ErrNotFound) {
		return store.FeeIndex{}, draft.Draft{}, nil, problem.Newf(FeeNotFound, "No fee %s.", feeID)
	}
	if err != nil {
		return store.FeeIndex{}, draft.Draft{}, nil, err
	}
	_, d, err := h.load(c.Request.Context(), idx.DraftID, cred)
	if errors.Is(err, draft.ErrDraftNotFound) {
		return store.FeeIndex{}, draft.Draft{}, nil, problem.Newf(FeeNotFound, "No fee %s.", feeID)
	}
	if err != nil {
		return store.FeeIndex{}, draft.Draft{}, nil, err
	}
	if cred.Role != auth.RolePlatformOrchestrator {
		if err := h.credentials.AuthorizeSide(c.Request.Context(), cred, resource(d.ID()), auth.Claimant, "", c.GetHeader(auth.CapabilityHeader)); err != nil {
			return store.FeeIndex{}, draft.Draft{}, nil, err
		}
	}
	var offers []x402.PaymentRequirements
	if len(idx.Offers) > 0 {
		if err := json.Unmarshal(idx.Offers, &offers); err != nil {
			return store.FeeIndex{}, draft.Draft{}, nil, fmt.Errorf("decoding the offers of fee %s: %w", feeID, err)
		}
	}
	if len(offers) == 0 || h.fees.Facilitator == nil {
		return store.FeeIndex{}, draft.Draft{}, nil, problem.New(CheckoutUnavailable, "This fee cannot be paid with x402 here; it is invoiced.")
	}
	return idx, d, offers, nil
}

func (h *handlers) paymentRequired(c *gin.Context, feeID string, offers []x402.PaymentRequirements, reason string) x402.PaymentRequired {
	scheme := "http"
	if c.Request.TLS != nil || c.GetHeader("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return x402.PaymentRequired{
		X402Version: x402.Version,
		Error:       reason,
		Resource:    x402.ResourceInfo{URL: scheme + "://" + c.Request.Host + "/api/fees/" + feeID + "/x402", Description: "Filing fee " + feeID, MimeType: "application/json"},
		Accepts:     offers,
		Extensions:  x402.Extensions{},
	}
}

// payFee is the x402 resource of a fee: without PAYMENT-SIGNATURE it
// answers 402 with the committed requirements; with one it settles the
// payment (at most one payment per fee) and marks the fee paid, which opens
// a draft that was ready_to_open.
func (h *handlers) payFee(c *gin.Context) {
	cred, _ := auth.CredentialFrom(c.Request.Context())
	idx, d, offers, err := h.payableFee(c, cred)
	if err != nil {
		_ = c.Error(err)
		return
	}
	header := c.GetHeader(x402.HeaderPaymentSignature)
	if header == "" {
		if d.Fee().Status == draft.FeePaid {
			_ = c.Error(&draft.RefusalError{Code: draft.CodeFeeAlreadyPaid, Detail: "fee " + d.Fee().FeeID + " is paid"})
			return
		}
		h.challenge(c, d.Fee().FeeID, offers, "payment_required", nil)
		return
	}
	var payment x402.PaymentPayload
	if err := x402.DecodeHeader(header, &payment); err != nil || payment.X402Version != x402.Version {
		_ = c.Error(problem.New(InvalidPayload, "PAYMENT-SIGNATURE is not a base64-encoded x402 v2 payment payload."))
		return
	}
	offer, err := x402.MatchOffer(offers, payment.Accepted)
	if err != nil {
		h.challenge(c, d.Fee().FeeID, offers, x402.ReasonInvalidPaymentRequirements, nil)
		return
	}
	ctx := c.Request.Context()
	offerJSON, _ := json.Marshal(offer)
	payloadJSON, _ := json.Marshal(payment)
	paymentID := paymentIdentity(offer, payment)
	record, claimed, err := h.drafts.ClaimFeePayment(ctx, idx.DraftID, paymentID, offerJSON, payloadJSON, h.fees.Lease)
	switch {
	case errors.Is(err, store.ErrFeePaymentInProgress):
		_ = c.Error(problem.New(FeePaymentInProgress, "This payment is being settled; retry it shortly.").WithHeader("Retry-After", "1"))
		return
	case errors.Is(err, store.ErrOtherFeePayment):
		_ = c.Error(problem.New(OtherFeePayment, "Another payment of this fee is being settled; nothing was charged.").WithHeader("Retry-After", "5"))
		return
	case errors.Is(err, store.ErrFeePaidByOther):
		_ = c.Error(&draft.RefusalError{Code: draft.CodeFeeAlreadyPaid, Detail: "fee " + d.Fee().FeeID + " was paid by another payment; nothing was charged"})
		return
	case err != nil:
		_ = c.Error(err)
		return
	}
	if claimed {
		settlement, err := h.fees.Facilitator.Settle(ctx, x402.SettleRequest{X402Version: x402.Version, PaymentPayload: payment, PaymentRequirements: offer})
		if err != nil {
			// Whether the funds moved is unknown; the reconciler, or this
			// payment's retry, settles the question.
			if perr := h.drafts.MarkFeePaymentPending(context.WithoutCancel(ctx), idx.DraftID, paymentID); perr != nil {
				h.logger.ErrorContext(ctx, "marking fee payment pending failed; the reconciler takes it over after its lease", "draft", idx.DraftID, "err", perr)
			}
			h.logger.WarnContext(ctx, "fee settlement outcome unknown", "draft", idx.DraftID, "err", err)
			_ = c.Error(problem.New(AwaitingReconciliation, "The settlement outcome is not known yet; retry with the same payment.").WithHeader("Retry-After", "5"))
			return
		}
		raw, _ := json.Marshal(settlement)
		if err := h.drafts.RecordFeeSettlement(context.WithoutCancel(ctx), idx.DraftID, paymentID, settlement.Success, raw, settlement.ErrorReason); err != nil {
			_ = c.Error(err)
			return
		}
		record.State, record.Settlement, record.Reason = store.FeeRefused, raw, settlement.ErrorReason
		if settlement.Success {
			record.State = store.FeeSettled
		}
	}
	switch record.State {
	case store.FeePending, store.FeeSettling:
		_ = c.Error(problem.New(AwaitingReconciliation, "The settlement outcome is not known yet; retry with the same payment.").WithHeader("Retry-After", "5"))
	case store.FeeRefused:
		var s x402.SettleResponse
		_ = json.Unmarshal(record.Settlement, &s)
		h.challenge(c, d.Fee().FeeID, offers, record.Reason, &s)
	case store.FeeSettled:
		var s x402.SettleResponse
		_ = json.Unmarshal(record.Settlement, &s)
		if encoded, err := x402.EncodeHeader(s); err == nil {
			c.Header(x402.HeaderPaymentResponse, encoded)
		}
		h.applyFeePaid(c, cred, idx.DraftID, paymentID)
	}
}

// applyFeePaid marks the fee paid on the draft (opening a ready_to_open
// draft: 201 with the case, its secrets shown this once), or, when it
// already shows paid, answers the fee's state.
func (h *handlers) applyFeePaid(c *gin.Context, cred auth.Credential, draftID, paymentID string) {
	_, d, err := h.load(c.Request.Context(), draftID, cred)
	if err != nil {
		_ = c.Error(err)
		return
	}
	if d.Fee().Status != draft.FeePaid {
		h.apply(c, draftID, cred, draft.RouteV2, func(d draft.Draft) (draft.Outcome, error) { return d.WithFeePaid(h.now()) })
		if c.Writer.Status() >= 400 || len(c.Errors) > 0 {
			return
		}
		if err := h.drafts.MarkFeeApplied(context.WithoutCancel(c.Request.Context()), draftID, paymentID); err != nil {
			h.logger.ErrorContext(c.Request.Context(), "marking the fee applied failed; the reconciler retries it", "draft", draftID, "err", err)
		}
		return
	}
	if err := h.drafts.MarkFeeApplied(c.Request.Context(), draftID, paymentID); err != nil {
		_ = c.Error(err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"data": h.draftView(d, draft.RouteV2), "requestId": requestid.Get(c)})
}

func (h *handlers) challenge(c *gin.Context, feeID string, offers []x402.PaymentRequirements, reason string, settlement *x402.SettleResponse) {
	pr := h.paymentRequired(c, feeID, offers, reason)
	encoded, err := x402.EncodeHeader(pr)
	if err != nil {
		_ = c.Error(err)
		return
	}
	if settlement != nil {
		if s, err := x402.EncodeHeader(*settlement); err == nil {
			c.Header(x402.HeaderPaymentResponse, s)
		}
	}
	c.Header(x402.HeaderPaymentRequired, encoded)
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusPaymentRequired, pr)
}

// paymentIdentity names a payment by what makes an EIP-3009 authorization
// unique: network, asset, payer and nonce.
func paymentIdentity(offer x402.PaymentRequirements, p x402.PaymentPayload) string {
	a := p.Payload.Authorization
	sum := sha256.Sum256([]byte(strings.ToLower(offer.Network + "|" + offer.Asset + "|" + a.From + "|" + a.Nonce)))
	return hex.EncodeToString(sum[:])
}
