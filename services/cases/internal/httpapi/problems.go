package httpapi

import (
	"errors"
	"net/http"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// The service's own problem codes; the procedure's refusals follow below.
var (
	// CaseNotFoundOrOpening answers every case route for a case this
	// credential cannot see: one that does not exist, one of another
	// tenant, environment or partner, or one whose case-opened fact has not
	// been applied yet. The three are indistinguishable on purpose, so the
	// answer discloses nothing; Retry-After covers the opening case.
	CaseNotFoundOrOpening = problem.Code{Name: "case_not_found_or_opening", Status: http.StatusNotFound, Title: "Case not found, or still opening"}
	// CaseBusy is an act that lost the optimistic race on every attempt.
	CaseBusy = problem.Code{Name: "case_busy", Status: http.StatusServiceUnavailable, Title: "Case busy"}
	// InvalidQuery is a docket query with a malformed cursor or limit.
	InvalidQuery = problem.Code{Name: "invalid_query", Status: http.StatusBadRequest, Title: "Invalid query"}
)

// refusalStatus is the HTTP status of each refusal of the procedure
// (docs/cases-procedure.md). not_a_participant is 422, as filings sends it:
// a code has one status across the platform.
var refusalStatus = map[procedure.RefusalCode]int{
	procedure.CodeInvalidAct:                http.StatusBadRequest,
	procedure.CodeNotAParticipant:           http.StatusUnprocessableEntity,
	procedure.CodeCaseClosed:                http.StatusConflict,
	procedure.CodeWrongSide:                 http.StatusForbidden,
	procedure.CodeStageClosed:               http.StatusConflict,
	procedure.CodeDeadlinePassed:            http.StatusConflict,
	procedure.CodeAlreadyJoined:             http.StatusConflict,
	procedure.CodeInvitationMismatch:        http.StatusForbidden,
	procedure.CodeFilingLimitReached:        http.StatusConflict,
	procedure.CodeSubmissionNotFound:        http.StatusNotFound,
	procedure.CodeMessageNotFound:           http.StatusNotFound,
	procedure.CodeRecordAlreadyConfirmed:    http.StatusConflict,
	procedure.CodeTerminationPending:        http.StatusConflict,
	procedure.CodeTerminationRequestUnknown: http.StatusNotFound,
}

var refusalTitle = map[procedure.RefusalCode]string{
	procedure.CodeInvalidAct:                "Invalid act",
	procedure.CodeNotAParticipant:           "Not a participant",
	procedure.CodeCaseClosed:                "Case closed",
	procedure.CodeWrongSide:                 "Wrong side",
	procedure.CodeStageClosed:               "Stage closed",
	procedure.CodeDeadlinePassed:            "Deadline passed",
	procedure.CodeAlreadyJoined:             "Already joined",
	procedure.CodeInvitationMismatch:        "Invitation mismatch",
	procedure.CodeFilingLimitReached:        "Filing limit reached",
	procedure.CodeSubmissionNotFound:        "Submission not found",
	procedure.CodeMessageNotFound:           "Message not found",
	procedure.CodeRecordAlreadyConfirmed:    "Record already confirmed",
	procedure.CodeTerminationPending:        "Termination pending",
	procedure.CodeTerminationRequestUnknown: "Termination request not found",
}

func refusalProblem(code procedure.RefusalCode) problem.Code {
	return problem.Code{Name: string(code), Status: refusalStatus[code], Title: refusalTitle[code]}
}

// invalidAct is a command body that breaks a rule of its own; the detail
// names the field.
func invalidAct(detail string) *problem.Error {
	return problem.New(refusalProblem(procedure.CodeInvalidAct), detail)
}

// Codes returns the service's problem codes, the rows of owner cases in
// docs/problems.md. The platform-wide codes are problem.Catalogue().
func Codes() []problem.Code {
	codes := []problem.Code{CaseNotFoundOrOpening, CaseBusy, InvalidQuery}
	for _, code := range procedure.RefusalCodes {
		codes = append(codes, refusalProblem(code))
	}
	return codes
}

// Problem maps the service's domain errors to problems; it is the server's
// problem.Mapper.
func Problem(err error) *problem.Error {
	var refusal *procedure.RefusalError
	switch {
	case errors.As(err, &refusal):
		if _, ok := refusalStatus[refusal.Code]; !ok {
			return nil
		}
		detail := refusal.Detail
		if detail == "" {
			detail = refusalTitle[refusal.Code] + "."
		}
		return problem.New(refusalProblem(refusal.Code), detail)
	case errors.Is(err, caseflow.ErrBusy):
		return problem.New(CaseBusy, "Other acts kept changing the case; retry with the same Idempotency-Key.").WithHeader("Retry-After", "1")
	}
	return nil
}
