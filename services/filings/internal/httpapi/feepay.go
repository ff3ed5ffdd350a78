package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
	"github.com/pcourt/pcourt/services/filings/internal/store"
)

// FeePayments configures paying fees with x402.
type FeePayments struct {
	PayTo string // receives fees; empty switches x402 checkout off
	// Networks are the CAIP-2 networks offered, USDC on each, by the
	// environment of the draft (sandbox, live): live offers and accepts
	// main networks only, sandbox test networks only.
	Networks          map[string][]string
	MaxTimeoutSeconds int
	// PublicBase is the public origin of the API, the only source of the
	// fee's resource URL.
	PublicBase x402.PublicBase
}

// FeeOwner is the filings service's name in the x402 settlement journal.
const FeeOwner = "filings"

// Problem codes of fee checkout and payment; the codes shared by every x402
// resource (invalid_payload, payment_already_used, payment_in_progress,
// awaiting_payment_reconciliation, ...) are the journal's.
var (
	CheckoutUnavailable = problem.Code{Name: "fee_checkout_unavailable", Status: http.StatusServiceUnavailable, Title: "Fee checkout unavailable"}
	InvalidCheckout     = problem.Code{Name: "invalid_checkout", Status: http.StatusBadRequest, Title: "Invalid checkout"}
	OtherFeePayment     = problem.Code{Name: "fee_payment_in_progress", Status: http.StatusConflict, Title: "Another payment of this fee in progress"}
)

// Errors of binding a payment to a fee.
var (
	errOtherFeePayment = errors.New("another payment of this fee is being settled")
	errFeePaidByOther  = errors.New("the fee was paid by another payment")
)

// usdcUnitsPerCent converts USD minor units to USDC atomic units (6 decimals).
const usdcUnitsPerCent = 10_000

// committedOffers are the x402 requirements a fee is paid with, fixed when
// the fee is quoted so that every checkout returns the same intent.
func (f FeePayments) committedOffers(fee draft.Fee, environment string) ([]x402.PaymentRequirements, error) {
	if f.PayTo == "" || fee.AmountMinor <= 0 {
		return nil, nil
	}
	amount := strconv.FormatInt(fee.AmountMinor*usdcUnitsPerCent, 10)
	var offers []x402.PaymentRequirements
	for _, n := range f.Networks[environment] {
		if !x402.NetworkAllowed(environment, n) {
			return nil, fmt.Errorf("network %q is not offered in %s", n, environment)
		}
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
	c.Header("Cache-Control", "no-store") // a mutation's answer, naming a payment intent
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
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, gin.H{"data": gin.H{
		"feeId": f.FeeID, "provider": "x402", "currency": f.Currency, "amountMinor": f.AmountMinor, "status": f.Status,
		"paymentPath": "/api/fees/" + f.FeeID + "/x402",
		"x402":        h.paymentRequired(f.FeeID, offers, ""),
	}, "requestId": requestid.Get(c)})
}

// payableFee resolves the path's fee to its draft, checks the caller may pay
// it (authorizePayer), and returns its committed offers.
func (h *handlers) payableFee(c *gin.Context, cred auth.Credential) (store.FeeIndex, draft.Draft, []x402.PaymentRequirements, error) {
	feeID := c.Param("feeId")
	idx, err := h.drafts.Fee(c.Request.Context(), feeID)
	if errors.Is(err, store.ErrNotFound) {
		return store.FeeIndex{}, draft.Draft{}, nil, problem.Newf(FeeNotFound, "No fee %s.", feeID)
	}
	if err != nil {
		return store.FeeIndex{}, draft.Draft{}, nil, err
	}
	d, err := h.load(c.Request.Context(), idx.DraftID, cred)
	if errors.Is(err, draft.ErrDraftNotFound) {
		return store.FeeIndex{}, draft.Draft{}, nil, problem.Newf(FeeNotFound, "No fee %s.", feeID)
	}
	if err != nil {
		return store.FeeIndex{}, draft.Draft{}, nil, err
	}
	if err := h.authorizePayer(c, cred, d); err != nil {
		return store.FeeIndex{}, draft.Draft{}, nil, err
	}
	var committed, offers []x402.PaymentRequirements
	if len(idx.Offers) > 0 {
		if err := json.Unmarshal(idx.Offers, &committed); err != nil {
			return store.FeeIndex{}, draft.Draft{}, nil, fmt.Errorf("decoding the offers of fee %s: %w", feeID, err)
		}
	}
	// A fee quoted before networks were split by environment may carry
	// offers of the other kind; they are neither offered nor accepted.
	for _, o := range committed {
		if x402.NetworkAllowed(d.Environment(), o.Network) {
			offers = append(offers, o)
		}
	}
	if len(offers) == 0 || h.payments == nil {
		return store.FeeIndex{}, draft.Draft{}, nil, problem.New(CheckoutUnavailable, "This fee cannot be paid with x402 here; it is invoiced.")
	}
	return idx, d, offers, nil
}

// feeResource is the path of a fee's x402 resource: what the journal
// claims its payments for.
func feeResource(feeID string) string { return "/api/fees/" + feeID + "/x402" }

func (h *handlers) paymentRequired(feeID string, offers []x402.PaymentRequirements, reason string) x402.PaymentRequired {
	return x402.PaymentRequired{
		X402Version: x402.Version,
		Error:       reason,
		Resource:    x402.ResourceInfo{URL: h.fees.PublicBase.URL(feeResource(feeID)), Description: "Filing fee " + feeID, MimeType: "application/json"},
		Accepts:     offers,
		Extensions:  x402.Extensions{},
	}
}

// payFee is the x402 resource of a fee: without PAYMENT-SIGNATURE it
// answers 402 with the committed requirements; with one it pays the fee
// through the settlement journal (claim the payment globally, verify it,
// bind it to the fee, settle) and marks the fee paid, which opens a draft
// that was ready_to_open.
func (h *handlers) payFee(c *gin.Context) {
	// The 201 shows the case's capabilities once; nothing here may be cached.
	c.Header("Cache-Control", "no-store")
	cred, _ := auth.CredentialFrom(c.Request.Context())
	idx, d, offers, err := h.payableFee(c, cred)
	if err != nil {
		_ = c.Error(err)
		return
	}
	payment, present, err := x402.PaymentSignature(c.Request.Header)
	if err != nil {
		_ = c.Error(err)
		return
	}
	feeID := d.Fee().FeeID
	if !present {
		if d.Fee().Status == draft.FeePaid {
			_ = c.Error(&draft.RefusalError{Code: draft.CodeFeeAlreadyPaid, Detail: "fee " + feeID + " is paid"})
			return
		}
		h.challenge(c, feeID, offers, "payment_required", nil)
		return
	}
	offer, err := x402.MatchOffer(offers, payment.Accepted)
	if err != nil {
		h.challenge(c, feeID, offers, mismatchReason(offers, payment.Accepted), nil)
		return
	}
	paymentID := journal.ID(offer, payment)
	// A fee that another payment holds answers before this one is even
	// verified: nothing of the new payment is looked at or claimed.
	err = h.feeOpenTo(c.Request.Context(), d, paymentID)
	var out journal.Outcome
	if err == nil {
		out, err = h.payments.Pay(c.Request.Context(), journal.Purchase{
			Resource: feeResource(feeID), Ref: idx.DraftID, Payment: payment, Offer: offer,
			Prepare: func(ctx context.Context) ([]byte, error) {
				if d.Fee().Status == draft.FeePaid {
					return nil, errFeePaidByOther
				}
				return nil, h.bindFeePayment(ctx, idx.DraftID, paymentID)
			},
		})
	}
	var refused *journal.Refusal
	switch {
	case errors.As(err, &refused):
		h.challenge(c, feeID, offers, refused.Reason, refused.Settlement)
		return
	case errors.Is(err, errOtherFeePayment):
		_ = c.Error(problem.New(OtherFeePayment, "Another payment of this fee is being settled; nothing was charged.").WithHeader("Retry-After", "5"))
		return
	case errors.Is(err, errFeePaidByOther):
		_ = c.Error(&draft.RefusalError{Code: draft.CodeFeeAlreadyPaid, Detail: "fee " + feeID + " was paid by another payment; nothing was charged"})
		return
	case err != nil:
		_ = c.Error(err)
		return
	}
	if encoded, err := x402.EncodeHeader(out.Settlement); err == nil {
		c.Header(x402.HeaderPaymentResponse, encoded)
	}
	h.applyFeePaid(c, cred, idx.DraftID, out.ID)
}

// maxBindAttempts bounds the optimistic retries of binding a payment to a
// fee while other payments of it race.
const maxBindAttempts = 16

// bindFeePayment makes paymentID the one payment of the draft's fee, unless
// another payment holds it and may still move money (or did).
func (h *handlers) bindFeePayment(ctx context.Context, draftID, paymentID string) error {
	for range maxBindAttempts {
		current, err := h.drafts.FeePaymentOf(ctx, draftID)
		if err != nil {
			return err
		}
		if err := h.otherPaymentHolds(ctx, current, paymentID); err != nil {
			return err
		}
		bound, err := h.drafts.BindFeePayment(ctx, draftID, current, paymentID)
		if err != nil || bound {
			return err
		}
	}
	return errOtherFeePayment
}

// feeOpenTo tells whether paymentID may still pay the draft's fee: the fee
// is unpaid and no other payment holds it, or paymentID is the one that
// does (a retry).
func (h *handlers) feeOpenTo(ctx context.Context, d draft.Draft, paymentID string) error {
	current, err := h.drafts.FeePaymentOf(ctx, d.ID())
	if err != nil {
		return err
	}
	if d.Fee().Status == draft.FeePaid && current != paymentID {
		return errFeePaidByOther
	}
	return h.otherPaymentHolds(ctx, current, paymentID)
}

// otherPaymentHolds refuses paymentID while current, another payment bound
// to the fee, settled or may still move money.
func (h *handlers) otherPaymentHolds(ctx context.Context, current, paymentID string) error {
	if current == "" || current == paymentID {
		return nil
	}
	standing, err := h.payments.Standing(ctx, current)
	if err != nil {
		return err
	}
	switch standing {
	case journal.Settled:
		return errFeePaidByOther
	case journal.Verifying, journal.Settling, journal.Pending:
		return errOtherFeePayment
	}
	// Absent, refused or abandoned: it moved nothing and never will.
	return nil
}

// applyFeePaid marks the fee paid on the draft (opening a ready_to_open
// draft: 201 with the case, its secrets shown this once), or, when it
// already shows paid, answers the fee's state.
func (h *handlers) applyFeePaid(c *gin.Context, cred auth.Credential, draftID, paymentID string) {
	d, err := h.load(c.Request.Context(), draftID, cred)
	if err != nil {
		_ = c.Error(err)
		return
	}
	if d.Fee().Status != draft.FeePaid {
		h.apply(c, draftID, cred, draft.RouteV2, func(d draft.Draft) (draft.Outcome, error) { return d.WithFeePaid(h.now()) })
		if c.Writer.Status() >= 400 || len(c.Errors) > 0 {
			return
		}
		if err := h.payments.Fulfilled(context.WithoutCancel(c.Request.Context()), paymentID); err != nil {
			h.logger.ErrorContext(c.Request.Context(), "marking the fee applied failed; the reconciler retries it", "draft", draftID, "err", err)
		}
		return
	}
	if err := h.payments.Fulfilled(c.Request.Context(), paymentID); err != nil {
		_ = c.Error(err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"data": h.draftView(d, draft.RouteV2), "requestId": requestid.Get(c)})
}

func (h *handlers) challenge(c *gin.Context, feeID string, offers []x402.PaymentRequirements, reason string, settlement *x402.SettleResponse) {
	pr := h.paymentRequired(feeID, offers, reason)
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

// mismatchReason names what made a payment's accepted requirements match
// none of the fee's offers, in the specification's reason vocabulary: a
// network the fee's environment does not offer is invalid_network.
func mismatchReason(offers []x402.PaymentRequirements, accepted x402.PaymentRequirements) string {
	for _, o := range offers {
		if o.Network == accepted.Network {
			return x402.ReasonInvalidPaymentRequirements
		}
	}
	return x402.ReasonInvalidNetwork
}
