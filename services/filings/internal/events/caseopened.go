// Package events holds the facts the filings service publishes, as data:
// their Kafka topics, schema names and payload types. The payloads are
// built from the draft domain, never from HTTP views, so that an answer's
// shape can change without changing a contract another service consumes.
// Each payload has a JSON Schema under api/events; the tests validate
// every produced payload against it.
package events

import (
	"encoding/json"
	"time"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

// The case-opened fact. Version 2 carries the facts at the top level and
// no HTTP view (version 1 nested the confirmed-filing-v2 answer under
// "case"); its schema is api/events/filings-case-opened-v2.schema.json.
const (
	CaseOpenedTopic  = api.CaseOpenedTopic
	CaseOpenedSchema = api.CaseOpenedSchema
)

// CaseOpened is everything the cases service needs to own a case without
// asking filings: who it belongs to, who takes part on which side and
// through which partner, the procedure plan and the rules pinned at
// opening, the fee and the hashes of the secrets shown once.
type CaseOpened struct {
	SchemaVersion  string    `json:"schemaVersion"`
	EventID        string    `json:"eventId"`
	OpenedAt       Timestamp `json:"openedAt"`
	CaseID         string    `json:"caseId"`
	ExternalCaseID string    `json:"externalCaseId"`
	// Tenant, Environment and PartnerID are whose case it is: the
	// preparing partner's.
	Tenant      string `json:"tenant"`
	Environment string `json:"environment"`
	PartnerID   string `json:"partnerId"`
	DraftID     string `json:"draftId"`
	// DraftDigest is the exact digest every required participant confirmed.
	DraftDigest   string         `json:"draftDigest"`
	Rules         Rules          `json:"rules"`
	Procedure     Plan           `json:"procedure"`
	Participants  []Participant  `json:"participants"`
	Recipients    Recipients     `json:"recipients"`
	Confirmations []Confirmation `json:"confirmations"`
	Fee           Fee            `json:"fee"`
	// CapabilityHashes maps a purpose (respondent_invite, respondent_login,
	// claimant_party) to the SHA-256 of the secret shown once; empty when
	// the opening showed none (the fee reconciler opened the case).
	CapabilityHashes map[string]string `json:"capabilityHashes"`
	// CaseMode, Claim and Evaluation are what the tribunal decides on: the
	// claim bounds what an award may order, an evaluation's definition
	// fixes its question and allowed outcomes.
	CaseMode   string      `json:"caseMode"`
	Claim      Claim       `json:"claim"`
	Evaluation *Evaluation `json:"evaluation,omitempty"`
	// Origin is set when the draft came from AP2 or UCP objects, so the
	// case can answer its resolution results in the protocol's terms.
	Origin *Origin `json:"origin,omitempty"`
}

// Origin is the agent-commerce origin of the case: the disputed
// transaction and its objects by digest (their bytes stay with the draft).
type Origin struct {
	Protocol  string           `json:"protocol"`
	Reference string           `json:"reference"`
	Reason    string           `json:"reason"`
	Merchant  string           `json:"merchant"`
	PaidMinor int64            `json:"paidMinor"`
	Currency  string           `json:"currency"`
	Evidence  []OriginEvidence `json:"evidence"`
}

// OriginEvidence is one protocol object by digest.
type OriginEvidence struct {
	Kind      string `json:"kind"`
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
}

// Claim is what the claimant asks for, in minor units of Currency.
type Claim struct {
	AmountMinor int64  `json:"amountMinor"`
	Currency    string `json:"currency"`
	Remedy      string `json:"remedy"`
	Summary     string `json:"summary"`
}

// Evaluation is an evaluation case's pinned definition (narrow-evaluation-v2).
type Evaluation struct {
	SchemaVersion        string   `json:"schemaVersion"`
	ExternalEvaluationID string   `json:"externalEvaluationId"`
	EvaluationDigest     string   `json:"evaluationDigest"`
	Question             string   `json:"question"`
	Criteria             []string `json:"criteria"`
	AllowedOutcomes      []string `json:"allowedOutcomes"`
	EvidencePolicy       string   `json:"evidencePolicy"`
	ReviewPolicy         string   `json:"reviewPolicy"`
}

// Timestamp is an instant in the project's wire form: UTC, exactly three
// fractional digits, Z.
type Timestamp time.Time

// MarshalJSON writes the wire form.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z"))
}

// UnmarshalJSON reads the wire form (any RFC 3339 instant).
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	*t = Timestamp(at)
	return nil
}

// Rules are the rules version and hash pinned at opening.
type Rules struct {
	Version string `json:"version"`
	Hash    string `json:"hash"`
}

// Plan is the procedure plan (case-procedure-plan-v2) the case runs.
type Plan struct {
	Profile                    string `json:"profile"`
	AnswerRequired             bool   `json:"answerRequired"`
	EvidenceRounds             int    `json:"evidenceRounds"`
	RebuttalRounds             int    `json:"rebuttalRounds"`
	FilingsPerSidePerStage     int    `json:"filingsPerSidePerStage"`
	RecordConfirmationRequired bool   `json:"recordConfirmationRequired"`
}

// Participant is one party of the case.
type Participant struct {
	ParticipantID string `json:"participantId"`
	Side          string `json:"side"`
	// PartnerID is the partner the participant acts through, set for
	// every participant but an account's.
	PartnerID     string `json:"partnerId"`
	PrincipalID   string `json:"principalId"`
	PrincipalKind string `json:"principalKind"`
	AgentID       string `json:"agentId,omitempty"`
	// AccountID is the platform account that takes part as the
	// participant; PartnerID is then empty: an account acts through no
	// partner, and no partner is notified for it.
	AccountID         string `json:"accountId,omitempty"`
	AuthorizationMode string `json:"authorizationMode"`
	Initiator         bool   `json:"initiator"`
	// Joined says the participant takes part from the opening: every
	// claimant, and a respondent whose confirmation the draft holds. A
	// respondent who did not confirm joins later, through its invitation.
	Joined bool `json:"joined"`
	// Hosted says no partner acts for the participant (draft.Hosted): a
	// respondent that named no partner or agent and did not confirm.
	// PartnerID is then the partner that delivers its invitation, which
	// never acts for it; joining binds it.
	Hosted bool `json:"hosted,omitempty"`
}

// Partner names one partner to notify.
type Partner struct {
	Tenant      string `json:"tenant"`
	Environment string `json:"environment"`
	PartnerID   string `json:"partnerId"`
}

// Recipients are the partners told about the case, by side, each once.
type Recipients struct {
	Claimant   []Partner `json:"claimant"`
	Respondent []Partner `json:"respondent"`
}

// Confirmation is one participant's confirmation as the draft recorded it.
type Confirmation struct {
	ParticipantID         string     `json:"participantId"`
	Side                  string     `json:"side"`
	Required              bool       `json:"required"`
	Status                string     `json:"status"`
	ConfirmedAt           *Timestamp `json:"confirmedAt,omitempty"`
	ActorID               string     `json:"actorId,omitempty"`
	ConfirmationReference string     `json:"confirmationReference,omitempty"`
}

// Fee is the filing fee as it stood at opening.
type Fee struct {
	FeeID       string `json:"feeId"`
	Currency    string `json:"currency"`
	AmountMinor int64  `json:"amountMinor"`
	Tier        string `json:"tier"`
	Collection  string `json:"collection"`
	Status      string `json:"status"`
}

// NewCaseOpened builds the fact of the case d opened (c is draft.Opened of
// d), with the hashes of the secrets the opening showed.
func NewCaseOpened(d draft.Draft, c draft.ConfirmedCase, capabilityHashes map[string]string) CaseOpened {
	e := CaseOpened{
		SchemaVersion:    CaseOpenedSchema,
		EventID:          "case-opened:" + c.CaseID,
		OpenedAt:         Timestamp(c.CreatedAt),
		CaseID:           c.CaseID,
		ExternalCaseID:   c.ExternalCaseID,
		Tenant:           c.TenantID,
		Environment:      c.Environment,
		PartnerID:        c.PartnerID,
		DraftID:          c.DraftID,
		DraftDigest:      c.DraftDigest,
		Rules:            Rules{Version: c.Rules.Version, Hash: c.Rules.Hash},
		Procedure:        planOf(c.Procedure),
		Recipients:       Recipients{Claimant: []Partner{}, Respondent: []Partner{}},
		CapabilityHashes: map[string]string{},
	}
	for purpose, hash := range capabilityHashes {
		e.CapabilityHashes[purpose] = hash
	}
	claim := d.Claim()
	e.CaseMode = string(d.CaseMode())
	e.Claim = Claim{AmountMinor: claim.AmountInDisputeMinor, Currency: "USD", Remedy: string(claim.Remedy), Summary: claim.Summary}
	if ev, digest := d.Evaluation(); ev != nil {
		e.Evaluation = &Evaluation{
			SchemaVersion: draft.SchemaEvaluation, ExternalEvaluationID: ev.ExternalEvaluationID, EvaluationDigest: digest,
			Question: ev.Question.Text, Criteria: nonNil(ev.Question.Criteria), AllowedOutcomes: nonNil(ev.AllowedOutcomes),
			EvidencePolicy: string(ev.EvidencePolicy), ReviewPolicy: string(ev.ReviewPolicy),
		}
	}
	if o := d.Origin(); o != nil {
		e.Origin = &Origin{Protocol: string(o.Protocol), Reference: o.Reference, Reason: o.Reason, Merchant: o.Merchant,
			PaidMinor: o.PaidMinor, Currency: o.Currency}
		for _, ev := range o.Evidence {
			e.Origin.Evidence = append(e.Origin.Evidence, OriginEvidence{Kind: ev.Kind, MediaType: ev.MediaType, Digest: ev.Digest})
		}
	}
	confirmed := map[string]bool{}
	for _, conf := range d.Confirmations() {
		confirmed[conf.ParticipantID] = conf.Status == draft.ConfirmationConfirmed
		out := Confirmation{
			ParticipantID: conf.ParticipantID, Side: string(conf.Side), Required: conf.Required, Status: string(conf.Status),
			ActorID: conf.ActorID, ConfirmationReference: conf.ConfirmationReference,
		}
		if !conf.ConfirmedAt.IsZero() {
			at := Timestamp(conf.ConfirmedAt)
			out.ConfirmedAt = &at
		}
		e.Confirmations = append(e.Confirmations, out)
	}
	seen := map[string]bool{}
	for _, p := range c.Participants {
		partner := d.EffectivePartner(p)
		e.Participants = append(e.Participants, Participant{
			ParticipantID: p.ID, Side: string(p.Side), PartnerID: partner, PrincipalID: p.PrincipalID,
			PrincipalKind: string(p.PrincipalKind), AgentID: p.AgentID, AccountID: p.AccountID, AuthorizationMode: string(p.AuthorizationMode),
			Initiator: p.Initiator, Joined: p.Side == draft.SideClaimant || confirmed[p.ID], Hosted: d.Hosted(p),
		})
		if partner == "" || seen[string(p.Side)+"/"+partner] {
			continue
		}
		seen[string(p.Side)+"/"+partner] = true
		to := Partner{Tenant: c.TenantID, Environment: c.Environment, PartnerID: partner}
		if p.Side == draft.SideClaimant {
			e.Recipients.Claimant = append(e.Recipients.Claimant, to)
		} else {
			e.Recipients.Respondent = append(e.Recipients.Respondent, to)
		}
	}
	f := d.Fee()
	e.Fee = Fee{FeeID: f.FeeID, Currency: f.Currency, AmountMinor: f.AmountMinor, Tier: string(f.Tier), Collection: string(f.Collection), Status: string(f.Status)}
	return e
}

func planOf(p draft.Procedure) Plan {
	return Plan{
		Profile: string(p.Profile), AnswerRequired: p.AnswerRequired, EvidenceRounds: p.EvidenceRounds,
		RebuttalRounds: p.RebuttalRounds, FilingsPerSidePerStage: p.FilingsPerSidePerStage,
		RecordConfirmationRequired: p.RecordConfirmationRequired,
	}
}

// OutboxEvent is the fact as the opening step appends it: keyed by case
// id, so one case's facts keep their order on the topic.
func (e CaseOpened) OutboxEvent() (outbox.Event, error) {
	payload, err := json.Marshal(e)
	if err != nil {
		return outbox.Event{}, err
	}
	return outbox.Event{ID: e.EventID, Topic: CaseOpenedTopic, Key: e.CaseID, Schema: CaseOpenedSchema, Payload: payload}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
