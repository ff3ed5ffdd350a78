package settlementflow

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/cases/internal/settlement"
)

// refusalStatus is the HTTP status of each refusal of the settlement
// (docs/settlement.md). The codes it shares with the decision have the
// decision's statuses.
var refusalStatus = map[settlement.RefusalCode]int{
	settlement.CodeInvalidAct:     http.StatusBadRequest,
	settlement.CodeNotTribunal:    http.StatusForbidden,
	settlement.CodeWrongRole:      http.StatusForbidden,
	settlement.CodeCaseClosed:     http.StatusConflict,
	settlement.CodeAwardIssued:    http.StatusConflict,
	settlement.CodeSidesNotJoined: http.StatusConflict,
	settlement.CodeAgreed:         http.StatusConflict,
	settlement.CodeRemedyExceeds:  http.StatusUnprocessableEntity,
	settlement.CodeNoProposal:     http.StatusConflict,
	settlement.CodeOwnProposal:    http.StatusConflict,
	settlement.CodeNotProposer:    http.StatusForbidden,
	settlement.CodeTermsMismatch:  http.StatusConflict,
	settlement.CodeNotAgreed:      http.StatusConflict,
}

func title(code settlement.RefusalCode) string {
	words := strings.Split(string(code), "_")
	words[0] = strings.ToUpper(words[0][:1]) + words[0][1:]
	return strings.Join(words, " ")
}

func refusalProblem(code settlement.RefusalCode) problem.Code {
	return problem.Code{Name: string(code), Status: refusalStatus[code], Title: title(code)}
}

// Codes returns the settlement's problem codes, except those the decision
// lists (settlement.Shared).
func Codes() []problem.Code {
	var codes []problem.Code
	for _, code := range settlement.RefusalCodes {
		if !slices.Contains(settlement.Shared, code) {
			codes = append(codes, refusalProblem(code))
		}
	}
	return codes
}

// Problem maps a refusal of the settlement to its problem, and returns nil
// for any other error; httpapi's mapper chains it.
func Problem(err error) *problem.Error {
	var refusal *settlement.RefusalError
	if !errors.As(err, &refusal) {
		return nil
	}
	if _, ok := refusalStatus[refusal.Code]; !ok {
		return nil
	}
	return problem.New(refusalProblem(refusal.Code), refusal.Detail)
}
