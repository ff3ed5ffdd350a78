package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
	"github.com/pcourt/pcourt/services/cases/internal/evidence"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/settlement"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// ErrCorruptRecord means a stored case does not decode to a valid case.
var ErrCorruptRecord = errors.New("corrupt case record")

// recordVersion is the version of the stored JSON shape.
const recordVersion = 1

// caseRecord is a case as Redis keeps it. Lua never reads it; only
// encodeRecord and decodeRecord cross between it and procedure.Case.
type caseRecord struct {
	RecordVersion  int                  `json:"recordVersion"`
	CaseID         string               `json:"caseId"`
	ExternalCaseID string               `json:"externalCaseId"`
	Tenant         string               `json:"tenant"`
	Environment    string               `json:"environment"`
	PartnerID      string               `json:"partnerId"`
	OpenedAt       string               `json:"openedAt"`
	OpenedEventID  string               `json:"openedEventId"`
	Rules          rulesRecord          `json:"rules"`
	Plan           planRecord           `json:"plan"`
	Windows        windowsRecord        `json:"windows"`
	FeeID          string               `json:"feeId,omitempty"`
	FeeStatus      string               `json:"feeStatus,omitempty"`
	Participants   []participantRecord  `json:"participants"`
	Recipients     map[string][]partner `json:"recipients"`
	Capabilities   map[string]string    `json:"capabilities"`
	Stage          *stageRecord         `json:"stage,omitempty"`
	// PastStages came after record version 1's first cases; a record
	// without them is of a case that left its earlier stages before they
	// were kept (its timeline starts at its open stage), so the version
	// stays.
	PastStages   []pastStageRecord  `json:"pastStages,omitempty"`
	Closed       string             `json:"closed,omitempty"`
	ClosedAt     string             `json:"closedAt,omitempty"`
	Answer       *answerRecord      `json:"answer,omitempty"`
	AnswerMissed bool               `json:"answerMissed,omitempty"`
	Submissions  []submissionRecord `json:"submissions,omitempty"`
	// Messages replaced a count that no route ever raised, so no stored
	// record has it: the record version stays.
	Messages       []messageRecord   `json:"messages,omitempty"`
	MessagesRead   map[string]int    `json:"messagesRead,omitempty"`
	RecordConfirms map[string]string `json:"recordConfirms,omitempty"`
	RecordDeemed   bool              `json:"recordDeemed,omitempty"`
	// Corrections came after record version 1's first cases; a record
	// without them has none, so the version stays.
	Corrections []correctionRecord `json:"corrections,omitempty"`
	Termination *terminationRecord `json:"termination,omitempty"`
	// Mode, Claim and Evaluation came with the tribunal; a record without
	// them is a proceeding opened before, with no claim to pay from.
	Mode       string            `json:"mode,omitempty"`
	Claim      *claimRecord      `json:"claim,omitempty"`
	Evaluation *evaluationRecord `json:"evaluation,omitempty"`
	// Tribunal is stored in the tribunal package's own JSON form: it is
	// one value with millisecond UTC instants, written and read only
	// here, so a converter beside it would repeat every field for nothing.
	Tribunal *tribunal.State `json:"tribunal,omitempty"`
	// Evidence is stored in the evidence package's own JSON form, as the
	// tribunal is, and for the same reason.
	Evidence *evidence.State `json:"evidence,omitempty"`
	// AfterAward is stored in its package's own JSON form, as the
	// tribunal is; a record without it has nothing after the award.
	AfterAward *afteraward.State `json:"afterAward,omitempty"`
	// Settlement is stored in its package's own JSON form, as the
	// tribunal is; a record without it has nothing settled or proposed.
	Settlement *settlement.State `json:"settlement,omitempty"`
	// Representatives came later; a record without them has none.
	Representatives []representativeRecord `json:"representatives,omitempty"`
	// LoginReissues came later still; a record without them had none.
	LoginReissues []string `json:"loginReissues,omitempty"`
	// Origin came with the agent-commerce resolution requests; a record
	// without it is a case that did not come from one.
	Origin *originRecord `json:"origin,omitempty"`
}

type representativeRecord struct {
	ID          string `json:"representativeId"`
	Side        string `json:"side"`
	Subject     string `json:"subject"`
	Label       string `json:"label"`
	AppointedBy string `json:"appointedBy"`
	AppointedAt string `json:"appointedAt"`
	ChangedAt   string `json:"changedAt,omitempty"`
	RemovedAt   string `json:"removedAt,omitempty"`
}

type claimRecord struct {
	AmountMinor int64  `json:"amountMinor"`
	Currency    string `json:"currency"`
	Remedy      string `json:"remedy,omitempty"`
	Summary     string `json:"summary,omitempty"`
}

type evaluationRecord struct {
	ExternalEvaluationID string   `json:"externalEvaluationId"`
	EvaluationDigest     string   `json:"evaluationDigest"`
	Question             string   `json:"question"`
	Criteria             []string `json:"criteria"`
	AllowedOutcomes      []string `json:"allowedOutcomes"`
	EvidencePolicy       string   `json:"evidencePolicy"`
	ReviewPolicy         string   `json:"reviewPolicy"`
}

type messageRecord struct {
	ID            string `json:"messageId"`
	ParticipantID string `json:"participantId"`
	Side          string `json:"side"`
	Digest        string `json:"digest"`
	PostedAt      string `json:"postedAt"`
}

type correctionRecord struct {
	ID            string `json:"correctionId"`
	Side          string `json:"side"`
	ParticipantID string `json:"participantId"`
	EntryID       string `json:"entryId"`
	Digest        string `json:"digest"`
	CorrectedAt   string `json:"correctedAt"`
}

type rulesRecord struct {
	Version string `json:"version"`
	Hash    string `json:"hash"`
}

type planRecord struct {
	Profile                    string `json:"profile"`
	AnswerRequired             bool   `json:"answerRequired"`
	EvidenceRounds             int    `json:"evidenceRounds"`
	RebuttalRounds             int    `json:"rebuttalRounds"`
	FilingsPerSidePerStage     int    `json:"filingsPerSidePerStage"`
	RecordConfirmationRequired bool   `json:"recordConfirmationRequired"`
}

// windowsRecord keeps durations in milliseconds.
type windowsRecord struct {
	RespondentJoin          int64 `json:"respondentJoinMs"`
	Answer                  int64 `json:"answerMs"`
	EvidenceRound           int64 `json:"evidenceRoundMs"`
	RebuttalRound           int64 `json:"rebuttalRoundMs"`
	RecordConfirmation      int64 `json:"recordConfirmationMs"`
	TerminationConfirmation int64 `json:"terminationConfirmationMs"`
	Warning                 int64 `json:"warningMs"`
}

type participantRecord struct {
	ID          string `json:"participantId"`
	Side        string `json:"side"`
	PartnerID   string `json:"partnerId"`
	PrincipalID string `json:"principalId"`
	AgentID     string `json:"agentId,omitempty"`
	JoinedAt    string `json:"joinedAt,omitempty"`
	Hosted      bool   `json:"hosted,omitempty"`
	AccountID   string `json:"accountId,omitempty"`
}

type partner struct {
	Tenant      string `json:"tenant"`
	Environment string `json:"environment"`
	PartnerID   string `json:"partnerId"`
}

type stageRecord struct {
	Kind       string `json:"kind"`
	Round      int    `json:"round,omitempty"`
	OpenedAt   string `json:"openedAt"`
	DeadlineAt string `json:"deadlineAt"`
	Warned     bool   `json:"warned,omitempty"`
}

type pastStageRecord struct {
	Kind       string `json:"kind"`
	Round      int    `json:"round,omitempty"`
	OpenedAt   string `json:"openedAt"`
	DeadlineAt string `json:"deadlineAt"`
	ClosedAt   string `json:"closedAt"`
}

type answerRecord struct {
	ParticipantID string `json:"participantId"`
	Digest        string `json:"digest"`
	FiledAt       string `json:"filedAt"`
}

type submissionRecord struct {
	ID            string `json:"submissionId"`
	ParticipantID string `json:"participantId"`
	Side          string `json:"side"`
	Stage         string `json:"stage"`
	Round         int    `json:"round,omitempty"`
	Digest        string `json:"digest"`
	FiledAt       string `json:"filedAt"`
	AmendedAt     string `json:"amendedAt,omitempty"`
	Amendments    int    `json:"amendments,omitempty"`
}

type terminationRecord struct {
	ID            string `json:"terminationId"`
	Side          string `json:"side"`
	ParticipantID string `json:"participantId"`
	RequestedAt   string `json:"requestedAt"`
	DeadlineAt    string `json:"deadlineAt"`
}

func encodeRecord(c procedure.Case) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("refusing to store case: %w", err)
	}
	r := caseRecord{
		RecordVersion: recordVersion, CaseID: c.ID, ExternalCaseID: c.ExternalID, Tenant: c.Tenant, Environment: c.Environment,
		PartnerID: c.PartnerID, OpenedAt: ts(c.OpenedAt), OpenedEventID: c.OpenedEventID,
		Rules: rulesRecord{c.Rules.Version, c.Rules.Hash},
		Plan: planRecord{string(c.Plan.Profile), c.Plan.AnswerRequired, c.Plan.EvidenceRounds, c.Plan.RebuttalRounds,
			c.Plan.FilingsPerSidePerStage, c.Plan.RecordConfirmationRequired},
		Windows: windowsRecord{
			c.Windows.RespondentJoin.Milliseconds(), c.Windows.Answer.Milliseconds(), c.Windows.EvidenceRound.Milliseconds(),
			c.Windows.RebuttalRound.Milliseconds(), c.Windows.RecordConfirmation.Milliseconds(),
			c.Windows.TerminationConfirmation.Milliseconds(), c.Windows.Warning.Milliseconds(),
		},
		FeeID: c.FeeID, FeeStatus: c.FeeStatus,
		Recipients: map[string][]partner{}, Capabilities: c.Capabilities,
		Closed: string(c.Closed), ClosedAt: ts(c.ClosedAt), AnswerMissed: c.AnswerMissed,
		RecordDeemed: c.RecordDeemed,
	}
	for _, p := range c.Participants {
		r.Participants = append(r.Participants, participantRecord{p.ID, string(p.Side), p.PartnerID, p.PrincipalID, p.AgentID, ts(p.JoinedAt), p.Hosted, p.AccountID})
	}
	for side, ps := range c.Recipients {
		list := []partner{}
		for _, p := range ps {
			list = append(list, partner{p.Tenant, p.Environment, p.PartnerID})
		}
		r.Recipients[string(side)] = list
	}
	if c.Closed == "" {
		r.Stage = &stageRecord{string(c.Stage.Kind), c.Stage.Round, ts(c.Stage.OpenedAt), ts(c.Stage.DeadlineAt), c.Stage.Warned}
	}
	for _, ps := range c.PastStages {
		r.PastStages = append(r.PastStages, pastStageRecord{string(ps.Kind), ps.Round, ts(ps.OpenedAt), ts(ps.DeadlineAt), ts(ps.ClosedAt)})
	}
	if a := c.Answer; a != nil {
		r.Answer = &answerRecord{a.ParticipantID, a.Digest, ts(a.FiledAt)}
	}
	for _, s := range c.Submissions {
		r.Submissions = append(r.Submissions, submissionRecord{s.ID, s.ParticipantID, string(s.Side), string(s.Stage), s.Round, s.Digest, ts(s.FiledAt), ts(s.AmendedAt), s.Amendments})
	}
	for _, m := range c.Messages {
		r.Messages = append(r.Messages, messageRecord{m.ID, m.ParticipantID, string(m.Side), m.Digest, ts(m.PostedAt)})
	}
	for _, k := range c.Corrections {
		r.Corrections = append(r.Corrections, correctionRecord{k.ID, string(k.Side), k.ParticipantID, k.EntryID, k.Digest, ts(k.CorrectedAt)})
	}
	if len(c.MessagesRead) > 0 {
		r.MessagesRead = map[string]int{}
		for side, n := range c.MessagesRead {
			r.MessagesRead[string(side)] = n
		}
	}
	if len(c.RecordConfirms) > 0 {
		r.RecordConfirms = map[string]string{}
		for side, at := range c.RecordConfirms {
			r.RecordConfirms[string(side)] = ts(at)
		}
	}
	if t := c.Termination; t != nil {
		r.Termination = &terminationRecord{t.ID, string(t.Side), t.ParticipantID, ts(t.RequestedAt), ts(t.DeadlineAt)}
	}
	r.Mode = string(c.Mode)
	if c.Claim != (procedure.Claim{}) {
		r.Claim = &claimRecord{c.Claim.AmountMinor, c.Claim.Currency, c.Claim.Remedy, c.Claim.Summary}
	}
	if e := c.Evaluation; e != nil {
		r.Evaluation = &evaluationRecord{e.ExternalEvaluationID, e.EvaluationDigest, e.Question, e.Criteria, e.AllowedOutcomes, e.EvidencePolicy, e.ReviewPolicy}
	}
	if c.Tribunal.Stage != tribunal.StageUnassigned || !c.Tribunal.AssignAfter.IsZero() {
		t := c.Tribunal
		r.Tribunal = &t
	}
	if !c.Evidence.Empty() {
		e := c.Evidence
		r.Evidence = &e
	}
	if !c.AfterAward.Empty() {
		a := c.AfterAward
		r.AfterAward = &a
	}
	if !c.Settlement.Empty() {
		s := c.Settlement
		r.Settlement = &s
	}
	for _, x := range c.Representatives {
		r.Representatives = append(r.Representatives, representativeRecord{x.ID, string(x.Side), x.Subject, x.Label, x.AppointedBy, ts(x.AppointedAt), ts(x.ChangedAt), ts(x.RemovedAt)})
	}
	for _, at := range c.LoginReissues {
		r.LoginReissues = append(r.LoginReissues, ts(at))
	}
	r.Origin = toOriginRecord(c.Origin)
	return json.Marshal(r)
}

func decodeRecord(b []byte) (procedure.Case, error) {
	var r caseRecord
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return procedure.Case{}, fmt.Errorf("%w: %w", ErrCorruptRecord, err)
	}
	if r.RecordVersion != recordVersion {
		return procedure.Case{}, fmt.Errorf("%w: record version %d", ErrCorruptRecord, r.RecordVersion)
	}
	var p timeParser
	c := procedure.Case{
		ID: r.CaseID, ExternalID: r.ExternalCaseID, Tenant: r.Tenant, Environment: r.Environment, PartnerID: r.PartnerID,
		OpenedAt: p.parse(r.OpenedAt), OpenedEventID: r.OpenedEventID,
		Rules: procedure.Rules{Version: r.Rules.Version, Hash: r.Rules.Hash},
		Plan: procedure.Plan{Profile: procedure.Profile(r.Plan.Profile), AnswerRequired: r.Plan.AnswerRequired, EvidenceRounds: r.Plan.EvidenceRounds,
			RebuttalRounds: r.Plan.RebuttalRounds, FilingsPerSidePerStage: r.Plan.FilingsPerSidePerStage, RecordConfirmationRequired: r.Plan.RecordConfirmationRequired},
		Windows: procedure.Windows{
			RespondentJoin: ms(r.Windows.RespondentJoin), Answer: ms(r.Windows.Answer), EvidenceRound: ms(r.Windows.EvidenceRound),
			RebuttalRound: ms(r.Windows.RebuttalRound), RecordConfirmation: ms(r.Windows.RecordConfirmation),
			TerminationConfirmation: ms(r.Windows.TerminationConfirmation), Warning: ms(r.Windows.Warning),
		},
		FeeID: r.FeeID, FeeStatus: r.FeeStatus,
		Recipients: map[procedure.Side][]procedure.Partner{}, Capabilities: map[string]string{},
		Closed: procedure.Status(r.Closed), ClosedAt: p.parse(r.ClosedAt), AnswerMissed: r.AnswerMissed,
		RecordConfirms: map[procedure.Side]time.Time{}, RecordDeemed: r.RecordDeemed,
	}
	for _, pr := range r.Participants {
		c.Participants = append(c.Participants, procedure.Participant{ID: pr.ID, Side: procedure.Side(pr.Side), PartnerID: pr.PartnerID,
			Hosted: pr.Hosted, PrincipalID: pr.PrincipalID, AgentID: pr.AgentID, AccountID: pr.AccountID, JoinedAt: p.parse(pr.JoinedAt)})
	}
	for side, ps := range r.Recipients {
		list := []procedure.Partner{}
		for _, x := range ps {
			list = append(list, procedure.Partner{Tenant: x.Tenant, Environment: x.Environment, PartnerID: x.PartnerID})
		}
		c.Recipients[procedure.Side(side)] = list
	}
	for k, v := range r.Capabilities {
		c.Capabilities[k] = v
	}
	for _, m := range r.Messages {
		c.Messages = append(c.Messages, procedure.Message{ID: m.ID, ParticipantID: m.ParticipantID, Side: procedure.Side(m.Side), Digest: m.Digest, PostedAt: p.parse(m.PostedAt)})
	}
	for _, k := range r.Corrections {
		c.Corrections = append(c.Corrections, procedure.RecordCorrection{ID: k.ID, Side: procedure.Side(k.Side), ParticipantID: k.ParticipantID,
			EntryID: k.EntryID, Digest: k.Digest, CorrectedAt: p.parse(k.CorrectedAt)})
	}
	c.MessagesRead = map[procedure.Side]int{}
	for side, n := range r.MessagesRead {
		c.MessagesRead[procedure.Side(side)] = n
	}
	if s := r.Stage; s != nil {
		c.Stage = procedure.Stage{Kind: procedure.StageKind(s.Kind), Round: s.Round, OpenedAt: p.parse(s.OpenedAt), DeadlineAt: p.parse(s.DeadlineAt), Warned: s.Warned}
	}
	for _, ps := range r.PastStages {
		c.PastStages = append(c.PastStages, procedure.PastStage{Kind: procedure.StageKind(ps.Kind), Round: ps.Round,
			OpenedAt: p.parse(ps.OpenedAt), DeadlineAt: p.parse(ps.DeadlineAt), ClosedAt: p.parse(ps.ClosedAt)})
	}
	if a := r.Answer; a != nil {
		c.Answer = &procedure.Answer{ParticipantID: a.ParticipantID, Digest: a.Digest, FiledAt: p.parse(a.FiledAt)}
	}
	for _, s := range r.Submissions {
		c.Submissions = append(c.Submissions, procedure.Submission{ID: s.ID, ParticipantID: s.ParticipantID, Side: procedure.Side(s.Side),
			Stage: procedure.StageKind(s.Stage), Round: s.Round, Digest: s.Digest, FiledAt: p.parse(s.FiledAt), AmendedAt: p.parse(s.AmendedAt), Amendments: s.Amendments})
	}
	for side, at := range r.RecordConfirms {
		c.RecordConfirms[procedure.Side(side)] = p.parse(at)
	}
	if t := r.Termination; t != nil {
		c.Termination = &procedure.Termination{ID: t.ID, Side: procedure.Side(t.Side), ParticipantID: t.ParticipantID,
			RequestedAt: p.parse(t.RequestedAt), DeadlineAt: p.parse(t.DeadlineAt)}
	}
	c.Mode = procedure.Mode(r.Mode)
	if c.Mode == "" {
		c.Mode = procedure.ModeProceeding
	}
	if cl := r.Claim; cl != nil {
		c.Claim = procedure.Claim{AmountMinor: cl.AmountMinor, Currency: cl.Currency, Remedy: cl.Remedy, Summary: cl.Summary}
	}
	if e := r.Evaluation; e != nil {
		c.Evaluation = &procedure.EvaluationDefinition{ExternalEvaluationID: e.ExternalEvaluationID, EvaluationDigest: e.EvaluationDigest,
			Question: e.Question, Criteria: e.Criteria, AllowedOutcomes: e.AllowedOutcomes, EvidencePolicy: e.EvidencePolicy, ReviewPolicy: e.ReviewPolicy}
	}
	if t := r.Tribunal; t != nil {
		c.Tribunal = *t
	}
	if e := r.Evidence; e != nil {
		c.Evidence = *e
	}
	if a := r.AfterAward; a != nil {
		c.AfterAward = *a
	}
	if s := r.Settlement; s != nil {
		c.Settlement = *s
	}
	for _, x := range r.Representatives {
		c.Representatives = append(c.Representatives, procedure.Representative{ID: x.ID, Side: procedure.Side(x.Side), Subject: x.Subject, Label: x.Label,
			AppointedBy: x.AppointedBy, AppointedAt: p.parse(x.AppointedAt), ChangedAt: p.parse(x.ChangedAt), RemovedAt: p.parse(x.RemovedAt)})
	}
	c.Origin = r.Origin.toOrigin()
	for _, at := range r.LoginReissues {
		c.LoginReissues = append(c.LoginReissues, p.parse(at))
	}
	if p.err != nil {
		return procedure.Case{}, fmt.Errorf("%w: %w", ErrCorruptRecord, p.err)
	}
	if err := c.Validate(); err != nil {
		return procedure.Case{}, fmt.Errorf("%w: %w", ErrCorruptRecord, err)
	}
	return c, nil
}

const layout = "2006-01-02T15:04:05.000Z"

// ts writes an instant at millisecond precision; the zero time is "".
func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(layout)
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// timeParser parses instants, keeping the first error.
type timeParser struct{ err error }

func (p *timeParser) parse(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(layout, s)
	if err != nil && p.err == nil {
		p.err = err
	}
	return t
}
