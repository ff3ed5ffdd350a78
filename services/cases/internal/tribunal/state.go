package tribunal

import (
	"slices"
	"time"

	"github.com/pcourt/pcourt/libs/award"
)

// Stage is where the decision stands.
type Stage string

// The stages, in the order a decision usually passes them.
const (
	// StageUnassigned: no tribunal yet. A proceeding is assigned when its
	// record closes, an evaluation at its opening.
	StageUnassigned Stage = ""
	// StageAwaitingRecord: assigned (an evaluation), the record is not
	// closed yet; the first run opens when it is.
	StageAwaitingRecord Stage = "awaiting_record"
	// StageAdjudication: a run is open; the adjudicator is to file.
	StageAdjudication Stage = "adjudication"
	// StageHumanAttention: the adjudicator asked for a human; the case
	// waits for the reviewer to resume it.
	StageHumanAttention Stage = "human_attention"
	// StageReview: a proposal awaits the reviewer.
	StageReview Stage = "review"
	// StagePreAwardReview: the sides see the dispositive part and may
	// point out clerical errors until the window ends or both answered.
	StagePreAwardReview Stage = "pre_award_review"
	// StageEvaluationIssued: an evaluation's result awaits acceptance.
	StageEvaluationIssued Stage = "evaluation_issued"
	// StageSettlement: the sides agreed a settlement (internal/settlement);
	// nobody decides any more, and the reviewer records the terms as a
	// consent award.
	StageSettlement Stage = "settlement"
	// StageAwarded: the award is issued. Nothing here changes it again.
	StageAwarded Stage = "awarded"
)

// Stages lists every stage, for docs and tests.
var Stages = []Stage{StageUnassigned, StageAwaitingRecord, StageAdjudication, StageHumanAttention, StageReview, StagePreAwardReview, StageEvaluationIssued, StageSettlement, StageAwarded}

// Role is a tribunal role.
type Role string

// The tribunal roles, as libs/auth names the credentials' roles.
const (
	Adjudicator Role = "adjudicator"
	Reviewer    Role = "reviewer"
)

// Member is an assigned tribunal member.
type Member struct {
	// CredentialID is the public id of the member's credential: only that
	// credential acts in the role.
	CredentialID string `json:"credentialId"`
	Role         Role   `json:"role"`
	// PartnerID receives the member's case events (its webhook endpoints).
	PartnerID string `json:"partnerId"`
	AgentID   string `json:"agentId,omitempty"`
	// Configuration is the adjudicator's configuration, pinned at
	// assignment; ConfigurationDigest its digest. Empty for a reviewer.
	Configuration       *award.Configuration `json:"configuration,omitempty"`
	ConfigurationDigest string               `json:"configurationDigest,omitempty"`
	AssignedAt          time.Time            `json:"assignedAt"`
}

// Candidate is a member of the tribunal pool, as a snapshot of the pool
// gives it to Tick and to the acts that replace a member.
type Candidate struct {
	CredentialID string
	Role         Role
	PartnerID    string
	AgentID      string
	// Configuration is set for an adjudicator.
	Configuration *award.Configuration
}

// RunStatus is where a run stands.
type RunStatus string

// The run statuses.
const (
	RunOpen           RunStatus = "open"            // the adjudicator is to file
	RunProposed       RunStatus = "proposed"        // a proposal was filed
	RunHumanAttention RunStatus = "human_attention" // the adjudicator asked for a human
	RunSuperseded     RunStatus = "superseded"      // replaced by a later run before use
	RunUsed           RunStatus = "used"            // its proposal went into the award
	RunEnded          RunStatus = "ended"           // the sides settled before it was used
)

// Run is one adjudication run.
type Run struct {
	ID                  string    `json:"runId"`
	Number              int       `json:"number"`
	AdjudicatorID       string    `json:"adjudicatorId"`
	ConfigurationDigest string    `json:"configurationDigest"`
	InputDigest         string    `json:"inputDigest"`
	Instructions        string    `json:"instructions,omitempty"`
	RequestedAt         time.Time `json:"requestedAt"`
	Status              RunStatus `json:"status"`
	// Proposal, OutputDigest and FiledAt are set once it is filed.
	Proposal     *award.Proposal `json:"proposal,omitempty"`
	OutputDigest string          `json:"outputDigest,omitempty"`
	FiledAt      time.Time       `json:"filedAt,omitzero"`
	// AttentionReason is why the adjudicator asked for a human.
	AttentionReason string `json:"attentionReason,omitempty"`
}

// ChallengeStatus is where an AI-configuration challenge stands.
type ChallengeStatus string

// The challenge statuses.
const (
	ChallengePending   ChallengeStatus = "pending"
	ChallengeUpheld    ChallengeStatus = "upheld"
	ChallengeDismissed ChallengeStatus = "dismissed"
)

// Challenge is a side's challenge to the adjudicator's configuration.
type Challenge struct {
	ID            string          `json:"challengeId"`
	Side          string          `json:"side"`
	ParticipantID string          `json:"participantId"`
	Grounds       string          `json:"grounds"`
	FiledAt       time.Time       `json:"filedAt"`
	Status        ChallengeStatus `json:"status"`
	Reasons       string          `json:"reasons,omitempty"`
	ResolvedAt    time.Time       `json:"resolvedAt,omitzero"`
	// ConfigurationDigest is the configuration challenged.
	ConfigurationDigest string `json:"configurationDigest"`
}

// Opinion is the reviewer's opinion of the proposal.
type Opinion string

// The opinions.
const (
	OpinionAgree  Opinion = "agree"  // the proposal's reasons stand
	OpinionRevise Opinion = "revise" // the reviewer's own reasons replace them
)

// Review is the reviewer's work on the current proposal.
type Review struct {
	Opinion   Opinion   `json:"opinion,omitempty"`
	Reasons   string    `json:"reasons,omitempty"`
	OpinionAt time.Time `json:"opinionAt,omitzero"`
	// Override replaces the proposal's outcome, remedies and reasons.
	Override   *award.Proposal `json:"override,omitempty"`
	AttestedAt time.Time       `json:"attestedAt,omitzero"`
}

// ClericalNote is a side's answer in the pre-award review: the clerical
// errors it points out (none is an answer too).
type ClericalNote struct {
	Side       string    `json:"side"`
	Errors     []string  `json:"errors"`
	AnsweredAt time.Time `json:"answeredAt"`
}

// PreAwardReview is the window in which both sides see the dispositive
// part before sign-off.
type PreAwardReview struct {
	OpenedAt   time.Time      `json:"openedAt"`
	DeadlineAt time.Time      `json:"deadlineAt"`
	ClosedAt   time.Time      `json:"closedAt,omitzero"`
	Notes      []ClericalNote `json:"notes,omitempty"`
	// DispositiveDigest is the digest of the outcome and remedies shown;
	// a later change to them voids the review.
	DispositiveDigest string `json:"dispositiveDigest"`
}

// Ruling is a procedural ruling of the reviewer.
type Ruling struct {
	ID       string    `json:"rulingId"`
	Text     string    `json:"text"`
	IssuedAt time.Time `json:"issuedAt"`
}

// Acceptance is a side's acceptance of an issued evaluation.
type Acceptance struct {
	Side       string    `json:"side"`
	AcceptedAt time.Time `json:"acceptedAt"`
}

// EvaluationResult is an evaluation issued by the reviewer's sign-off,
// awaiting acceptance.
type EvaluationResult struct {
	Outcome     string       `json:"outcome"`
	IssuedAt    time.Time    `json:"issuedAt"`
	DeadlineAt  time.Time    `json:"deadlineAt,omitzero"` // on_request: deemed accepted then
	Acceptances []Acceptance `json:"acceptances,omitempty"`
	Deemed      bool         `json:"deemed,omitempty"`
}

// Issued is an issued award: its identity and the digests of its
// artifacts, which the store keeps as the case's documents.
type Issued struct {
	AwardID   string    `json:"awardId"`
	AwardHash string    `json:"awardHash"`
	IssuedAt  time.Time `json:"issuedAt"`
	Outcome   string    `json:"outcome"`
	// Ordered are the sides a remedy orders to act.
	Ordered []string `json:"ordered,omitempty"`
	// HTMLDigest, PDFDigest and AttestationDigest are the SHA-256 of the
	// html and pdf artifacts and of the attestation; the json artifact is
	// kept under AwardHash itself.
	HTMLDigest        string `json:"htmlDigest"`
	PDFDigest         string `json:"pdfDigest"`
	AttestationDigest string `json:"attestationDigest"`
	KeyID             string `json:"keyId"`
}

// State is the decision's part of a case.
type State struct {
	Stage       Stage   `json:"stage,omitempty"`
	Adjudicator *Member `json:"adjudicator,omitempty"`
	Reviewer    *Member `json:"reviewer,omitempty"`
	// Recused are credentials never to be assigned to this case again:
	// members that recused and adjudicators replaced on a challenge.
	Recused []string `json:"recused,omitempty"`
	// AssignAfter delays the next assignment attempt after a pool had no
	// eligible members.
	AssignAfter time.Time `json:"assignAfter,omitzero"`
	// ChallengeDeadline ends the sides' window to challenge the pinned
	// configuration; it runs from the adjudicator's assignment.
	ChallengeDeadline time.Time         `json:"challengeDeadline,omitzero"`
	Runs              []Run             `json:"runs,omitempty"`
	Challenges        []Challenge       `json:"challenges,omitempty"`
	Review            Review            `json:"review"`
	PreAward          *PreAwardReview   `json:"preAward,omitempty"`
	Rulings           []Ruling          `json:"rulings,omitempty"`
	Evaluation        *EvaluationResult `json:"evaluation,omitempty"`
	Award             *Issued           `json:"award,omitempty"`
}

// Awarded reports whether the award is issued.
func (s State) Awarded() bool { return s.Award != nil }

// Assigned reports whether both members are assigned.
func (s State) Assigned() bool { return s.Adjudicator != nil && s.Reviewer != nil }

// Member returns the assigned member with the credential id, if any.
func (s State) Member(credentialID string) (Member, bool) {
	for _, m := range []*Member{s.Adjudicator, s.Reviewer} {
		if m != nil && m.CredentialID == credentialID {
			return *m, true
		}
	}
	return Member{}, false
}

// CurrentRun returns the last run, if any.
func (s State) CurrentRun() (Run, bool) {
	if len(s.Runs) == 0 {
		return Run{}, false
	}
	return s.Runs[len(s.Runs)-1], true
}

// Proposal returns the current run's proposal, if it filed one.
func (s State) Proposal() (award.Proposal, bool) {
	r, ok := s.CurrentRun()
	if !ok || r.Proposal == nil || (r.Status != RunProposed && r.Status != RunUsed) {
		return award.Proposal{}, false
	}
	return *r.Proposal, true
}

// Dispositive returns what the award would order now: the override when
// the reviewer made one, else the proposal, with the reasons the review
// settles on.
func (s State) Dispositive() (award.Proposal, bool) {
	p, ok := s.Proposal()
	if !ok {
		return award.Proposal{}, false
	}
	if o := s.Review.Override; o != nil {
		return *o, true
	}
	if s.Review.Opinion == OpinionRevise {
		p.Reasons = s.Review.Reasons
	}
	return p, true
}

// PendingChallenge reports whether a challenge awaits the reviewer.
func (s State) PendingChallenge() bool {
	return slices.ContainsFunc(s.Challenges, func(c Challenge) bool { return c.Status == ChallengePending })
}

// Clone returns a state sharing no mutable memory with s.
func (s State) Clone() State {
	cp := func(m *Member) *Member {
		if m == nil {
			return nil
		}
		c := *m
		if m.Configuration != nil {
			cfg := *m.Configuration
			cfg.Tools = slices.Clone(cfg.Tools)
			c.Configuration = &cfg
		}
		return &c
	}
	s.Adjudicator, s.Reviewer = cp(s.Adjudicator), cp(s.Reviewer)
	s.Recused = slices.Clone(s.Recused)
	s.Runs = slices.Clone(s.Runs)
	for i, r := range s.Runs {
		if r.Proposal != nil {
			p := clonePropsal(*r.Proposal)
			s.Runs[i].Proposal = &p
		}
	}
	s.Challenges = slices.Clone(s.Challenges)
	if s.Review.Override != nil {
		p := clonePropsal(*s.Review.Override)
		s.Review.Override = &p
	}
	if s.PreAward != nil {
		pa := *s.PreAward
		pa.Notes = slices.Clone(pa.Notes)
		s.PreAward = &pa
	}
	s.Rulings = slices.Clone(s.Rulings)
	if s.Evaluation != nil {
		e := *s.Evaluation
		e.Acceptances = slices.Clone(e.Acceptances)
		s.Evaluation = &e
	}
	if s.Award != nil {
		a := *s.Award
		a.Ordered = slices.Clone(a.Ordered)
		s.Award = &a
	}
	return s
}

func clonePropsal(p award.Proposal) award.Proposal {
	p.Remedies = slices.Clone(p.Remedies)
	p.Citations = slices.Clone(p.Citations)
	return p
}
