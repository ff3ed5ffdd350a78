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
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/services/readiness/internal/readiness"
	"github.com/pcourt/pcourt/services/readiness/internal/sale"
	"github.com/pcourt/pcourt/services/readiness/internal/store"
)

// Path is the paid resource.
const Path = "/api/x402/dispute-readiness"

// MaxBodyBytes is the resource-specific body limit. A complete request is
// under 1 KiB; 16 KiB leaves room for whitespace without inviting abuse.
const MaxBodyBytes = 16 << 10

// Problem codes of the readiness report. The codes shared by every x402
// resource (invalid_payload, payment_already_used, payment_in_progress,
// payment_request_mismatch, payment_payload_mismatch,
// facilitator_unavailable, awaiting_payment_reconciliation) are the
// journal's.
var (
	InvalidReadinessRequest = problem.Code{Name: "invalid_readiness_request", Status: http.StatusBadRequest, Title: "Invalid readiness request"}
	PaymentIDConflict       = problem.Code{Name: "payment_identifier_conflict", Status: http.StatusConflict, Title: "Payment identifier used with a different payment"}
	SettlementCapReached    = problem.Code{Name: "settlement_cap_reached", Status: http.StatusTooManyRequests, Title: "Settlement cap reached"}
	ResourceDisabled        = problem.Code{Name: "resource_disabled", Status: http.StatusServiceUnavailable, Title: "Resource disabled"}
)

// Codes returns the service's problem codes, the rows of owner readiness
// in docs/problems.md. The platform-wide codes are problem.Catalogue().
func Codes() []problem.Code {
	return []problem.Code{
		InvalidReadinessRequest, PaymentIDConflict, SettlementCapReached, ResourceDisabled,
	}
}

// Config configures the handler.
type Config struct {
	// Enabled switches the paid resource on; off, it answers 503.
	Enabled bool
	// PublicBase is the public origin clients reach the API at; the
	// resource URL of every challenge is built from it, never from the
	// request's Host or X-Forwarded-* headers.
	PublicBase x402.PublicBase
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
	if p := journal.Problem(err); p != nil {
		return p
	}
	switch {
	case errors.As(err, &invalid):
		return problem.New(InvalidReadinessRequest, invalid.Error())
	case errors.As(err, &capReached):
		return problem.Newf(SettlementCapReached, "The %s settlement cap is reached; nothing was settled. Retry after the Retry-After header.", capReached.Scope).
			WithHeader("Retry-After", strconv.Itoa(int(math.Ceil(capReached.RetryAfter.Seconds()))))
	case errors.Is(err, store.ErrPaymentIDConflict):
		return problem.New(PaymentIDConflict, "This payment identifier was already used with a different payment. Use a new identifier for a new payment.")
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

	payment, present, err := x402.PaymentSignature(c.Request.Header)
	if err != nil {
		_ = c.Error(err)
		return
	}
	if !present {
		h.paymentRequired(c, "payment_required", nil)
		return
	}
	id, err := paymentID(payment)
	if err != nil {
		_ = c.Error(problem.New(journal.InvalidPayload, err.Error()))
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
	var refused *journal.Refusal
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
	header, body, err := h.challenge.Encoded(h.cfg.PublicBase.URL(Path), reason)
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
	// The full challenge is larger than net/http's buffer: without a
	// length it would go out chunked, in more writes, for the client to
	// reassemble.
	c.Header("Content-Length", strconv.Itoa(len(body)))
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
