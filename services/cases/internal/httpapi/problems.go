package httpapi

import (
	"net/http"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/services/cases/internal/afterawardflow"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/evidenceflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/settlementflow"
	"github.com/pcourt/pcourt/services/cases/internal/tribunalflow"
)

// The API's own problem codes (AwardNotIssued is in decision.go,
// RepresentativeNotEligible in representatives.go, OperatorOnly in
// restricted.go); the use
// cases' are caseflow's (the procedure's refusals, case_busy) and
// tribunalflow's (the decision's refusals).
var (
	// CaseNotFoundOrOpening answers every case route for a case this
	// credential cannot see: one that does not exist, one of another
	// tenant, environment or partner, or one whose case-opened fact has not
	// been applied yet. The three are indistinguishable on purpose, so the
	// answer discloses nothing; Retry-After covers the opening case.
	CaseNotFoundOrOpening = problem.Code{Name: "case_not_found_or_opening", Status: http.StatusNotFound, Title: "Case not found, or still opening"}
	// InvalidQuery is a docket query with a malformed cursor or limit.
	InvalidQuery = problem.Code{Name: "invalid_query", Status: http.StatusBadRequest, Title: "Invalid query"}
)

// invalidAct is a command body that breaks a rule of its own; the detail
// names the field. It is the procedure's invalid_act, answered before the
// case is loaded.
func invalidAct(detail string) *problem.Error {
	return caseflow.Problem(&procedure.RefusalError{Code: procedure.CodeInvalidAct, Detail: detail})
}

// Codes returns the service's problem codes, the rows of owner cases in
// docs/problems.md: its own, the case's use cases' and the decision's. The
// platform-wide codes are problem.Catalogue().
func Codes() []problem.Code {
	codes := []problem.Code{CaseNotFoundOrOpening, InvalidQuery, AwardNotIssued, RepresentativeNotEligible, RecordNotClosed,
		ExportNotificationNotFound, ExportReceiptNotFound, OperatorOnly, ExecutionReportNotGranted, ResolutionNotFound}
	codes = append(codes, caseflow.Codes()...)
	codes = append(codes, tribunalflow.Codes()...)
	codes = append(codes, evidenceflow.Codes()...)
	codes = append(codes, afterawardflow.Codes()...)
	return append(codes, settlementflow.Codes()...)
}

// Problem maps the service's domain errors to problems; it is the server's
// problem.Mapper, the one place (with the error middleware of
// libs/httpserver) where an error a handler records with c.Error becomes
// HTTP. It asks each use-case package in turn; a subdomain's joins the
// chain here.
func Problem(err error) *problem.Error {
	if p := caseflow.Problem(err); p != nil {
		return p
	}
	if p := tribunalflow.Problem(err); p != nil {
		return p
	}
	if p := evidenceflow.Problem(err); p != nil {
		return p
	}
	if p := journal.Problem(err); p != nil {
		return p
	}
	if p := afterawardflow.Problem(err); p != nil {
		return p
	}
	return settlementflow.Problem(err)
}
