package httpapi

import (
	"time"

	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

// draftView is the case draft resource (schemaVersion case-draft-v2). The
// canonical view (GET /api/filings/{id}) is the same stored packet and
// digest; it adds public principal kinds and separates the procedure (its
// name) from the schedule (the plan).
type draftView struct {
	SchemaVersion      string             `json:"schemaVersion"`
	DraftID            string             `json:"draftId"`
	ReservedCaseID     string             `json:"reservedCaseId"`
	ExternalCaseID     string             `json:"externalCaseId"`
	Status             string             `json:"status"`
	DraftDigest        string             `json:"draftDigest"`
	ExpiresAt          string             `json:"expiresAt"`
	Rules              rulesView          `json:"rules"`
	Fee                feeView            `json:"fee"`
	CaseMode           string             `json:"caseMode"`
	IntakeMode         string             `json:"intakeMode"`
	ConfirmationPolicy policyView         `json:"confirmationPolicy"`
	Procedure          any                `json:"procedure"`
	Schedule           *procedureView     `json:"schedule,omitempty"`
	Participants       []participantView  `json:"participants"`
	Confirmations      []confirmationView `json:"confirmations"`
	Evaluation         *evaluationView    `json:"evaluation,omitempty"`
	// Origin is present on a draft prepared from AP2 or UCP objects.
	Origin *originView `json:"origin,omitempty"`
}

type rulesView struct {
	Version string `json:"version"`
	Hash    string `json:"hash"`
}

type feeView struct {
	FeeID       string `json:"feeId"`
	Currency    string `json:"currency"`
	AmountMinor int64  `json:"amountMinor"`
	Tier        string `json:"tier"`
	Collection  string `json:"collection"`
	Status      string `json:"status"`
}

type policyView struct {
	Mode string `json:"mode"`
}

type procedureView struct {
	SchemaVersion              string `json:"schemaVersion"`
	Profile                    string `json:"profile"`
	AnswerRequired             bool   `json:"answerRequired"`
	EvidenceRounds             int    `json:"evidenceRounds"`
	RebuttalRounds             int    `json:"rebuttalRounds"`
	FilingsPerSidePerStage     int    `json:"filingsPerSidePerStage"`
	RecordConfirmationRequired bool   `json:"recordConfirmationRequired"`
}

// canonicalProcedure is the canonical view's procedure: its name only.
type canonicalProcedure struct {
	Name string `json:"name"`
}

type participantView struct {
	ParticipantID     string `json:"participantId"`
	Side              string `json:"side"`
	PartnerID         string `json:"partnerId,omitempty"`
	PrincipalID       string `json:"principalId"`
	PrincipalKind     string `json:"principalKind,omitempty"`
	AgentID           string `json:"agentId,omitempty"`
	AccountID         string `json:"accountId,omitempty"`
	AuthorizationMode string `json:"authorizationMode"`
}

type confirmationView struct {
	ParticipantID         string `json:"participantId"`
	Side                  string `json:"side"`
	PartnerID             string `json:"partnerId,omitempty"`
	AuthorizationMode     string `json:"authorizationMode"`
	Required              bool   `json:"required"`
	Status                string `json:"status"`
	ConfirmationStatement string `json:"confirmationStatement"`
}

type evaluationView struct {
	SchemaVersion        string   `json:"schemaVersion"`
	ExternalEvaluationID string   `json:"externalEvaluationId"`
	EvaluationDigest     string   `json:"evaluationDigest"`
	Question             question `json:"question"`
	AllowedOutcomes      []string `json:"allowedOutcomes"`
	EvidencePolicy       string   `json:"evidencePolicy"`
	ReviewPolicy         string   `json:"reviewPolicy"`
}

type question struct {
	Text     string   `json:"text"`
	Criteria []string `json:"criteria"`
}

func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func (h *handlers) draftView(d draft.Draft, route draft.Route) draftView {
	canonical := route == draft.RouteCanonical
	plan := toProcedureView(d.Procedure())
	v := draftView{
		SchemaVersion:      draft.SchemaCaseDraft,
		DraftID:            d.ID(),
		ReservedCaseID:     d.ReservedCaseID(),
		ExternalCaseID:     d.ExternalCaseID(),
		Status:             string(d.Status()),
		DraftDigest:        d.Digest(),
		ExpiresAt:          timestamp(d.ExpiresAt()),
		Rules:              rulesView{Version: d.Rules().Version, Hash: d.Rules().Hash},
		Fee:                toFeeView(d.Fee()),
		CaseMode:           string(d.CaseMode()),
		IntakeMode:         string(d.IntakeMode()),
		ConfirmationPolicy: policyView{Mode: string(d.ConfirmationMode())},
		Procedure:          plan,
		Participants:       toParticipantViews(d.Participants(), canonical),
	}
	if canonical {
		v.Procedure = canonicalProcedure{Name: string(d.ProcedureName())}
		v.Schedule = &plan
	}
	for _, c := range d.Confirmations() {
		v.Confirmations = append(v.Confirmations, confirmationView{
			ParticipantID: c.ParticipantID, Side: string(c.Side), PartnerID: c.PartnerID,
			AuthorizationMode: string(c.AuthorizationMode), Required: c.Required,
			Status: string(c.Status), ConfirmationStatement: c.Statement,
		})
	}
	if e, digest := d.Evaluation(); e != nil {
		v.Evaluation = &evaluationView{
			SchemaVersion: draft.SchemaEvaluation, ExternalEvaluationID: e.ExternalEvaluationID, EvaluationDigest: digest,
			Question:        question{Text: e.Question.Text, Criteria: e.Question.Criteria},
			AllowedOutcomes: e.AllowedOutcomes, EvidencePolicy: string(e.EvidencePolicy), ReviewPolicy: string(e.ReviewPolicy),
		}
	}
	v.Origin = toOriginView(d.Origin())
	return v
}

func toProcedureView(p draft.Procedure) procedureView {
	return procedureView{
		SchemaVersion: draft.SchemaProcedurePlan, Profile: string(p.Profile), AnswerRequired: p.AnswerRequired,
		EvidenceRounds: p.EvidenceRounds, RebuttalRounds: p.RebuttalRounds,
		FilingsPerSidePerStage: p.FilingsPerSidePerStage, RecordConfirmationRequired: p.RecordConfirmationRequired,
	}
}

func toFeeView(f draft.Fee) feeView {
	return feeView{FeeID: f.FeeID, Currency: f.Currency, AmountMinor: f.AmountMinor, Tier: string(f.Tier), Collection: string(f.Collection), Status: string(f.Status)}
}

// toParticipantViews shows principal kinds only in the canonical view, as
// the earlier v2 resource never had them.
func toParticipantViews(ps []draft.Participant, canonical bool) []participantView {
	out := make([]participantView, 0, len(ps))
	for _, p := range ps {
		v := participantView{
			ParticipantID: p.ID, Side: string(p.Side), PartnerID: p.PartnerID, PrincipalID: p.PrincipalID,
			AgentID: p.AgentID, AccountID: p.AccountID, AuthorizationMode: string(p.AuthorizationMode),
		}
		if canonical {
			v.PrincipalKind = string(p.PrincipalKind)
		}
		out = append(out, v)
	}
	return out
}
