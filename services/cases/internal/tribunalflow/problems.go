package tribunalflow

import (
	"errors"
	"net/http"
	"strings"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// refusalStatus is the HTTP status of each refusal of the decision
// (docs/tribunal.md). case_closed is the procedure's code, with its status.
var refusalStatus = map[tribunal.RefusalCode]int{
	tribunal.CodeInvalidAct:             http.StatusBadRequest,
	tribunal.CodeNotTribunal:            http.StatusForbidden,
	tribunal.CodeWrongRole:              http.StatusForbidden,
	tribunal.CodeCaseClosed:             http.StatusConflict,
	tribunal.CodeAwardIssued:            http.StatusConflict,
	tribunal.CodeDecisionStage:          http.StatusConflict,
	tribunal.CodeRunMismatch:            http.StatusConflict,
	tribunal.CodeInputDigestMismatch:    http.StatusUnprocessableEntity,
	tribunal.CodeCitationOutsideRecord:  http.StatusUnprocessableEntity,
	tribunal.CodeCitationDigestMismatch: http.StatusUnprocessableEntity,
	tribunal.CodeOutcomeNotAllowed:      http.StatusUnprocessableEntity,
	tribunal.CodeRemedyExceedsClaim:     http.StatusUnprocessableEntity,
	tribunal.CodeChallengeWindowClosed:  http.StatusConflict,
	tribunal.CodeChallengePending:       http.StatusConflict,
	tribunal.CodeChallengeNotFound:      http.StatusNotFound,
	tribunal.CodeNoReplacement:          http.StatusConflict,
	tribunal.CodeRunLimitReached:        http.StatusConflict,
	tribunal.CodeNoProposal:             http.StatusConflict,
	tribunal.CodeOpinionRequired:        http.StatusConflict,
	tribunal.CodeAttestationRequired:    http.StatusConflict,
	tribunal.CodePreAwardReviewRequired: http.StatusConflict,
	tribunal.CodeAlreadyAnswered:        http.StatusConflict,
	tribunal.CodeNotEvaluation:          http.StatusConflict,
}

func title(code tribunal.RefusalCode) string {
	words := strings.Split(string(code), "_")
	words[0] = strings.ToUpper(words[0][:1]) + words[0][1:]
	return strings.Join(words, " ")
}

func refusalProblem(code tribunal.RefusalCode) problem.Code {
	return problem.Code{Name: string(code), Status: refusalStatus[code], Title: title(code)}
}

// Codes returns the decision's problem codes, except case_closed, which
// caseflow.Codes has.
func Codes() []problem.Code {
	var codes []problem.Code
	for _, code := range tribunal.RefusalCodes {
		if code != tribunal.CodeCaseClosed {
			codes = append(codes, refusalProblem(code))
		}
	}
	return codes
}

// Problem maps a refusal of the decision to its problem, and returns nil
// for any other error; httpapi's mapper chains it after caseflow.Problem.
func Problem(err error) *problem.Error {
	var refusal *tribunal.RefusalError
	if !errors.As(err, &refusal) {
		return nil
	}
	if _, ok := refusalStatus[refusal.Code]; !ok {
		return nil
	}
	return problem.New(refusalProblem(refusal.Code), refusal.Detail)
}
