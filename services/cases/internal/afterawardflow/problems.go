package afterawardflow

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
)

// refusalStatus is the HTTP status of each refusal after the award
// (docs/after-award.md). case_closed, award_not_issued and
// remedy_exceeds_claim are the same codes, with the same statuses, as the
// procedure's, the award reads' and the decision's.
var refusalStatus = map[afteraward.RefusalCode]int{
	afteraward.CodeInvalidAct:        http.StatusBadRequest,
	afteraward.CodeNotReviewer:       http.StatusForbidden,
	afteraward.CodeCaseClosed:        http.StatusConflict,
	afteraward.CodeNoAward:           http.StatusNotFound,
	afteraward.CodeAwardFinal:        http.StatusConflict,
	afteraward.CodeRecourseWaived:    http.StatusConflict,
	afteraward.CodeWindowClosed:      http.StatusConflict,
	afteraward.CodeRequestPending:    http.StatusConflict,
	afteraward.CodeRequestNotFound:   http.StatusNotFound,
	afteraward.CodeRequestDecided:    http.StatusConflict,
	afteraward.CodeRemedyExceeds:     http.StatusUnprocessableEntity,
	afteraward.CodeModeUnavailable:   http.StatusConflict,
	afteraward.CodeAwardNotFinal:     http.StatusConflict,
	afteraward.CodeAwardHashMismatch: http.StatusConflict,
	afteraward.CodeNotExecutable:     http.StatusUnprocessableEntity,
	afteraward.CodeNotObligor:        http.StatusForbidden,
	afteraward.CodeNotPayee:          http.StatusForbidden,
	afteraward.CodeAlreadyExecuted:   http.StatusConflict,
	afteraward.CodeExecutionExists:   http.StatusConflict,
	afteraward.CodeExecutionNotFound: http.StatusNotFound,

	afteraward.CodeNotAppellateReviewer: http.StatusForbidden,
	afteraward.CodeNotAppellee:          http.StatusForbidden,
	afteraward.CodeNotAppellant:         http.StatusForbidden,
	afteraward.CodeAppealNotAllowed:     http.StatusConflict,
	afteraward.CodeAppealWindowClosed:   http.StatusConflict,
	afteraward.CodeAppealPending:        http.StatusConflict,
	afteraward.CodeNoAppellateReviewer:  http.StatusConflict,
	afteraward.CodeAppealNotFound:       http.StatusNotFound,
	afteraward.CodeAppealFeePaid:        http.StatusConflict,
	afteraward.CodeAppealFeeNotPayable:  http.StatusConflict,
	afteraward.CodeAppealFeeHeld:        http.StatusConflict,
	afteraward.CodeAppealFeeUnpaid:      http.StatusConflict,
	afteraward.CodeBriefingClosed:       http.StatusConflict,
	afteraward.CodeAppealAnswered:       http.StatusConflict,
	afteraward.CodeAnswerWindowOpen:     http.StatusConflict,
	afteraward.CodeBriefingOpen:         http.StatusConflict,
	afteraward.CodeAppealClosed:         http.StatusConflict,
}

// shared are the codes another package's Codes already lists.
var shared = []afteraward.RefusalCode{afteraward.CodeCaseClosed, afteraward.CodeNoAward, afteraward.CodeRemedyExceeds}

// ExecutionFailed answers a command whose transfer failed on its rail:
// the attempt is recorded, the answer is not journaled (5xx), and the
// same command with the same Idempotency-Key tries again.
var ExecutionFailed = problem.Code{Name: "execution_failed", Status: http.StatusBadGateway, Title: "Execution failed"}

func title(code afteraward.RefusalCode) string {
	words := strings.Split(string(code), "_")
	words[0] = strings.ToUpper(words[0][:1]) + words[0][1:]
	return strings.Join(words, " ")
}

func refusalProblem(code afteraward.RefusalCode) problem.Code {
	return problem.Code{Name: string(code), Status: refusalStatus[code], Title: title(code)}
}

// Codes returns the after-award problem codes, except those another
// package lists (shared).
func Codes() []problem.Code {
	var codes []problem.Code
	for _, code := range afteraward.RefusalCodes {
		if !slices.Contains(shared, code) {
			codes = append(codes, refusalProblem(code))
		}
	}
	return append(codes, ExecutionFailed)
}

// Problem maps a refusal after the award, or a failed execution, to its
// problem, and returns nil for any other error; httpapi's mapper chains it.
func Problem(err error) *problem.Error {
	var failed *ExecutionFailedError
	if errors.As(err, &failed) {
		return problem.Newf(ExecutionFailed, "Execution %s was recorded but its transfer failed (%s). Send the same command with the same Idempotency-Key to try again; it is never done twice.", failed.ExecutionID, failed.Detail)
	}
	var refusal *afteraward.RefusalError
	if !errors.As(err, &refusal) {
		return nil
	}
	if _, ok := refusalStatus[refusal.Code]; !ok {
		return nil
	}
	return problem.New(refusalProblem(refusal.Code), refusal.Detail)
}
