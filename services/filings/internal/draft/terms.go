package draft

import "time"

// timeLayout is how a draft writes instants: UTC, milliseconds, Z.
const timeLayout = "2006-01-02T15:04:05.000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// termsJSON is the draft's immutable content: the preimage of the digest
// once canonicalized. Field names are the resource's.
type termsJSON struct {
	SchemaVersion              string                 `json:"schemaVersion"`
	DraftID                    string                 `json:"draftId"`
	ReservedCaseID             string                 `json:"reservedCaseId"`
	ExternalCaseID             string                 `json:"externalCaseId"`
	Rules                      rulesJSON              `json:"rules"`
	Fee                        feeTermsJSON           `json:"fee"`
	CaseMode                   CaseMode               `json:"caseMode"`
	IntakeMode                 IntakeMode             `json:"intakeMode"`
	ConfirmationPolicy         confirmationPolicyJSON `json:"confirmationPolicy"`
	Procedure                  procedureJSON          `json:"procedure"`
	Participants               []participantJSON      `json:"participants"`
	Evaluation                 *evaluationJSON        `json:"evaluation,omitempty"`
	Claim                      claimJSON              `json:"claim"`
	ClaimantAcceptanceIdentity string                 `json:"claimantAcceptanceIdentity,omitempty"`
	ExpiresAt                  string                 `json:"expiresAt"`
	TenantID                   string                 `json:"tenantId"`
	Environment                string                 `json:"environment"`
	PartnerID                  string                 `json:"partnerId"`
	// Origin is present only for a draft prepared from AP2 or UCP objects,
	// so the digest of every other draft is what it always was.
	Origin *originJSON `json:"origin,omitempty"`
}

type rulesJSON struct {
	Version string `json:"version"`
	Hash    string `json:"hash"`
}

type feeTermsJSON struct {
	FeeID       string        `json:"feeId"`
	Currency    string        `json:"currency"`
	AmountMinor int64         `json:"amountMinor"`
	Tier        FeeTier       `json:"tier"`
	Collection  FeeCollection `json:"collection"`
}

type confirmationPolicyJSON struct {
	Mode ConfirmationMode `json:"mode"`
}

type procedureJSON struct {
	SchemaVersion              string  `json:"schemaVersion"`
	Profile                    Profile `json:"profile"`
	AnswerRequired             bool    `json:"answerRequired"`
	EvidenceRounds             int     `json:"evidenceRounds"`
	RebuttalRounds             int     `json:"rebuttalRounds"`
	FilingsPerSidePerStage     int     `json:"filingsPerSidePerStage"`
	RecordConfirmationRequired bool    `json:"recordConfirmationRequired"`
}

type participantJSON struct {
	ParticipantID     string            `json:"participantId"`
	Side              Side              `json:"side"`
	PartnerID         string            `json:"partnerId,omitempty"`
	PrincipalID       string            `json:"principalId"`
	PrincipalKind     PrincipalKind     `json:"principalKind"`
	AgentID           string            `json:"agentId,omitempty"`
	AccountID         string            `json:"accountId,omitempty"`
	AuthorizationMode AuthorizationMode `json:"authorizationMode"`
	Initiator         bool              `json:"initiator"`
}

type claimJSON struct {
	AmountInDisputeMinor   int64  `json:"amountInDisputeMinor"`
	Currency               string `json:"currency"`
	Remedy                 Remedy `json:"remedy"`
	Summary                string `json:"summary"`
	MicroClaimsTierConsent bool   `json:"microClaimsTierConsent"`
}

// terms returns the draft's immutable content.
func (d Draft) terms() termsJSON {
	t := termsJSON{
		SchemaVersion:  SchemaCaseDraft,
		DraftID:        d.id,
		ReservedCaseID: d.reservedCaseID,
		ExternalCaseID: d.externalCaseID,
		Rules:          rulesJSON{Version: d.rules.Version, Hash: d.rules.Hash},
		Fee: feeTermsJSON{
			FeeID:       d.fee.FeeID,
			Currency:    d.fee.Currency,
			AmountMinor: d.fee.AmountMinor,
			Tier:        d.fee.Tier,
			Collection:  d.fee.Collection,
		},
		CaseMode:                   d.caseMode,
		IntakeMode:                 d.intakeMode,
		ConfirmationPolicy:         confirmationPolicyJSON{Mode: d.confirmationMode},
		Procedure:                  toProcedureJSON(d.procedure),
		Participants:               make([]participantJSON, len(d.participants)),
		Claim:                      claimJSON{AmountInDisputeMinor: d.claim.AmountInDisputeMinor, Currency: "USD", Remedy: d.claim.Remedy, Summary: d.claim.Summary, MicroClaimsTierConsent: d.claim.MicroTierConsent},
		ClaimantAcceptanceIdentity: d.claimantAcceptanceIdentity,
		ExpiresAt:                  formatTime(d.expiresAt),
		TenantID:                   d.tenantID,
		Environment:                d.environment,
		PartnerID:                  d.partnerID,
		Origin:                     d.origin.toJSON(),
	}
	for i, p := range d.participants {
		t.Participants[i] = toParticipantJSON(p)
	}
	if d.evaluation != nil {
		e := d.evaluation.toJSON()
		e.EvaluationDigest = d.evaluationDigest
		t.Evaluation = &e
	}
	return t
}

func toProcedureJSON(p Procedure) procedureJSON {
	return procedureJSON{
		SchemaVersion:              SchemaProcedurePlan,
		Profile:                    p.Profile,
		AnswerRequired:             p.AnswerRequired,
		EvidenceRounds:             p.EvidenceRounds,
		RebuttalRounds:             p.RebuttalRounds,
		FilingsPerSidePerStage:     p.FilingsPerSidePerStage,
		RecordConfirmationRequired: p.RecordConfirmationRequired,
	}
}

func (j procedureJSON) toProcedure() Procedure {
	return Procedure{
		Profile:                    j.Profile,
		AnswerRequired:             j.AnswerRequired,
		EvidenceRounds:             j.EvidenceRounds,
		RebuttalRounds:             j.RebuttalRounds,
		FilingsPerSidePerStage:     j.FilingsPerSidePerStage,
		RecordConfirmationRequired: j.RecordConfirmationRequired,
	}
}

func toParticipantJSON(p Participant) participantJSON {
	return participantJSON{
		ParticipantID:     p.ID,
		Side:              p.Side,
		PartnerID:         p.PartnerID,
		PrincipalID:       p.PrincipalID,
		PrincipalKind:     p.PrincipalKind,
		AgentID:           p.AgentID,
		AccountID:         p.AccountID,
		AuthorizationMode: p.AuthorizationMode,
		Initiator:         p.Initiator,
	}
}

func (j participantJSON) toParticipant() Participant {
	return Participant{
		ID:                j.ParticipantID,
		Side:              j.Side,
		PartnerID:         j.PartnerID,
		PrincipalID:       j.PrincipalID,
		PrincipalKind:     j.PrincipalKind,
		AgentID:           j.AgentID,
		AccountID:         j.AccountID,
		AuthorizationMode: j.AuthorizationMode,
		Initiator:         j.Initiator,
	}
}
