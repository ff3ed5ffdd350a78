package httpapi

import (
	"errors"
	"net/http"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/services/filings/internal/agentcommerce"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
	"github.com/pcourt/pcourt/services/filings/internal/filing"
	"github.com/pcourt/pcourt/services/filings/internal/store"
)

// InvalidDraft is a preparation body that breaks a rule; the detail names the field.
var InvalidDraft = problem.Code{Name: "invalid_draft", Status: http.StatusBadRequest, Title: "Invalid case draft"}

// The preparation refusals with a code of their own (draft.ValidationCode);
// the detail names the field.
var validationProblems = map[draft.ValidationCode]problem.Code{
	draft.CodeInvalidDraft:               InvalidDraft,
	draft.CodeUnsafeCharacters:           {Name: "unsafe_characters", Status: http.StatusBadRequest, Title: "Unsafe characters"},
	draft.CodeUnsupportedSchemaVersion:   {Name: "unsupported_schema_version", Status: http.StatusBadRequest, Title: "Unsupported schema version"},
	draft.CodeRecordConfirmationRequired: {Name: "record_confirmation_required", Status: http.StatusBadRequest, Title: "Record confirmation required"},
}

// InvalidConsent is a consent body that breaks its own rules; the detail
// names the field.
var InvalidConsent = problem.Code{Name: "invalid_consent", Status: http.StatusBadRequest, Title: "Invalid consent"}

// resolutionProblems are the refusals of a resolution request
// (agentcommerce.Code); the detail names the request member.
var resolutionProblems = map[agentcommerce.Code]problem.Code{
	agentcommerce.CodeInvalidRequest:       {Name: string(agentcommerce.CodeInvalidRequest), Status: http.StatusBadRequest, Title: "Invalid resolution request"},
	agentcommerce.CodeInvalidMandate:       {Name: string(agentcommerce.CodeInvalidMandate), Status: http.StatusBadRequest, Title: "Invalid mandate or order"},
	agentcommerce.CodeDigestMismatch:       {Name: string(agentcommerce.CodeDigestMismatch), Status: http.StatusUnprocessableEntity, Title: "Mandate digest mismatch"},
	agentcommerce.CodeSignatureInvalid:     {Name: string(agentcommerce.CodeSignatureInvalid), Status: http.StatusUnprocessableEntity, Title: "Mandate signature invalid"},
	agentcommerce.CodeCurrencyMismatch:     {Name: string(agentcommerce.CodeCurrencyMismatch), Status: http.StatusUnprocessableEntity, Title: "Currency mismatch"},
	agentcommerce.CodeUnsupportedCurrency:  {Name: string(agentcommerce.CodeUnsupportedCurrency), Status: http.StatusUnprocessableEntity, Title: "Unsupported currency"},
	agentcommerce.CodeAmountExceedsPayment: {Name: string(agentcommerce.CodeAmountExceedsPayment), Status: http.StatusUnprocessableEntity, Title: "Amount exceeds payment"},
}

// Busy is a confirmation that lost the optimistic race too often in a row.
var Busy = problem.Code{Name: "draft_busy", Status: http.StatusServiceUnavailable, Title: "Draft busy"}

// refusalStatus is the status of each refusal code of the draft domain.
var refusalStatus = map[draft.RefusalCode]int{
	draft.CodeDraftNotFound:       http.StatusNotFound,
	draft.CodeDraftExpired:        http.StatusGone,
	draft.CodeDigestMismatch:      http.StatusConflict,
	draft.CodeStatementMismatch:   http.StatusUnprocessableEntity,
	draft.CodeActorMismatch:       http.StatusForbidden,
	draft.CodePrincipalMismatch:   http.StatusForbidden,
	draft.CodeNotAParticipant:     http.StatusUnprocessableEntity,
	draft.CodeNotRequired:         http.StatusConflict,
	draft.CodeAlreadyConfirmed:    http.StatusConflict,
	draft.CodeDraftAlreadyOpened:  http.StatusConflict,
	draft.CodeWrongRouteFamily:    http.StatusConflict,
	draft.CodeForbidden:           http.StatusForbidden,
	draft.CodeInvalidConfirmation: http.StatusBadRequest,
	draft.CodeFeeAlreadyPaid:      http.StatusConflict,
}

var refusalTitle = map[draft.RefusalCode]string{
	draft.CodeDraftNotFound:       "Draft not found",
	draft.CodeDraftExpired:        "Draft expired",
	draft.CodeDigestMismatch:      "Draft digest mismatch",
	draft.CodeStatementMismatch:   "Confirmation statement mismatch",
	draft.CodeActorMismatch:       "Actor mismatch",
	draft.CodePrincipalMismatch:   "Principal mismatch",
	draft.CodeNotAParticipant:     "Not a participant",
	draft.CodeNotRequired:         "Confirmation not required",
	draft.CodeAlreadyConfirmed:    "Already confirmed",
	draft.CodeDraftAlreadyOpened:  "Case already opened",
	draft.CodeWrongRouteFamily:    "Wrong route family",
	draft.CodeForbidden:           "Forbidden",
	draft.CodeInvalidConfirmation: "Invalid confirmation",
	draft.CodeFeeAlreadyPaid:      "Fee already paid",
}

// Codes returns the service's problem codes, the rows of owner filings in
// docs/problems.md: the draft domain's refusals and the codes of the
// handlers. The platform-wide codes are problem.Catalogue().
func Codes() []problem.Code {
	codes := []problem.Code{
		Busy, FeeNotFound, InvalidGrant, InvalidConsent,
		CheckoutUnavailable, InvalidCheckout, OtherFeePayment,
	}
	for _, code := range validationProblems {
		codes = append(codes, code)
	}
	for _, code := range resolutionProblems {
		codes = append(codes, code)
	}
	for code, status := range refusalStatus {
		codes = append(codes, refusalProblem(code, status))
	}
	return codes
}

func refusalProblem(code draft.RefusalCode, status int) problem.Code {
	return problem.Code{Name: string(code), Status: status, Title: refusalTitle[code]}
}

// Problem maps the service's domain errors to problems; it is the server's
// problem.Mapper.
func Problem(err error) *problem.Error {
	if p := journal.Problem(err); p != nil {
		return p
	}
	var refusal *draft.RefusalError
	var invalid *draft.ValidationError
	var noFee *filing.FeeNotFoundError
	var resolution *agentcommerce.Error
	switch {
	case errors.As(err, &resolution):
		code, ok := resolutionProblems[resolution.Code]
		if !ok {
			return nil
		}
		return problem.New(code, resolution.Error())
	case errors.As(err, &noFee):
		return problem.Newf(FeeNotFound, "No fee %s.", noFee.FeeID)
	case errors.Is(err, filing.ErrCheckoutUnavailable):
		return problem.New(CheckoutUnavailable, "This fee cannot be paid with x402 here; it is invoiced.")
	case errors.Is(err, filing.ErrOtherFeePayment):
		return problem.New(OtherFeePayment, "Another payment of this fee is being settled; nothing was charged.").WithHeader("Retry-After", "5")
	case errors.Is(err, filing.ErrFeePaidByOther):
		return problem.New(refusalProblem(draft.CodeFeeAlreadyPaid, refusalStatus[draft.CodeFeeAlreadyPaid]), "The fee was paid by another payment; nothing was charged.")
	case errors.As(err, &refusal):
		status, ok := refusalStatus[refusal.Code]
		if !ok {
			return nil
		}
		detail := refusal.Detail
		if detail == "" {
			detail = refusalTitle[refusal.Code] + "."
		}
		return problem.New(refusalProblem(refusal.Code, status), detail)
	case errors.As(err, &invalid):
		code, ok := validationProblems[invalid.ProblemCode()]
		if !ok {
			code = InvalidDraft
		}
		return problem.New(code, invalid.Error())
	case errors.Is(err, auth.ErrForbidden):
		return problem.New(problem.Forbidden, "This credential may not act for that side of this draft: it needs an active membership of the side, or the case capability in X-PC-Case-Capability.")
	case errors.Is(err, store.ErrExists):
		return problem.New(problem.Internal, "The server could not complete the request.")
	case errors.Is(err, filing.ErrBusy):
		return problem.New(Busy, "Other confirmations kept changing the draft; retry with the same Idempotency-Key.").WithHeader("Retry-After", "1")
	}
	return nil
}
