package tribunal

import "github.com/pcourt/pcourt/libs/refusal"

// RefusalCode is the stable code of a refused decision act. Its HTTP status
// is in docs/tribunal.md (and tribunalflow.Problem).
type RefusalCode string

// The refusal codes, in the order Decide checks them.
const (
	CodeInvalidAct             RefusalCode = "invalid_tribunal_act"          // 400
	CodeNotTribunal            RefusalCode = "not_tribunal_member"           // 403
	CodeWrongRole              RefusalCode = "wrong_tribunal_role"           // 403
	CodeCaseClosed             RefusalCode = "case_closed"                   // 409
	CodeAwardIssued            RefusalCode = "award_already_issued"          // 409
	CodeDecisionStage          RefusalCode = "decision_stage_closed"         // 409
	CodeRunMismatch            RefusalCode = "run_not_open"                  // 409
	CodeInputDigestMismatch    RefusalCode = "input_digest_mismatch"         // 422
	CodeCitationOutsideRecord  RefusalCode = "citation_outside_record"       // 422
	CodeCitationDigestMismatch RefusalCode = "citation_digest_mismatch"      // 422
	CodeOutcomeNotAllowed      RefusalCode = "outcome_not_allowed"           // 422
	CodeRemedyExceedsClaim     RefusalCode = "remedy_exceeds_claim"          // 422
	CodeChallengeWindowClosed  RefusalCode = "challenge_window_closed"       // 409
	CodeChallengePending       RefusalCode = "challenge_pending"             // 409
	CodeChallengeNotFound      RefusalCode = "challenge_not_found"           // 404
	CodeNoReplacement          RefusalCode = "no_replacement_available"      // 409
	CodeRunLimitReached        RefusalCode = "run_limit_reached"             // 409
	CodeNoProposal             RefusalCode = "no_proposal"                   // 409
	CodeOpinionRequired        RefusalCode = "reviewer_opinion_required"     // 409
	CodeAttestationRequired    RefusalCode = "reviewer_attestation_required" // 409
	CodePreAwardReviewRequired RefusalCode = "pre_award_review_required"     // 409
	CodeAlreadyAnswered        RefusalCode = "already_answered"              // 409
	CodeNotEvaluation          RefusalCode = "not_an_evaluation"             // 409
)

// RefusalCodes lists every code in check order, for docs and tests.
var RefusalCodes = []RefusalCode{
	CodeInvalidAct, CodeNotTribunal, CodeWrongRole, CodeCaseClosed, CodeAwardIssued, CodeDecisionStage,
	CodeRunMismatch, CodeInputDigestMismatch, CodeCitationOutsideRecord, CodeCitationDigestMismatch,
	CodeOutcomeNotAllowed, CodeRemedyExceedsClaim, CodeChallengeWindowClosed, CodeChallengePending,
	CodeChallengeNotFound, CodeNoReplacement, CodeRunLimitReached, CodeNoProposal, CodeOpinionRequired,
	CodeAttestationRequired, CodePreAwardReviewRequired, CodeAlreadyAnswered, CodeNotEvaluation,
}

// RefusalError is a refused act; the state is unchanged. Detail is safe to
// show the caller.
type RefusalError = refusal.Error[RefusalCode]

func refuse(code RefusalCode, format string, args ...any) *RefusalError {
	return refusal.New(code, format, args...)
}
