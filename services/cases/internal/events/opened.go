package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// The case-opened fact the filings service publishes.
const (
	OpenedTopic  = "pc.filings.case-opened.v2"
	OpenedSchema = "filings-case-opened-v2"
)

// CaseOpened is the payload of pc.filings.case-opened.v2
// (api/events/filings-case-opened-v2.schema.json) as this consumer reads
// it. Fields are only ever added within a version, so unknown fields are
// ignored. It also reads version 1's nesting of the confirmed case under
// "case", so that records of either version replayed into a test or a
// recovery open the same case; a top-level field wins over its nested
// counterpart.
type CaseOpened struct {
	EventID     string    `json:"eventId"`
	OpenedAt    time.Time `json:"openedAt"`
	Tenant      string    `json:"tenant"`
	Environment string    `json:"environment"`
	PartnerID   string    `json:"partnerId"`
	DraftID     string    `json:"draftId"`
	DraftDigest string    `json:"draftDigest"`

	// The richer shape.
	CaseID         string              `json:"caseId"`
	ExternalCaseID string              `json:"externalCaseId"`
	Rules          *openedRules        `json:"rules"`
	RulesVersion   string              `json:"rulesVersion"`
	RulesHash      string              `json:"rulesHash"`
	Procedure      *openedPlan         `json:"procedure"`
	Participants   []openedParticipant `json:"participants"`
	Recipients     *openedRecipients   `json:"recipients"`
	FeeStatus      string              `json:"feeStatus"`

	// Both shapes.
	Fee              *openedFee           `json:"fee"`
	Confirmations    []openedConfirmation `json:"confirmations"`
	CapabilityHashes map[string]string    `json:"capabilityHashes"`

	// Today's shape: the confirmed case (confirmed-filing-v2).
	Case *openedCase `json:"case"`
}

type openedCase struct {
	CaseID         string              `json:"caseId"`
	ExternalCaseID string              `json:"externalCaseId"`
	Rules          *openedRules        `json:"rules"`
	CreatedAt      time.Time           `json:"createdAt"`
	Procedure      *openedPlan         `json:"procedure"`
	Participants   []openedParticipant `json:"participants"`
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
	// Joined, in the richer shape, says the participant takes part from
	// the opening; without it a respondent takes part when its
	// confirmation is confirmed.
	Joined *bool `json:"joined"`
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

type openedConfirmation struct {
	ParticipantID string `json:"participantId"`
	Side          string `json:"side"`
	Status        string `json:"status"`
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
	nested := e.Case
	if nested == nil {
		nested = &openedCase{}
	}
	in := procedure.Opening{
		EventID:     e.EventID,
		CaseID:      first(e.CaseID, nested.CaseID),
		ExternalID:  first(e.ExternalCaseID, nested.ExternalCaseID),
		Tenant:      e.Tenant,
		Environment: e.Environment,
		PartnerID:   e.PartnerID,
		OpenedAt:    e.OpenedAt,
		FeeStatus:   e.FeeStatus,
	}
	if in.OpenedAt.IsZero() {
		in.OpenedAt = nested.CreatedAt
	}
	switch rules := firstPtr(e.Rules, nested.Rules); {
	case e.RulesVersion != "":
		in.Rules = procedure.Rules{Version: e.RulesVersion, Hash: e.RulesHash}
	case rules != nil:
		in.Rules = procedure.Rules{Version: rules.Version, Hash: rules.Hash}
	}
	plan := firstPtr(e.Procedure, nested.Procedure)
	if plan == nil {
		return procedure.Opening{}, fmt.Errorf("%w: event %s has no procedure plan", ErrUndecodable, e.EventID)
	}
	in.Plan = procedure.Plan{
		Profile: procedure.Profile(plan.Profile), AnswerRequired: plan.AnswerRequired, EvidenceRounds: plan.EvidenceRounds,
		RebuttalRounds: plan.RebuttalRounds, FilingsPerSidePerStage: plan.FilingsPerSidePerStage,
		RecordConfirmationRequired: plan.RecordConfirmationRequired,
	}
	if e.Fee != nil {
		in.FeeID = e.Fee.FeeID
		if in.FeeStatus == "" {
			in.FeeStatus = e.Fee.Status
		}
	}
	confirmed := map[string]bool{}
	for _, c := range e.Confirmations {
		confirmed[c.ParticipantID] = c.Status == "confirmed"
	}
	participants := e.Participants
	if len(participants) == 0 {
		participants = nested.Participants
	}
	for _, p := range participants {
		side := procedure.Side(p.Side)
		joined := side == procedure.Claimant || confirmed[p.ParticipantID]
		if p.Joined != nil {
			joined = *p.Joined
		}
		part := procedure.Participant{ID: p.ParticipantID, Side: side, PartnerID: p.PartnerID, PrincipalID: p.PrincipalID, AgentID: p.AgentID}
		switch {
		case p.Hosted && side == procedure.Respondent && !joined && p.AgentID == "":
			part.PartnerID = "" // nobody acts for it until its join binds it
		case part.PartnerID == "":
			// An earlier shape named no partner for a participant that
			// acts through the filing partner.
			part.PartnerID = e.PartnerID
		}
		if joined {
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

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func firstPtr[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

// Opener is where openings are stored: store.Cases.
type Opener interface {
	Open(ctx context.Context, c procedure.Case, openedEventID string, events []store.Event) (bool, error)
}

// Opened applies case-opened facts: decode, open, store the case with its
// opening events in one step. It is idempotent: a fact whose event id was
// applied before changes nothing and emits nothing, so a replay of the
// whole topic is harmless.
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
	if msg.Schema != "" && msg.Schema != OpenedSchema {
		return fmt.Errorf("record %s has schema %q, want %s", msg.EventID, msg.Schema, OpenedSchema)
	}
	in, err := DecodeOpened(msg.Value)
	if err != nil {
		return err
	}
	if msg.EventID != "" && in.EventID != msg.EventID {
		return fmt.Errorf("%w: header event id %q differs from body %q", ErrUndecodable, msg.EventID, in.EventID)
	}
	out, err := procedure.Open(in)
	if err != nil {
		return err
	}
	encoded, err := EncodeAll(out.Case, out.Events)
	if err != nil {
		return err
	}
	applied, err := h.cases.Open(ctx, out.Case, in.EventID, encoded)
	if err != nil {
		return err
	}
	if applied {
		h.logger.InfoContext(ctx, "case opened", "case_id", out.Case.ID, "event_id", in.EventID, "status", out.Case.Status())
	} else {
		h.logger.InfoContext(ctx, "case-opened event already applied", "case_id", out.Case.ID, "event_id", in.EventID)
	}
	return nil
}
