package evidence

import "github.com/pcourt/pcourt/libs/refusal"

// RefusalCode is the stable code of a refused evidence act. Its HTTP
// status is in docs/evidence.md (and evidenceflow.Problem).
type RefusalCode string

// The refusal codes, in the order Decide checks them.
const (
	CodeInvalidAct        RefusalCode = "invalid_evidence_act"             // 400
	CodeCaseClosed        RefusalCode = "case_closed"                      // 409
	CodeExhibitNotFound   RefusalCode = "exhibit_not_found"                // 404
	CodeNotOfferingSide   RefusalCode = "not_offering_side"                // 403
	CodeOwnExhibit        RefusalCode = "own_exhibit"                      // 403
	CodeEvidenceStage     RefusalCode = "evidence_stage_closed"            // 409
	CodeDuplicateExhibit  RefusalCode = "exhibit_duplicate"                // 409
	CodeFileTooLarge      RefusalCode = "exhibit_too_large"                // 413
	CodeSideQuotaExceeded RefusalCode = "evidence_quota_exceeded"          // 413
	CodeExhibitLimit      RefusalCode = "exhibit_limit_reached"            // 409
	CodeAlreadyDisclosed  RefusalCode = "exhibit_already_disclosed"        // 409
	CodeChallengePending  RefusalCode = "authenticity_challenge_pending"   // 409
	CodeChallengeNotFound RefusalCode = "authenticity_challenge_not_found" // 404
	CodeChallengeAnswered RefusalCode = "authenticity_challenge_answered"  // 409
	CodeChallengeResolved RefusalCode = "authenticity_challenge_resolved"  // 409
	CodeDefectNotFound    RefusalCode = "defect_report_not_found"          // 404
	CodeDefectResolved    RefusalCode = "defect_report_resolved"           // 409
)

// RefusalCodes lists every code in check order, for docs and tests.
var RefusalCodes = []RefusalCode{
	CodeInvalidAct, CodeCaseClosed, CodeExhibitNotFound, CodeNotOfferingSide, CodeOwnExhibit,
	CodeEvidenceStage, CodeDuplicateExhibit, CodeFileTooLarge, CodeSideQuotaExceeded, CodeExhibitLimit,
	CodeAlreadyDisclosed, CodeChallengePending, CodeChallengeNotFound, CodeChallengeAnswered,
	CodeChallengeResolved, CodeDefectNotFound, CodeDefectResolved,
}

// RefusalError is a refused act; the state is unchanged. Detail is safe to
// show the caller.
type RefusalError = refusal.Error[RefusalCode]

func refuse(code RefusalCode, format string, args ...any) *RefusalError {
	return refusal.New(code, format, args...)
}
