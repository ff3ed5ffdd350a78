package journal

import (
	"errors"
	"net/http"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/x402"
)

// The problem codes every x402 resource of the project answers with, the
// same code for the same situation on every route.
var (
	InvalidPayload         = problem.Code{Name: "invalid_payload", Status: http.StatusBadRequest, Title: "Invalid payment payload"}
	PaymentAlreadyUsed     = problem.Code{Name: "payment_already_used", Status: http.StatusConflict, Title: "Payment already used"}
	PaymentInProgress      = problem.Code{Name: "payment_in_progress", Status: http.StatusConflict, Title: "Payment in progress"}
	PaymentRequestMismatch = problem.Code{Name: "payment_request_mismatch", Status: http.StatusConflict, Title: "Payment used for a different request"}
	PaymentPayloadMismatch = problem.Code{Name: "payment_payload_mismatch", Status: http.StatusConflict, Title: "Payment authorization seen with a different payload"}
	FacilitatorUnavailable = problem.Code{Name: "facilitator_unavailable", Status: http.StatusServiceUnavailable, Title: "Payment facilitator unavailable"}
	AwaitingReconciliation = problem.Code{Name: "awaiting_payment_reconciliation", Status: http.StatusServiceUnavailable, Title: "Awaiting payment reconciliation"}
)

// Codes returns the journal's problem codes, the rows of owner x402 in
// docs/problems.md.
func Codes() []problem.Code {
	return []problem.Code{
		InvalidPayload, PaymentAlreadyUsed, PaymentInProgress, PaymentRequestMismatch,
		PaymentPayloadMismatch, FacilitatorUnavailable, AwaitingReconciliation,
	}
}

// Problem maps the journal's errors, and a malformed PAYMENT-SIGNATURE, to
// problems; nil for any other error. Services call it from their own
// problem.Mapper.
func Problem(err error) *problem.Error {
	var header *x402.HeaderError
	switch {
	case errors.As(err, &header):
		detail := "PAYMENT-SIGNATURE is not a base64-encoded x402 v2 payment payload."
		if errors.Is(err, x402.ErrRepeatedHeader) {
			detail = "PAYMENT-SIGNATURE was sent more than once; send exactly one payment."
		}
		return problem.New(InvalidPayload, detail).Wrap(err)
	case errors.Is(err, ErrAlreadyUsed):
		return problem.New(PaymentAlreadyUsed, "This payment was already presented for another resource; nothing was charged again. Sign a new payment for this one.")
	case errors.Is(err, ErrInProgress), errors.Is(err, ErrLeaseLost):
		return problem.New(PaymentInProgress, "A request with this payment is still running; retry the same request shortly to get its result.").WithHeader("Retry-After", "1")
	case errors.Is(err, ErrRequestMismatch):
		return problem.New(PaymentRequestMismatch, "This payment already bought a result for a different request body. Sign a new payment for a new request.")
	case errors.Is(err, ErrPayloadMismatch):
		return problem.New(PaymentPayloadMismatch, "This authorization nonce was already presented with a different payment payload.")
	case errors.Is(err, ErrFacilitatorUnavailable):
		return problem.New(FacilitatorUnavailable, "The payment facilitator is unavailable; nothing was settled. Retry shortly with the same payment.").WithHeader("Retry-After", "5")
	case errors.Is(err, ErrAwaitingReconciliation):
		return problem.New(AwaitingReconciliation, "The settlement outcome is not known yet. Retry the same request with the same payment; it returns the result or the refusal once reconciled.").WithHeader("Retry-After", "5")
	}
	return nil
}
