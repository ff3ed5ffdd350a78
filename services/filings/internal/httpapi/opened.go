package httpapi

import (
	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

// caseView is the confirmed case (schemaVersion confirmed-filing-v2).
// ShowOnce is set on the first 201 only.
type caseView struct {
	SchemaVersion      string            `json:"schemaVersion"`
	CaseID             string            `json:"caseId"`
	ExternalCaseID     string            `json:"externalCaseId"`
	Status             string            `json:"status"`
	Rules              rulesView         `json:"rules"`
	CreatedAt          string            `json:"createdAt"`
	Headless           headlessView      `json:"headless"`
	CaseMode           string            `json:"caseMode"`
	IntakeMode         string            `json:"intakeMode"`
	ConfirmationPolicy policyView        `json:"confirmationPolicy"`
	Procedure          procedureView     `json:"procedure"`
	Participants       []participantView `json:"participants"`
	Evaluation         *caseEvaluation   `json:"evaluation,omitempty"`
	ShowOnce           *showOnce         `json:"showOnce,omitempty"`
}

type headlessView struct {
	RespondentHandoffPath string `json:"respondentHandoffPath"`
	AnswerPath            string `json:"answerPath"`
	HostedRespondentPath  string `json:"hostedRespondentPath,omitempty"`
	CapabilityDelivery    string `json:"capabilityDelivery"`
}

type caseEvaluation struct {
	ExternalEvaluationID string `json:"externalEvaluationId"`
	EvaluationDigest     string `json:"evaluationDigest"`
	ResourcePath         string `json:"resourcePath"`
}

func toCaseView(c draft.ConfirmedCase) caseView {
	v := caseView{
		SchemaVersion:  draft.SchemaConfirmedFiling,
		CaseID:         c.CaseID,
		ExternalCaseID: c.ExternalCaseID,
		Status:         string(c.Status),
		Rules:          rulesView{Version: c.Rules.Version, Hash: c.Rules.Hash},
		CreatedAt:      timestamp(c.CreatedAt),
		Headless: headlessView{
			RespondentHandoffPath: c.Headless.RespondentHandoffPath, AnswerPath: c.Headless.AnswerPath,
			HostedRespondentPath: c.Headless.HostedRespondentPath, CapabilityDelivery: c.Headless.CapabilityDelivery,
		},
		CaseMode:           string(c.CaseMode),
		IntakeMode:         string(c.IntakeMode),
		ConfirmationPolicy: policyView{Mode: string(c.ConfirmationMode)},
		Procedure:          toProcedureView(c.Procedure),
		Participants:       toParticipantViews(c.Participants, false),
	}
	if c.Evaluation != nil {
		v.Evaluation = &caseEvaluation{ExternalEvaluationID: c.Evaluation.ExternalEvaluationID, EvaluationDigest: c.Evaluation.EvaluationDigest, ResourcePath: c.Evaluation.ResourcePath}
	}
	return v
}
