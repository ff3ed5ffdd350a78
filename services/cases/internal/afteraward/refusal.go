package afteraward

import "github.com/pcourt/pcourt/libs/refusal"

// RefusalCode is the stable code of a refused act. Its HTTP status is in
// docs/after-award.md (and afterawardflow.Problem).
type RefusalCode string

// The refusal codes, in the order Decide checks them.
const (
	CodeInvalidAct        RefusalCode = "invalid_after_award_act"      // 400
	CodeNotReviewer       RefusalCode = "not_award_reviewer"           // 403
	CodeNotObligor        RefusalCode = "not_obligor"                  // 403
	CodeNotPayee          RefusalCode = "not_payee"                    // 403
	CodeModeUnavailable   RefusalCode = "execution_mode_unavailable"   // 409
	CodeCaseClosed        RefusalCode = "case_closed"                  // 409
	CodeNoAward           RefusalCode = "award_not_issued"             // 409
	CodeAwardFinal        RefusalCode = "award_final"                  // 409
	CodeAwardNotFinal     RefusalCode = "award_not_final"              // 409
	CodeAwardHashMismatch RefusalCode = "award_hash_mismatch"          // 409
	CodeRecourseWaived    RefusalCode = "recourse_waived"              // 409
	CodeWindowClosed      RefusalCode = "post_award_window_closed"     // 409
	CodeRequestPending    RefusalCode = "post_award_request_pending"   // 409
	CodeRequestNotFound   RefusalCode = "post_award_request_not_found" // 404
	CodeRequestDecided    RefusalCode = "post_award_request_decided"   // 409
	CodeRemedyExceeds     RefusalCode = "remedy_exceeds_claim"         // 422
	CodeNotExecutable     RefusalCode = "remedy_not_executable"        // 422
	CodeAlreadyExecuted   RefusalCode = "already_executed"             // 409
	CodeExecutionExists   RefusalCode = "execution_exists"             // 409
	CodeExecutionNotFound RefusalCode = "execution_not_found"          // 404

	CodeNotAppellateReviewer RefusalCode = "not_appellate_reviewer"         // 403
	CodeNotAppellee          RefusalCode = "not_appellee"                   // 403
	CodeNotAppellant         RefusalCode = "not_appellant"                  // 403
	CodeAppealNotAllowed     RefusalCode = "appeal_not_allowed"             // 409
	CodeAppealWindowClosed   RefusalCode = "appeal_window_closed"           // 409
	CodeAppealPending        RefusalCode = "appeal_pending"                 // 409
	CodeNoAppellateReviewer  RefusalCode = "no_appellate_reviewer"          // 409
	CodeAppealNotFound       RefusalCode = "appeal_not_found"               // 404
	CodeAppealFeePaid        RefusalCode = "appeal_fee_paid"                // 409
	CodeAppealFeeNotPayable  RefusalCode = "appeal_fee_not_payable"         // 409
	CodeAppealFeeHeld        RefusalCode = "appeal_fee_payment_in_progress" // 409
	CodeAppealFeeUnpaid      RefusalCode = "appeal_fee_unpaid"              // 409
	CodeBriefingClosed       RefusalCode = "appeal_briefing_closed"         // 409
	CodeAppealAnswered       RefusalCode = "appeal_answered"                // 409
	CodeAnswerWindowOpen     RefusalCode = "appeal_answer_window_open"      // 409
	CodeBriefingOpen         RefusalCode = "appeal_briefing_open"           // 409
	CodeAppealClosed         RefusalCode = "appeal_closed"                  // 409
)

// RefusalCodes lists every code in check order, for docs and tests.
var RefusalCodes = []RefusalCode{
	CodeInvalidAct, CodeNotReviewer, CodeCaseClosed, CodeNoAward,
	// waiving and filing a request
	CodeAwardFinal, CodeRecourseWaived, CodeWindowClosed, CodeRequestPending,
	// deciding a request
	CodeRequestNotFound, CodeRequestDecided, CodeRemedyExceeds,
	// filing an appeal (after award_final and recourse_waived)
	CodeAppealNotAllowed, CodeAppealWindowClosed, CodeAppealPending, CodeNoAppellateReviewer,
	// the other acts on an appeal, in the order each checks them
	CodeAppealNotFound, CodeNotAppellateReviewer, CodeNotAppellee, CodeNotAppellant, CodeAppealFeePaid, CodeAppealFeeNotPayable, CodeAppealFeeHeld,
	CodeAppealFeeUnpaid, CodeBriefingClosed, CodeAppealAnswered, CodeAnswerWindowOpen, CodeAppealClosed, CodeBriefingOpen,
	// executing
	CodeModeUnavailable, CodeAwardNotFinal, CodeAwardHashMismatch, CodeNotExecutable, CodeNotObligor, CodeNotPayee,
	CodeAlreadyExecuted, CodeExecutionExists,
	// recording an attempt
	CodeExecutionNotFound,
}

// RefusalError is a refused act; the state is unchanged. Detail is safe to
// show the caller.
type RefusalError = refusal.Error[RefusalCode]

func refuse(code RefusalCode, format string, args ...any) *RefusalError {
	return refusal.New(code, format, args...)
}
