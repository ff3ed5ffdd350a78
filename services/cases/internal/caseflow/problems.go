package caseflow

import (
	"errors"
	"net/http"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// MaxAnswerRunes bounds the text of an answer, on every way in (the API
// and the hosted page check it before acting).
const MaxAnswerRunes = 20000

// CaseBusy is an act that lost the optimistic race on every attempt.
var CaseBusy = problem.Code{Name: "case_busy", Status: http.StatusServiceUnavailable, Title: "Case busy"}

// CaseArchived is an act on a case archived out of Redis after its
// retention (docs/archiving.md): it is read as before, and changed no
// more.
var CaseArchived = problem.Code{Name: "case_archived", Status: http.StatusConflict, Title: "Case archived"}

// refusalStatus is the HTTP status of each refusal of the procedure
// (docs/cases-procedure.md). not_a_participant is 422, as filings sends it:
// a code has one status across the platform. The API answers it as
// problem+json, the hosted page as an HTML refusal with the same status.
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
	procedure.CodeEntryNotFound:             http.StatusNotFound,
	procedure.CodeRecordDigestMismatch:      http.StatusUnprocessableEntity,
	procedure.CodeRecordAlreadyConfirmed:    http.StatusConflict,
	procedure.CodeTerminationPending:        http.StatusConflict,
	procedure.CodeTerminationRequestUnknown: http.StatusNotFound,
	procedure.CodeRespondentNotHosted:       http.StatusConflict,
	// A limit of the caller's pace, not of the case's state: the answer
	// says when the next reissue fits.
	procedure.CodeLoginReissueLimited: http.StatusTooManyRequests,

	// The representatives' (procedure/representatives.go).
	procedure.CodeRepresentativeExists:       http.StatusConflict,
	procedure.CodeRepresentativeLimitReached: http.StatusConflict,
	procedure.CodeRepresentativeNotFound:     http.StatusNotFound,
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
	procedure.CodeEntryNotFound:             "Record entry not found",
	procedure.CodeRecordDigestMismatch:      "Record summary digest mismatch",
	procedure.CodeRecordAlreadyConfirmed:    "Record already confirmed",
	procedure.CodeTerminationPending:        "Termination pending",
	procedure.CodeTerminationRequestUnknown: "Termination request not found",
	procedure.CodeRespondentNotHosted:       "Respondent not hosted",
	procedure.CodeLoginReissueLimited:       "Sign-in link reissue limited",

	procedure.CodeRepresentativeExists:       "Representative exists",
	procedure.CodeRepresentativeLimitReached: "Representative limit reached",
	procedure.CodeRepresentativeNotFound:     "Representative not found",
}

func refusalProblem(code procedure.RefusalCode) problem.Code {
	return problem.Code{Name: string(code), Status: refusalStatus[code], Title: refusalTitle[code]}
}

// Codes returns the problem codes of the case's use cases: CaseBusy,
// CaseArchived and every refusal of the procedure. A subdomain's use-case
// package adds its own Codes and Problem beside these.
func Codes() []problem.Code {
	codes := []problem.Code{CaseBusy, CaseArchived}
	for _, code := range procedure.RefusalCodes {
		codes = append(codes, refusalProblem(code))
	}
	return codes
}

// Problem maps the errors of the case's use cases (the procedure's
// refusals, ErrBusy, store.ErrArchived) to problems, and returns nil for
// any other error. It is the table every adapter answers from: httpapi's
// problem.Mapper chains it, and the hosted page takes the status, code and
// title of its refusal pages from it.
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
	case errors.Is(err, store.ErrArchived):
		return problem.New(CaseArchived, "The case is closed and archived: its record, award and docket are read as before, and no act changes it any more.")
	case errors.Is(err, ErrBusy):
		return problem.New(CaseBusy, "Other acts kept changing the case; retry with the same Idempotency-Key.").WithHeader("Retry-After", "1")
	}
	return nil
}
