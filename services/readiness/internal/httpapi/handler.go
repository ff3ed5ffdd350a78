// Package httpapi is the readiness service's HTTP surface: the paid
// POST /api/x402/dispute-readiness, its x402 challenge and JSON shapes, and
// the mapping of sale errors to problems.
package httpapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/readiness/internal/readiness"
	"github.com/pcourt/pcourt/services/readiness/internal/sale"
	"github.com/pcourt/pcourt/services/readiness/internal/store"
)

// Path is the paid resource.
const Path = "/api/x402/dispute-readiness"

// MaxBodyBytes is the resource-specific body limit. A complete request is
// under 1 KiB; 16 KiB leaves room for whitespace without inviting abuse.
const MaxBodyBytes = 16 << 10

// Problem codes of the readiness report.
var (
	InvalidReadinessRequest = problem.Code{Name: "invalid_readiness_request", Status: http.StatusBadRequest, Title: "Invalid readiness request"}
	InvalidPayload          = problem.Code{Name: "invalid_payload", Status: http.StatusBadRequest, Title: "Invalid payment payload"}
	PaymentInProgress       = problem.Code{Name: "payment_in_progress", Status: http.StatusConflict, Title: "Payment in progress"}
	PaymentRequestMismatch  = problem.Code{Name: "payment_request_mismatch", Status: http.StatusConflict, Title: "Payment used for a different request"}
	PaymentPayloadMismatch  = problem.Code{Name: "payment_payload_mismatch", Status: http.StatusConflict, Title: "Payment authorization seen with a different payload"}
	PaymentIDConflict       = problem.Code{Name: "payment_identifier_conflict", Status: http.StatusConflict, Title: "Payment identifier used with a different payment"}
	SettlementCapReached    = problem.Code{Name: "settlement_cap_reached", Status: http.StatusTooManyRequests, Title: "Settlement cap reached"}
	ResourceDisabled        = problem.Code{Name: "resource_disabled", Status: http.StatusServiceUnavailable, Title: "Resource disabled"}
	FacilitatorUnavailable  = problem.Code{Name: "facilitator_unavailable", Status: http.StatusServiceUnavailable, Title: "Payment facilitator unavailable"}
	AwaitingReconciliation  = problem.Code{Name: "awaiting_payment_reconciliation", Status: http.StatusServiceUnavailable, Title: "Awaiting payment reconciliation"}
)

// Config configures the handler.
type Config struct {
	// Enabled switches the paid resource on; off, it answers 503.
	Enabled bool
	// PublicURL is the resource URL clients see (from the ingress); empty
	// derives it from the request's forwarded scheme and host.
	PublicURL string
}

// Handler serves the paid report.
type Handler struct {
	cfg       Config
	challenge *Challenge
	seller    *sale.Seller
	logger    *slog.Logger
}

// NewHandler returns the handler.
func NewHandler(cfg Config, challenge *Challenge, seller *sale.Seller, logger *slog.Logger) *Handler {
	return &Handler{cfg: cfg, challenge: challenge, seller: seller, logger: logger}
}

// Register adds the route.
func (h *Handler) Register(r gin.IRouter) {
	r.POST(Path, httpserver.BodyLimit(MaxBodyBytes), h.getDisputeReadiness)
}

// Problem maps the service's domain errors to problems; it is the
// server's problem.Mapper.
func Problem(err error) *problem.Error {
	var invalid *readiness.ValidationError
	var capReached *store.CapReached
	switch {
	case errors.As(err, &invalid):
		return problem.New(InvalidReadinessRequest, invalid.Error())
	case errors.As(err, &capReached):
		return problem.Newf(SettlementCapReached, "The %s settlement cap is reached; nothing was settled. Retry after the Retry-After header.", capReached.Scope).
			WithHeader("Retry-After", strconv.Itoa(int(math.Ceil(capReached.RetryAfter.Seconds()))))
	case errors.Is(err, sale.ErrInProgress):
		return problem.New(PaymentInProgress, "A request with this payment is still running; retry the same request shortly to get its result.").WithHeader("Retry-After", "1")
	case errors.Is(err, sale.ErrRequestMismatch):
		return problem.New(PaymentRequestMismatch, "This payment already bought a report for a different request body. Sign a new payment for a new request.")
	case errors.Is(err, sale.ErrPayloadMismatch):
		return problem.New(PaymentPayloadMismatch, "This authorization nonce was already presented with a different payment payload.")
	case errors.Is(err, sale.ErrPaymentIDConflict):
		return problem.New(PaymentIDConflict, "This payment identifier was already used with a different payment. Use a new identifier for a new payment.")
	case errors.Is(err, sale.ErrFacilitatorUnavailable):
		return problem.New(FacilitatorUnavailable, "The payment facilitator is unavailable; nothing was settled. Retry shortly with the same payment.").WithHeader("Retry-After", "5")
	case errors.Is(err, sale.ErrAwaitingReconciliation):
		return problem.New(AwaitingReconciliation, "The settlement outcome is not known yet. Retry the same request with the same payment; it returns the report or the refusal once reconciled.").WithHeader("Retry-After", "5")
	}
	return nil
}

func (h *Handler) getDisputeReadiness(c *gin.Context) {
	if !h.cfg.Enabled {
		_ = c.Error(problem.New(ResourceDisabled, "The dispute-readiness report is switched off; nothing was charged. Try again later."))
		return
	}
	body, err := httpserver.ReadBody(c)
	if err != nil {
		_ = c.Error(err)
		return
	}
	if ct := c.GetHeader("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		_ = c.Error(problem.Newf(problem.UnsupportedMediaType, "Content-Type must be application/json, not %q.", ct))
		return
	}
	req, err := decodeRequest(body)
	if err != nil {
		_ = c.Error(err)
		return
	}

	header := c.GetHeader(x402.HeaderPaymentSignature)
	if header == "" {
		h.paymentRequired(c, "payment_required", nil)
		return
	}
	var payment x402.PaymentPayload
	if err := x402.DecodeHeader(header, &payment); err != nil {
		_ = c.Error(problem.New(InvalidPayload, "PAYMENT-SIGNATURE is not a base64-encoded x402 v2 payment payload.").Wrap(err))
		return
	}
	if payment.X402Version != x402.Version {
		_ = c.Error(problem.Newf(InvalidPayload, "x402Version must be %d.", x402.Version))
		return
	}
	id, err := paymentID(payment)
	if err != nil {
		_ = c.Error(problem.New(InvalidPayload, err.Error()))
		return
	}
	offer, err := x402.MatchOffer(h.challenge.Offers(), payment.Accepted)
	if err != nil {
		h.paymentRequired(c, mismatchReason(h.challenge.Offers(), payment.Accepted), nil)
		return
	}

	receipt, err := h.seller.Sell(c.Request.Context(), sale.Purchase{
		Request: req, Fingerprint: sale.Fingerprint(body), Payment: payment, Offer: offer, PaymentID: id,
	})
	var refused *sale.Refused
	if errors.As(err, &refused) {
		h.paymentRequired(c, refused.Reason, refused.Settlement)
		return
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	if err := setPaymentResponse(c, receipt.Settlement); err != nil {
		_ = c.Error(err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, toReportResponse(receipt))
}

// paymentRequired answers 402 with the challenge in the PAYMENT-REQUIRED
// header and the body, and the failed settlement, if any, in PAYMENT-RESPONSE.
func (h *Handler) paymentRequired(c *gin.Context, reason string, settlement *x402.SettleResponse) {
	header, body, err := h.challenge.Encoded(h.resourceURL(c), reason)
	if err != nil {
		_ = c.Error(err)
		return
	}
	if settlement != nil {
		if err := setPaymentResponse(c, *settlement); err != nil {
			_ = c.Error(err)
			return
		}
	}
	c.Header(x402.HeaderPaymentRequired, header)
	c.Header("Cache-Control", "no-store")
	c.Data(http.StatusPaymentRequired, "application/json", body)
}

func setPaymentResponse(c *gin.Context, s x402.SettleResponse) error {
	encoded, err := x402.EncodeHeader(s)
	if err != nil {
		return err
	}
	c.Header(x402.HeaderPaymentResponse, encoded)
	return nil
}

func (h *Handler) resourceURL(c *gin.Context) string {
	if h.cfg.PublicURL != "" {
		return strings.TrimSuffix(h.cfg.PublicURL, "/") + Path
	}
	scheme := "http"
	if c.Request.TLS != nil || c.GetHeader("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + c.Request.Host + Path
}

// mismatchReason names what made a payment's accepted requirements match
// none of our offers, in the spec's reason vocabulary.
func mismatchReason(offers []x402.PaymentRequirements, accepted x402.PaymentRequirements) string {
	var sameNetwork []x402.PaymentRequirements
	for _, o := range offers {
		if o.Network == accepted.Network {
			sameNetwork = append(sameNetwork, o)
		}
	}
	switch {
	case accepted.Scheme != x402.SchemeExact:
		return x402.ReasonInvalidScheme
	case len(sameNetwork) == 0:
		return x402.ReasonInvalidNetwork
	case !strings.EqualFold(sameNetwork[0].PayTo, accepted.PayTo):
		return x402.ReasonRecipientMismatch
	case sameNetwork[0].Amount != accepted.Amount:
		return x402.ReasonValueMismatch
	}
	return x402.ReasonInvalidPaymentRequirements
}

// reportResponse is the 200 body.
type reportResponse struct {
	OK      bool            `json:"ok"`
	Data    json.RawMessage `json:"data"`
	Payment paymentInfo     `json:"payment"`
}

type paymentInfo struct {
	Protocol    string `json:"protocol"`
	PriceUsd    string `json:"priceUsd"`
	Replayed    bool   `json:"replayed"`
	Network     string `json:"network,omitempty"`
	Transaction string `json:"transaction,omitempty"`
}

func toReportResponse(r sale.Receipt) reportResponse {
	return reportResponse{
		OK:   true,
		Data: r.Report,
		Payment: paymentInfo{
			Protocol: "x402", PriceUsd: PriceUsd, Replayed: r.Replayed,
			Network: r.Settlement.Network, Transaction: r.Settlement.Transaction,
		},
	}
}
