package procedure

import (
	"fmt"

	"github.com/pcourt/pcourt/libs/refusal"
)

// RefusalCode is the stable code of a refused act. The HTTP status each
// maps to is in docs/cases-procedure.md.
type RefusalCode string

// The refusal codes, in the order Decide checks them.
const (
	CodeInvalidAct                RefusalCode = "invalid_act"                    // 400
	CodeNotAParticipant           RefusalCode = "not_a_participant"              // 403
	CodeCaseClosed                RefusalCode = "case_closed"                    // 409
	CodeWrongSide                 RefusalCode = "wrong_side"                     // 403
	CodeStageClosed               RefusalCode = "stage_closed"                   // 409
	CodeDeadlinePassed            RefusalCode = "deadline_passed"                // 409
	CodeAlreadyJoined             RefusalCode = "already_joined"                 // 409
	CodeInvitationMismatch        RefusalCode = "invitation_mismatch"            // 403
	CodeFilingLimitReached        RefusalCode = "filing_limit_reached"           // 409
	CodeSubmissionNotFound        RefusalCode = "submission_not_found"           // 404
	CodeMessageNotFound           RefusalCode = "message_not_found"              // 404
	CodeEntryNotFound             RefusalCode = "entry_not_found"                // 404
	CodeRecordDigestMismatch      RefusalCode = "record_summary_digest_mismatch" // 422
	CodeRecordAlreadyConfirmed    RefusalCode = "record_already_confirmed"       // 409
	CodeTerminationPending        RefusalCode = "termination_pending"            // 409
	CodeTerminationRequestUnknown RefusalCode = "termination_request_not_found"  // 404
	CodeRespondentNotHosted       RefusalCode = "respondent_not_hosted"          // 409
	CodeLoginReissueLimited       RefusalCode = "login_reissue_limited"          // 429

	// The representatives' (representatives.go).
	CodeRepresentativeExists       RefusalCode = "representative_exists"        // 409
	CodeRepresentativeLimitReached RefusalCode = "representative_limit_reached" // 409
	CodeRepresentativeNotFound     RefusalCode = "representative_not_found"     // 404
)

// RefusalError is a refused act: the case and the act are well formed but
// the act may not happen now. Detail is safe to show the caller.
type RefusalError = refusal.Error[RefusalCode]

// One sentinel per refusal code, for errors.Is.
var (
	ErrInvalidAct                = &RefusalError{Code: CodeInvalidAct}
	ErrNotAParticipant           = &RefusalError{Code: CodeNotAParticipant}
	ErrCaseClosed                = &RefusalError{Code: CodeCaseClosed}
	ErrWrongSide                 = &RefusalError{Code: CodeWrongSide}
	ErrStageClosed               = &RefusalError{Code: CodeStageClosed}
	ErrDeadlinePassed            = &RefusalError{Code: CodeDeadlinePassed}
	ErrAlreadyJoined             = &RefusalError{Code: CodeAlreadyJoined}
	ErrInvitationMismatch        = &RefusalError{Code: CodeInvitationMismatch}
	ErrFilingLimitReached        = &RefusalError{Code: CodeFilingLimitReached}
	ErrSubmissionNotFound        = &RefusalError{Code: CodeSubmissionNotFound}
	ErrMessageNotFound           = &RefusalError{Code: CodeMessageNotFound}
	ErrEntryNotFound             = &RefusalError{Code: CodeEntryNotFound}
	ErrRecordDigestMismatch      = &RefusalError{Code: CodeRecordDigestMismatch}
	ErrRecordAlreadyConfirmed    = &RefusalError{Code: CodeRecordAlreadyConfirmed}
	ErrTerminationPending        = &RefusalError{Code: CodeTerminationPending}
	ErrTerminationRequestUnknown = &RefusalError{Code: CodeTerminationRequestUnknown}
	ErrRespondentNotHosted       = &RefusalError{Code: CodeRespondentNotHosted}
	ErrLoginReissueLimited       = &RefusalError{Code: CodeLoginReissueLimited}

	ErrRepresentativeExists       = &RefusalError{Code: CodeRepresentativeExists}
	ErrRepresentativeLimitReached = &RefusalError{Code: CodeRepresentativeLimitReached}
	ErrRepresentativeNotFound     = &RefusalError{Code: CodeRepresentativeNotFound}
)

// RefusalCodes lists every code in check order, for docs and tests.
var RefusalCodes = []RefusalCode{
	CodeInvalidAct, CodeNotAParticipant, CodeCaseClosed, CodeWrongSide, CodeStageClosed, CodeDeadlinePassed,
	CodeAlreadyJoined, CodeInvitationMismatch, CodeFilingLimitReached, CodeSubmissionNotFound, CodeMessageNotFound,
	CodeEntryNotFound, CodeRecordDigestMismatch, CodeRecordAlreadyConfirmed, CodeTerminationPending, CodeTerminationRequestUnknown,
	CodeRespondentNotHosted, CodeLoginReissueLimited,
	CodeRepresentativeExists, CodeRepresentativeLimitReached, CodeRepresentativeNotFound,
}

func refuse(code RefusalCode, format string, args ...any) *RefusalError {
	return &RefusalError{Code: code, Detail: fmt.Sprintf(format, args...)}
}
