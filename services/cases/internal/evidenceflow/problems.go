package evidenceflow

import (
	"errors"
	"net/http"
	"strings"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/cases/internal/evidence"
	"github.com/pcourt/pcourt/services/cases/internal/exhibitfile"
)

// refusalStatus is the HTTP status of each refusal of the evidence
// (docs/evidence.md). case_closed is the procedure's code, with its
// status; exhibit_too_large is the file's and the case's both.
var refusalStatus = map[evidence.RefusalCode]int{
	evidence.CodeInvalidAct:        http.StatusBadRequest,
	evidence.CodeCaseClosed:        http.StatusConflict,
	evidence.CodeExhibitNotFound:   http.StatusNotFound,
	evidence.CodeNotOfferingSide:   http.StatusForbidden,
	evidence.CodeOwnExhibit:        http.StatusForbidden,
	evidence.CodeEvidenceStage:     http.StatusConflict,
	evidence.CodeDuplicateExhibit:  http.StatusConflict,
	evidence.CodeFileTooLarge:      http.StatusRequestEntityTooLarge,
	evidence.CodeSideQuotaExceeded: http.StatusRequestEntityTooLarge,
	evidence.CodeExhibitLimit:      http.StatusConflict,
	evidence.CodeAlreadyDisclosed:  http.StatusConflict,
	evidence.CodeChallengePending:  http.StatusConflict,
	evidence.CodeChallengeNotFound: http.StatusNotFound,
	evidence.CodeChallengeAnswered: http.StatusConflict,
	evidence.CodeChallengeResolved: http.StatusConflict,
	evidence.CodeDefectNotFound:    http.StatusNotFound,
	evidence.CodeDefectResolved:    http.StatusConflict,
}

func title(code string) string {
	words := strings.Split(code, "_")
	words[0] = strings.ToUpper(words[0][:1]) + words[0][1:]
	return strings.Join(words, " ")
}

func code(name string, status int) problem.Code {
	return problem.Code{Name: name, Status: status, Title: title(name)}
}

// Codes returns the evidence's problem codes: the case's refusals (but
// case_closed, which caseflow.Codes has) and the file's (but
// exhibit_too_large, which the case's list has).
func Codes() []problem.Code {
	var codes []problem.Code
	for _, c := range evidence.RefusalCodes {
		if c != evidence.CodeCaseClosed {
			codes = append(codes, code(string(c), refusalStatus[c]))
		}
	}
	for _, c := range exhibitfile.Codes {
		if string(c) != string(evidence.CodeFileTooLarge) {
			codes = append(codes, code(string(c), c.Status()))
		}
	}
	return codes
}

// Problem maps a refusal of the evidence or of an uploaded file to its
// problem, and returns nil for any other error; httpapi's mapper chains
// it.
func Problem(err error) *problem.Error {
	var refusal *evidence.RefusalError
	if errors.As(err, &refusal) {
		if status, ok := refusalStatus[refusal.Code]; ok {
			return problem.New(code(string(refusal.Code), status), refusal.Detail)
		}
		return nil
	}
	var file *exhibitfile.Refusal
	if errors.As(err, &file) {
		return problem.New(code(string(file.Code), file.Code.Status()), file.Detail)
	}
	return nil
}
