package draft

import "time"

// CapabilityDelivery is how an opened case hands out its initial
// capabilities: once, in the first response, never on a replay.
const CapabilityDelivery = "show_once_not_replayed"

// ConfirmedCase is the content of the confirmed-filing-v2 resource: the case
// a draft opened. The showOnce secrets are not here; the store mints them.
type ConfirmedCase struct {
	CaseID           string
	ExternalCaseID   string
	Status           CaseStatus
	Rules            Rules
	CreatedAt        time.Time
	Headless         Headless
	CaseMode         CaseMode
	IntakeMode       IntakeMode
	ConfirmationMode ConfirmationMode
	Procedure        Procedure
	ProcedureName    ProcedureName
	Participants     []Participant
	Evaluation       *CaseEvaluation // nil for a proceeding

	// Not in the resource; for the store and the case-opened event.
	DraftID     string
	DraftDigest string
	TenantID    string
	Environment string
	PartnerID   string
}

// Headless are the API paths a headless integration continues with.
type Headless struct {
	RespondentHandoffPath string
	AnswerPath            string
	// HostedRespondentPath is set when a respondent has not confirmed
	// through the API (its confirmation was not required) and so accepts on
	// the hosted respond page, with a capability delivered once.
	HostedRespondentPath string
	CapabilityDelivery   string
}

// CaseEvaluation points at an evaluation case's definition.
type CaseEvaluation struct {
	ExternalEvaluationID string
	EvaluationDigest     string
	ResourcePath         string
}

// Opened returns the case d opens, created at caseOpenedAt (normally
// d.OpenedAt()). Call it once d.Status() is opened.
func Opened(d Draft, caseOpenedAt time.Time) ConfirmedCase {
	id := d.reservedCaseID
	c := ConfirmedCase{
		CaseID:         id,
		ExternalCaseID: d.externalCaseID,
		Status:         CaseStatusOpen,
		Rules:          d.rules,
		CreatedAt:      instant(caseOpenedAt),
		Headless: Headless{
			RespondentHandoffPath: "/api/cases/" + id + "/invitations",
			AnswerPath:            "/api/cases/" + id + "/answer",
			CapabilityDelivery:    CapabilityDelivery,
		},
		CaseMode:         d.caseMode,
		IntakeMode:       d.intakeMode,
		ConfirmationMode: d.confirmationMode,
		Procedure:        d.procedure,
		ProcedureName:    d.ProcedureName(),
		Participants:     d.Participants(),
		DraftID:          d.id,
		DraftDigest:      d.digest,
		TenantID:         d.tenantID,
		Environment:      d.environment,
		PartnerID:        d.partnerID,
	}
	for _, conf := range d.confirmations {
		if conf.Side == SideRespondent && !conf.Required {
			c.Headless.HostedRespondentPath = "/respond/" + id
		}
	}
	if d.evaluation != nil {
		c.Evaluation = &CaseEvaluation{
			ExternalEvaluationID: d.evaluation.ExternalEvaluationID,
			EvaluationDigest:     d.evaluationDigest,
			ResourcePath:         "/api/cases/" + id + "/evaluation",
		}
	}
	return c
}
