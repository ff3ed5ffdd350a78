package httpapi

// The JSON shapes of the draft routes. Requests decode strictly into these;
// responses are built from the domain by toDraftView / toCaseView.

// procedureBody is the v2 "procedure" object, and the canonical "schedule".
// It takes the plan exactly as a draft read returns it, constants included.
type procedureBody struct {
	SchemaVersion              *string `json:"schemaVersion"`
	RecordConfirmationRequired *bool   `json:"recordConfirmationRequired"`
	Profile                    *string `json:"profile"`
	AnswerRequired             *bool   `json:"answerRequired"`
	EvidenceRounds             *int    `json:"evidenceRounds"`
	RebuttalRounds             *int    `json:"rebuttalRounds"`
	FilingsPerSidePerStage     *int    `json:"filingsPerSidePerStage"`
}

type participantBody struct {
	ParticipantID     string `json:"participantId"`
	Side              string `json:"side"`
	PartnerID         string `json:"partnerId,omitempty"`
	PrincipalID       string `json:"principalId"`
	PrincipalKind     string `json:"principalKind"`
	AgentID           string `json:"agentId,omitempty"`
	AccountID         string `json:"accountId,omitempty"`
	AuthorizationMode string `json:"authorizationMode"`
	Initiator         bool   `json:"initiator,omitempty"`
}

type claimBody struct {
	AmountInDisputeMinor *int64 `json:"amountInDisputeMinor"`
	Remedy               string `json:"remedy"`
	Summary              string `json:"summary,omitempty"`
	MicroTierConsent     bool   `json:"microClaimsTierConsent,omitempty"`
}

type evaluationBody struct {
	ExternalEvaluationID string `json:"externalEvaluationId"`
	Question             struct {
		Text     string   `json:"text"`
		Criteria []string `json:"criteria"`
	} `json:"question"`
	AllowedOutcomes []string `json:"allowedOutcomes"`
	EvidencePolicy  string   `json:"evidencePolicy"`
	ReviewPolicy    string   `json:"reviewPolicy"`
}

type policyBody struct {
	Mode string `json:"mode"`
}

// createDraftBody is POST /api/v2/case-drafts and the legacy
// POST /api/v2/filings/prepare: principal kinds human, organization,
// ai_agent; the plan in "procedure"; claimantAcceptanceIdentity optional.
type createDraftBody struct {
	ExternalCaseID             string            `json:"externalCaseId"`
	CaseMode                   string            `json:"caseMode"`
	IntakeMode                 string            `json:"intakeMode"`
	ConfirmationPolicy         policyBody        `json:"confirmationPolicy"`
	Procedure                  procedureBody     `json:"procedure"`
	Participants               []participantBody `json:"participants"`
	Claim                      claimBody         `json:"claim"`
	Evaluation                 *evaluationBody   `json:"evaluation,omitempty"`
	ClaimantAcceptanceIdentity string            `json:"claimantAcceptanceIdentity,omitempty"`
	ExpiresInSeconds           *int              `json:"expiresInSeconds,omitempty"`
}

// createFilingBody is canonical POST /api/filings: public principal kinds
// individual, organization, autonomous_agent; the plan in "schedule";
// claimantAcceptanceIdentity required.
type createFilingBody struct {
	ExternalCaseID             string            `json:"externalCaseId"`
	CaseMode                   string            `json:"caseMode"`
	IntakeMode                 string            `json:"intakeMode"`
	ConfirmationPolicy         policyBody        `json:"confirmationPolicy"`
	Schedule                   procedureBody     `json:"schedule"`
	Participants               []participantBody `json:"participants"`
	Claim                      claimBody         `json:"claim"`
	Evaluation                 *evaluationBody   `json:"evaluation,omitempty"`
	ClaimantAcceptanceIdentity string            `json:"claimantAcceptanceIdentity"`
	ExpiresInSeconds           *int              `json:"expiresInSeconds,omitempty"`
}

// confirmBody is the draft confirmation request body of the spec.
type confirmBody struct {
	ParticipantID         string `json:"participantId"`
	DraftDigest           string `json:"draftDigest"`
	ConfirmationStatement string `json:"confirmationStatement"`
	ActorID               string `json:"actorId"`
	PrincipalID           string `json:"principalId"`
	ConfirmationMethod    string `json:"confirmationMethod"`
	ConfirmationReference string `json:"confirmationReference"`
}
