package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
	"github.com/pcourt/pcourt/services/filings/internal/filing"
)

// Problem codes of fee checkout and payment; the codes shared by every x402
// resource (invalid_payload, payment_already_used, payment_in_progress,
// awaiting_payment_reconciliation, ...) are the journal's.
var (
	CheckoutUnavailable = problem.Code{Name: "fee_checkout_unavailable", Status: http.StatusServiceUnavailable, Title: "Fee checkout unavailable"}
	InvalidCheckout     = problem.Code{Name: "invalid_checkout", Status: http.StatusBadRequest, Title: "Invalid checkout"}
	OtherFeePayment     = problem.Code{Name: "fee_payment_in_progress", Status: http.StatusConflict, Title: "Another payment of this fee in progress"}
)

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
	h.answerCheckout(c, c.Param("feeId"), b)
}

// cardCheckoutBody is the card checkout alias's input: the fee is named in
// the body, which is why its successor cannot be chosen from the path
// alone (spec, "Compatibility windows").
type cardCheckoutBody struct {
	FeeID          string `json:"feeId"`
	PromotionCode  string `json:"promotionCode,omitempty"`
	PriceSelection string `json:"priceSelection,omitempty"`
}

// cardCheckout is the card checkout alias, POST /api/v2/fees/processor/checkout:
// it answers what its successor, POST /api/fees/{feeId}/checkout, answers
// for the fee its body names. The intent names the provider this platform
// collects fees with, x402; no card processor is integrated, so none is
// offered, never a fake card session.
func (h *handlers) cardCheckout(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	var b cardCheckoutBody
	if err := httpserver.DecodeJSON(c, &b); err != nil {
		_ = c.Error(err)
		return
	}
	if b.FeeID == "" {
		_ = c.Error(problem.Newf(InvalidCheckout, "feeId is required: the card checkout alias names its fee in the body (its successor, POST /api/fees/{feeId}/checkout, in the path)."))
		return
	}
	h.answerCheckout(c, b.FeeID, checkoutBody{PromotionCode: b.PromotionCode, PriceSelection: b.PriceSelection})
}

// answerCheckout answers the provider intent of the fee feeID for the
// choices b.
func (h *handlers) answerCheckout(c *gin.Context, feeID string, b checkoutBody) {
	if b.PromotionCode != "" {
		_ = c.Error(problem.Newf(InvalidCheckout, "Promotion code %q is not valid for this fee.", b.PromotionCode))
		return
	}
	if b.PriceSelection != "" && b.PriceSelection != "standard" {
		_ = c.Error(problem.Newf(InvalidCheckout, "priceSelection must be standard; %q is not offered.", b.PriceSelection))
		return
	}
	cred, _ := auth.CredentialFrom(c.Request.Context())
	fee, err := h.payableFee(c, cred, feeID)
	if err != nil {
		_ = c.Error(err)
		return
	}
	f := fee.Draft.Fee()
	c.JSON(http.StatusOK, gin.H{"data": gin.H{
		"feeId": f.FeeID, "provider": "x402", "currency": f.Currency, "amountMinor": f.AmountMinor, "status": f.Status,
		"paymentPath": filing.FeeResource(f.FeeID),
		"x402":        h.paymentRequired(f.FeeID, fee.Offers, ""),
	}, "requestId": requestid.Get(c)})
}

// payableFee resolves the path's fee for a caller who may see its draft
// and pay it (authorizePayer).
func (h *handlers) payableFee(c *gin.Context, cred auth.Credential, feeID string) (filing.PayableFee, error) {
	return h.filings.PayableFee(c.Request.Context(), feeID, h.access(cred),
		func(d draft.Draft) error { return h.authorizePayer(c, cred, d) })
}

func (h *handlers) paymentRequired(feeID string, offers []x402.PaymentRequirements, reason string) x402.PaymentRequired {
	return x402.PaymentRequired{
		X402Version: x402.Version,
		Error:       reason,
		Resource:    x402.ResourceInfo{URL: h.publicBase.URL(filing.FeeResource(feeID)), Description: "Filing fee " + feeID, MimeType: "application/json"},
		Accepts:     offers,
		Extensions:  x402.Extensions{},
	}
}

// payFee is the x402 resource of a fee: without PAYMENT-SIGNATURE it
// answers 402 with the committed requirements; with one it pays the fee
// (filing.PayFee), which opens a draft that was ready_to_open.
func (h *handlers) payFee(c *gin.Context) {
	// The 201 shows the case's capabilities once; nothing here may be cached.
	c.Header("Cache-Control", "no-store")
	cred, _ := auth.CredentialFrom(c.Request.Context())
	fee, err := h.payableFee(c, cred, c.Param("feeId"))
	if err != nil {
		_ = c.Error(err)
		return
	}
	payment, present, err := x402.PaymentSignature(c.Request.Header)
	if err != nil {
		_ = c.Error(err)
		return
	}
	if !present {
		if fee.Draft.Fee().Status == draft.FeePaid {
			_ = c.Error(&draft.RefusalError{Code: draft.CodeFeeAlreadyPaid, Detail: "fee " + fee.ID() + " is paid"})
			return
		}
		h.challenge(c, fee.ID(), fee.Offers, "payment_required", nil)
		return
	}
	offer, err := x402.MatchOffer(fee.Offers, payment.Accepted)
	if err != nil {
		h.challenge(c, fee.ID(), fee.Offers, mismatchReason(fee.Offers, payment.Accepted), nil)
		return
	}
	paid, err := h.filings.PayFee(c.Request.Context(), fee, payment, offer, h.access(cred), cred.PartnerID)
	var refused *journal.Refusal
	if errors.As(err, &refused) {
		h.challenge(c, fee.ID(), fee.Offers, refused.Reason, refused.Settlement)
		return
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	if encoded, err := x402.EncodeHeader(paid.Settlement); err == nil {
		c.Header(x402.HeaderPaymentResponse, encoded)
	}
	if paid.AlreadyPaid {
		c.JSON(http.StatusOK, gin.H{"data": h.draftView(paid.Applied.Draft, draft.RouteV2), "requestId": requestid.Get(c)})
		return
	}
	h.renderApplied(c, paid.Applied, draft.RouteV2)
}

func (h *handlers) challenge(c *gin.Context, feeID string, offers []x402.PaymentRequirements, reason string, settlement *x402.SettleResponse) {
	pr := h.paymentRequired(feeID, offers, reason)
	if err := x402.SetChallengeHeaders(c.Writer.Header(), pr, settlement); err != nil {
		_ = c.Error(err)
		return
	}
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
