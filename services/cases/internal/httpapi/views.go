package httpapi

import (
	"context"
	"time"

	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// caseView is an opened case as every route family shows it (the website
// alias inside its {ok, data} envelope). Secrets, capability hashes and
// partner routing never appear in it.
type caseView struct {
	CaseID         string            `json:"caseId"`
	ExternalCaseID string            `json:"externalCaseId"`
	Status         string            `json:"status"`
	Environment    string            `json:"environment"`
	OpenedAt       string            `json:"openedAt"`
	ClosedAt       string            `json:"closedAt,omitempty"`
	Rules          rulesView         `json:"rules"`
	Procedure      planView          `json:"procedure"`
	Stage          *stageView        `json:"stage,omitempty"`
	Participants   []participantView `json:"participants"`
	Answer         *answerView       `json:"answer,omitempty"`
	AnswerMissed   bool              `json:"answerMissed"`
	Termination    *terminationView  `json:"termination,omitempty"`
	Fee            *feeView          `json:"fee,omitempty"`
	LastSequence   int64             `json:"lastSequence"`
}

type rulesView struct {
	Version string `json:"version"`
	Hash    string `json:"hash"`
}

type planView struct {
	SchemaVersion              string `json:"schemaVersion"`
	Profile                    string `json:"profile"`
	AnswerRequired             bool   `json:"answerRequired"`
	EvidenceRounds             int    `json:"evidenceRounds"`
	RebuttalRounds             int    `json:"rebuttalRounds"`
	FilingsPerSidePerStage     int    `json:"filingsPerSidePerStage"`
	RecordConfirmationRequired bool   `json:"recordConfirmationRequired"`
}

type stageView struct {
	Kind       string `json:"kind"`
	Round      int    `json:"round,omitempty"`
	OpenedAt   string `json:"openedAt"`
	DeadlineAt string `json:"deadlineAt"`
}

type participantView struct {
	ParticipantID string `json:"participantId"`
	Side          string `json:"side"`
	// PartnerID is null while no partner acts for the participant: a
	// hosted respondent before it joins, or one that joined on the hosted
	// page (Hosted).
	PartnerID   *string `json:"partnerId"`
	Hosted      bool    `json:"hosted,omitempty"`
	PrincipalID string  `json:"principalId"`
	AgentID     string  `json:"agentId,omitempty"`
	AccountID   string  `json:"accountId,omitempty"`
	Joined      bool    `json:"joined"`
	JoinedAt    string  `json:"joinedAt,omitempty"`
}

type answerView struct {
	ParticipantID string `json:"participantId"`
	FiledAt       string `json:"filedAt"`
	Digest        string `json:"digest"`
	Text          string `json:"text"`
}

type terminationView struct {
	TerminationID string `json:"terminationId"`
	Side          string `json:"side"`
	RequestedAt   string `json:"requestedAt"`
	DeadlineAt    string `json:"deadlineAt"`
}

type feeView struct {
	FeeID  string `json:"feeId"`
	Status string `json:"status,omitempty"`
}

// eventRef names an event an act recorded; the docket has the whole body.
type eventRef struct {
	EventID  string `json:"eventId"`
	Sequence int64  `json:"sequence"`
	Type     string `json:"type"`
}

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return procedure.Timestamp(t)
}

func toParticipantViews(cs procedure.Case) []participantView {
	out := make([]participantView, 0, len(cs.Participants))
	for _, p := range cs.Participants {
		v := participantView{
			ParticipantID: p.ID, Side: string(p.Side), Hosted: p.Hosted, PrincipalID: p.PrincipalID, AgentID: p.AgentID,
			AccountID: p.AccountID, Joined: p.Joined(), JoinedAt: ts(p.JoinedAt),
		}
		if p.PartnerID != "" {
			v.PartnerID = &p.PartnerID
		}
		out = append(out, v)
	}
	return out
}

// toCaseView shows cs after its event with the given sequence; the text of
// its answer is read from the case's documents.
func (h *handlers) toCaseView(ctx context.Context, cs procedure.Case, lastSequence int64) (caseView, error) {
	v := caseView{
		CaseID: cs.ID, ExternalCaseID: cs.ExternalID, Status: string(cs.Status()), Environment: cs.Environment,
		OpenedAt: ts(cs.OpenedAt), ClosedAt: ts(cs.ClosedAt),
		Rules: rulesView{Version: cs.Rules.Version, Hash: cs.Rules.Hash},
		Procedure: planView{
			SchemaVersion: "case-procedure-plan-v2", Profile: string(cs.Plan.Profile), AnswerRequired: cs.Plan.AnswerRequired,
			EvidenceRounds: cs.Plan.EvidenceRounds, RebuttalRounds: cs.Plan.RebuttalRounds,
			FilingsPerSidePerStage: cs.Plan.FilingsPerSidePerStage, RecordConfirmationRequired: cs.Plan.RecordConfirmationRequired,
		},
		Participants: toParticipantViews(cs), AnswerMissed: cs.AnswerMissed, LastSequence: lastSequence,
	}
	if cs.Closed == "" {
		v.Stage = &stageView{Kind: string(cs.Stage.Kind), Round: cs.Stage.Round, OpenedAt: ts(cs.Stage.OpenedAt), DeadlineAt: ts(cs.Stage.DeadlineAt)}
	}
	if a := cs.Answer; a != nil {
		text, _, err := h.cases.Document(ctx, cs.ID, a.Digest)
		if err != nil {
			return caseView{}, err
		}
		v.Answer = &answerView{ParticipantID: a.ParticipantID, FiledAt: ts(a.FiledAt), Digest: a.Digest, Text: string(text)}
	}
	if t := cs.Termination; t != nil {
		v.Termination = &terminationView{TerminationID: t.ID, Side: string(t.Side), RequestedAt: ts(t.RequestedAt), DeadlineAt: ts(t.DeadlineAt)}
	}
	if cs.FeeID != "" {
		v.Fee = &feeView{FeeID: cs.FeeID, Status: cs.FeeStatus}
	}
	return v, nil
}

func eventRefs(caseID string, first int64, evs []procedure.Event) []eventRef {
	out := make([]eventRef, 0, len(evs))
	for i, e := range evs {
		seq := first + int64(i)
		out = append(out, eventRef{EventID: store.EventID(caseID, seq), Sequence: seq, Type: string(e.Type)})
	}
	return out
}
