package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// CaseOpened is the payload of pc.filings.case-opened.v2
// (api/events/filings-case-opened-v2.schema.json) as this consumer reads
// it: the members of that schema the opening needs, no others. Fields are
// only ever added within a version, so unknown fields are ignored.
type CaseOpened struct {
	EventID          string              `json:"eventId"`
	OpenedAt         time.Time           `json:"openedAt"`
	CaseID           string              `json:"caseId"`
	ExternalCaseID   string              `json:"externalCaseId"`
	Tenant           string              `json:"tenant"`
	Environment      string              `json:"environment"`
	PartnerID        string              `json:"partnerId"`
	Rules            *openedRules        `json:"rules"`
	Procedure        *openedPlan         `json:"procedure"`
	Participants     []openedParticipant `json:"participants"`
	Recipients       *openedRecipients   `json:"recipients"`
	Fee              *openedFee          `json:"fee"`
	CapabilityHashes map[string]string   `json:"capabilityHashes"`
	// CaseMode, Claim and Evaluation were added within v2: a record
	// without them opens a proceeding with no claim to pay from.
	CaseMode   string            `json:"caseMode"`
	Claim      *openedClaim      `json:"claim"`
	Evaluation *openedEvaluation `json:"evaluation"`
	// Origin was added within v2 for cases opened from an AP2 or UCP
	// resolution request; other records lack it.
	Origin *openedOrigin `json:"origin"`
}

type openedOrigin struct {
	Protocol  string `json:"protocol"`
	Reference string `json:"reference"`
	Reason    string `json:"reason"`
	Merchant  string `json:"merchant"`
	PaidMinor int64  `json:"paidMinor"`
	Currency  string `json:"currency"`
	Evidence  []struct {
		Kind      string `json:"kind"`
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
	} `json:"evidence"`
}

type openedClaim struct {
	AmountMinor int64  `json:"amountMinor"`
	Currency    string `json:"currency"`
	Remedy      string `json:"remedy"`
	Summary     string `json:"summary"`
}

type openedEvaluation struct {
	ExternalEvaluationID string   `json:"externalEvaluationId"`
	EvaluationDigest     string   `json:"evaluationDigest"`
	Question             string   `json:"question"`
	Criteria             []string `json:"criteria"`
	AllowedOutcomes      []string `json:"allowedOutcomes"`
	EvidencePolicy       string   `json:"evidencePolicy"`
	ReviewPolicy         string   `json:"reviewPolicy"`
}

type openedRules struct {
	Version string `json:"version"`
	Hash    string `json:"hash"`
}

type openedPlan struct {
	Profile                    string `json:"profile"`
	AnswerRequired             bool   `json:"answerRequired"`
	EvidenceRounds             int    `json:"evidenceRounds"`
	RebuttalRounds             int    `json:"rebuttalRounds"`
	FilingsPerSidePerStage     int    `json:"filingsPerSidePerStage"`
	RecordConfirmationRequired bool   `json:"recordConfirmationRequired"`
}

type openedParticipant struct {
	ParticipantID string `json:"participantId"`
	Side          string `json:"side"`
	PartnerID     string `json:"partnerId"`
	PrincipalID   string `json:"principalId"`
	AgentID       string `json:"agentId"`
	// AccountID is the account that takes part as the participant; its
	// partnerId is then empty.
	AccountID string `json:"accountId"`
	// Joined says the participant takes part from the opening: every
	// claimant, and a respondent whose confirmation the draft holds.
	Joined bool `json:"joined"`
	// Hosted says no partner acts for the participant until it joins;
	// its partnerId then only names who delivers its invitation.
	Hosted bool `json:"hosted"`
}

type openedRecipients struct {
	Claimant   []Recipient `json:"claimant"`
	Respondent []Recipient `json:"respondent"`
}

type openedFee struct {
	FeeID  string `json:"feeId"`
	Status string `json:"status"`
}

// ErrUndecodable means a case-opened record can never be applied: it is
// not JSON of the expected shape. The consumer dead-letters it after its
// attempts.
var ErrUndecodable = errors.New("undecodable case-opened event")

// DecodeOpened reads a case-opened payload into the opening it asks for.
func DecodeOpened(payload []byte) (procedure.Opening, error) {
	var e CaseOpened
	if err := json.Unmarshal(payload, &e); err != nil {
		return procedure.Opening{}, fmt.Errorf("%w: %w", ErrUndecodable, err)
	}
	return e.Opening()
}

// Opening maps the fact to the procedure's opening.
func (e CaseOpened) Opening() (procedure.Opening, error) {
	in := procedure.Opening{
		EventID:     e.EventID,
		CaseID:      e.CaseID,
		ExternalID:  e.ExternalCaseID,
		Tenant:      e.Tenant,
		Environment: e.Environment,
		PartnerID:   e.PartnerID,
		OpenedAt:    e.OpenedAt,
	}
	if e.Rules != nil {
		in.Rules = procedure.Rules{Version: e.Rules.Version, Hash: e.Rules.Hash}
	}
	in.Mode = procedure.Mode(e.CaseMode)
	if cl := e.Claim; cl != nil {
		in.Claim = procedure.Claim{AmountMinor: cl.AmountMinor, Currency: cl.Currency, Remedy: cl.Remedy, Summary: cl.Summary}
	}
	if ev := e.Evaluation; ev != nil {
		in.Evaluation = &procedure.EvaluationDefinition{ExternalEvaluationID: ev.ExternalEvaluationID, EvaluationDigest: ev.EvaluationDigest,
			Question: ev.Question, Criteria: ev.Criteria, AllowedOutcomes: ev.AllowedOutcomes, EvidencePolicy: ev.EvidencePolicy, ReviewPolicy: ev.ReviewPolicy}
	}
	if o := e.Origin; o != nil {
		in.Origin = &procedure.Origin{Protocol: o.Protocol, Reference: o.Reference, Reason: o.Reason, Merchant: o.Merchant,
			PaidMinor: o.PaidMinor, Currency: o.Currency}
		for _, ev := range o.Evidence {
			in.Origin.Evidence = append(in.Origin.Evidence, procedure.OriginEvidence{Kind: ev.Kind, MediaType: ev.MediaType, Digest: ev.Digest})
		}
	}
	plan := e.Procedure
	if plan == nil {
		return procedure.Opening{}, fmt.Errorf("%w: event %s has no procedure plan", ErrUndecodable, e.EventID)
	}
	in.Plan = procedure.Plan{
		Profile: procedure.Profile(plan.Profile), AnswerRequired: plan.AnswerRequired, EvidenceRounds: plan.EvidenceRounds,
		RebuttalRounds: plan.RebuttalRounds, FilingsPerSidePerStage: plan.FilingsPerSidePerStage,
		RecordConfirmationRequired: plan.RecordConfirmationRequired,
	}
	if e.Fee != nil {
		in.FeeID, in.FeeStatus = e.Fee.FeeID, e.Fee.Status
	}
	for _, p := range e.Participants {
		side := procedure.Side(p.Side)
		part := procedure.Participant{ID: p.ParticipantID, Side: side, PartnerID: p.PartnerID, PrincipalID: p.PrincipalID, AgentID: p.AgentID, AccountID: p.AccountID}
		if p.Hosted && side == procedure.Respondent && !p.Joined && p.AgentID == "" {
			part.PartnerID = "" // nobody acts for it until its join binds it
		}
		if p.Joined {
			part.JoinedAt = in.OpenedAt // Open pins it to the opening instant
		}
		in.Participants = append(in.Participants, part)
	}
	if r := e.Recipients; r != nil {
		in.Recipients = map[procedure.Side][]procedure.Partner{
			procedure.Claimant: toPartners(r.Claimant), procedure.Respondent: toPartners(r.Respondent),
		}
	}
	in.Capabilities = e.CapabilityHashes
	return in, nil
}

func toPartners(rs []Recipient) []procedure.Partner {
	out := []procedure.Partner{}
	for _, r := range rs {
		out = append(out, procedure.Partner{Tenant: r.Tenant, Environment: r.Environment, PartnerID: r.PartnerID})
	}
	return out
}

// Opener opens cases: caseflow.Service.Open, the use case that decides
// the opening and stores it with its events in one step. It reports
// whether this fact opened the case (false: applied before).
type Opener interface {
	Open(ctx context.Context, in procedure.Opening) (procedure.Case, bool, error)
}

// Opened applies case-opened facts: decode, then open through the use
// case. It is idempotent: a fact whose event id was applied before changes
// nothing and emits nothing, so a replay of the whole topic is harmless.
type Opened struct {
	cases  Opener
	logger *slog.Logger
}

// NewOpened returns the handler.
func NewOpened(cases Opener, logger *slog.Logger) *Opened {
	return &Opened{cases: cases, logger: logger}
}

// Handle is the kafka.Handler of pc.filings.case-opened.v2. An error
// retries the record and, after the consumer's attempts, dead-letters it:
// an undecodable fact or one pinned to unknown rules never opens a case on
// guessed terms.
func (h *Opened) Handle(ctx context.Context, msg kafka.Message) error {
	// A record that does not decode, or an opening the procedure refuses,
	// can never succeed: kafka.Permanent dead-letters it at once. A store
	// error is an outage, retried until it passes.
	if msg.Schema != "" && msg.Schema != api.CaseOpenedSchema {
		return kafka.Permanent(fmt.Errorf("record %s has schema %q, want %s", msg.EventID, msg.Schema, api.CaseOpenedSchema))
	}
	in, err := DecodeOpened(msg.Value)
	if err != nil {
		return kafka.Permanent(err)
	}
	if msg.EventID != "" && in.EventID != msg.EventID {
		return kafka.Permanent(fmt.Errorf("%w: header event id %q differs from body %q", ErrUndecodable, msg.EventID, in.EventID))
	}
	c, applied, err := h.cases.Open(ctx, in)
	if errors.Is(err, procedure.ErrInvalidOpening) {
		return kafka.Permanent(err)
	}
	if err != nil {
		return err
	}
	if applied {
		h.logger.InfoContext(ctx, "case opened", "case_id", c.ID, "event_id", in.EventID, "status", c.Status())
	} else {
		h.logger.InfoContext(ctx, "case-opened event already applied", "case_id", c.ID, "event_id", in.EventID)
	}
	return nil
}
