package settlement

import "github.com/pcourt/pcourt/libs/refusal"

// RefusalCode is the stable code of a refused act. Its HTTP status is in
// docs/settlement.md (and settlementflow.Problem).
type RefusalCode string

// The refusal codes. not_tribunal_member, wrong_tribunal_role, case_closed,
// award_already_issued and remedy_exceeds_claim are the decision's codes,
// with the same meaning and status.
const (
	CodeInvalidAct     RefusalCode = "invalid_settlement_act"      // 400
	CodeNotTribunal    RefusalCode = "not_tribunal_member"         // 403
	CodeWrongRole      RefusalCode = "wrong_tribunal_role"         // 403
	CodeCaseClosed     RefusalCode = "case_closed"                 // 409
	CodeAwardIssued    RefusalCode = "award_already_issued"        // 409
	CodeSidesNotJoined RefusalCode = "settlement_sides_not_joined" // 409
	CodeAgreed         RefusalCode = "settlement_agreed"           // 409
	CodeRemedyExceeds  RefusalCode = "remedy_exceeds_claim"        // 422
	CodeNoProposal     RefusalCode = "no_settlement_proposal"      // 409
	CodeOwnProposal    RefusalCode = "own_settlement_proposal"     // 409
	CodeNotProposer    RefusalCode = "not_settlement_proposer"     // 403
	CodeTermsMismatch  RefusalCode = "settlement_terms_mismatch"   // 409
	CodeNotAgreed      RefusalCode = "settlement_not_agreed"       // 409
)

// RefusalCodes lists every code in the order Decide checks them, for docs
// and tests.
var RefusalCodes = []RefusalCode{
	CodeInvalidAct, CodeNotTribunal, CodeWrongRole, CodeCaseClosed, CodeAwardIssued,
	// proposing
	CodeSidesNotJoined, CodeAgreed, CodeRemedyExceeds,
	// accepting, withdrawing
	CodeNoProposal, CodeOwnProposal, CodeNotProposer, CodeTermsMismatch,
	// recording
	CodeNotAgreed,
}

// Shared are the codes the decision (internal/tribunal) owns: the same
// code, meaning and status there.
var Shared = []RefusalCode{CodeNotTribunal, CodeWrongRole, CodeCaseClosed, CodeAwardIssued, CodeRemedyExceeds}

// RefusalError is a refused act; the state is unchanged. Detail is safe to
// show the caller.
type RefusalError = refusal.Error[RefusalCode]

func refuse(code RefusalCode, format string, args ...any) *RefusalError {
	return refusal.New(code, format, args...)
}
