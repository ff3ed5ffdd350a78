package procedure

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
	"github.com/pcourt/pcourt/services/cases/internal/evidence"
	"github.com/pcourt/pcourt/services/cases/internal/settlement"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// Side is a side of the dispute.
type Side string

// The two sides.
const (
	Claimant   Side = "claimant"
	Respondent Side = "respondent"
)

// Other returns the opposing side.
func (s Side) Other() Side {
	if s == Claimant {
		return Respondent
	}
	return Claimant
}

// Valid reports whether s is a known side.
func (s Side) Valid() bool { return s == Claimant || s == Respondent }

// Status is the status of a case. It follows from the stage the case is in,
// or from how it closed.
type Status string

// The case statuses.
const (
	// StatusAwaitingRespondent: no respondent has joined yet.
	StatusAwaitingRespondent Status = "awaiting_respondent"
	// StatusAwaitingAnswer: the respondent joined and the plan requires an answer.
	StatusAwaitingAnswer Status = "awaiting_answer"
	// StatusEvidence: an evidence round is open (Stage.Round says which).
	StatusEvidence Status = "evidence"
	// StatusRebuttal: a rebuttal round is open.
	StatusRebuttal Status = "rebuttal"
	// StatusAwaitingRecordConfirmation: the sides confirm the record.
	StatusAwaitingRecordConfirmation Status = "awaiting_record_confirmation"
	// StatusRecordConfirmed: the record is closed; the case awaits its
	// decision, which is beyond this package.
	StatusRecordConfirmed Status = "record_confirmed"
	// StatusTerminated: the case ended by termination. Nothing more happens.
	StatusTerminated Status = "terminated"
	// StatusAwarded: the tribunal issued the award (internal/tribunal).
	StatusAwarded Status = "awarded"
	// StatusSettled: the sides agreed a settlement (internal/settlement),
	// at any stage: the procedure stops and nobody decides; the reviewer
	// records the terms as a consent award, which ends the case.
	StatusSettled Status = "settled"
)

// Statuses lists every status in procedural order.
var Statuses = []Status{
	StatusAwaitingRespondent, StatusAwaitingAnswer, StatusEvidence, StatusRebuttal,
	StatusAwaitingRecordConfirmation, StatusRecordConfirmed, StatusAwarded, StatusSettled, StatusTerminated,
}

// Open reports whether the procedure still runs: the case is neither
// record-confirmed, awarded, settled nor terminated.
func (s Status) Open() bool {
	return s != StatusRecordConfirmed && s != StatusAwarded && s != StatusSettled && s != StatusTerminated
}

// Profile names a procedure plan, as filings does.
type Profile string

// The procedure profiles.
const (
	ProfileStandard      Profile = "standard"
	ProfileFast          Profile = "fast"
	ProfileSingleRound   Profile = "single_round"
	ProfileJointRecord   Profile = "joint_record"
	ProfileEvaluation    Profile = "evaluation"
	ProfileCustomBounded Profile = "custom_bounded"
)

var profiles = []Profile{ProfileStandard, ProfileFast, ProfileSingleRound, ProfileJointRecord, ProfileEvaluation, ProfileCustomBounded}

// Plan is the procedure plan (case-procedure-plan-v2) the case was opened with.
type Plan struct {
	Profile                    Profile
	AnswerRequired             bool
	EvidenceRounds             int // 1 to 3
	RebuttalRounds             int // 0 to 3
	FilingsPerSidePerStage     int // 1 to 3
	RecordConfirmationRequired bool
}

// Validate reports the first value outside the plan's bounds.
func (p Plan) Validate() error {
	switch {
	case !slices.Contains(profiles, p.Profile):
		return fmt.Errorf("procedure plan: unknown profile %q", p.Profile)
	case p.EvidenceRounds < 1 || p.EvidenceRounds > 3:
		return fmt.Errorf("procedure plan: evidenceRounds %d not in 1..3", p.EvidenceRounds)
	case p.RebuttalRounds < 0 || p.RebuttalRounds > 3:
		return fmt.Errorf("procedure plan: rebuttalRounds %d not in 0..3", p.RebuttalRounds)
	case p.FilingsPerSidePerStage < 1 || p.FilingsPerSidePerStage > 3:
		return fmt.Errorf("procedure plan: filingsPerSidePerStage %d not in 1..3", p.FilingsPerSidePerStage)
	case !p.RecordConfirmationRequired:
		return errors.New("procedure plan: recordConfirmationRequired must be true")
	}
	return nil
}

// Mode is the case's caseMode: a proceeding decides a claim; an
// evaluation answers one pinned question with one of its allowed outcomes.
type Mode string

// The case modes.
const (
	ModeProceeding Mode = "proceeding"
	ModeEvaluation Mode = "evaluation"
)

// Claim is what the claimant asks for, as the draft pinned it: an award
// never orders more than it.
type Claim struct {
	AmountMinor int64  // in Currency's minor units
	Currency    string // ISO 4217
	Remedy      string
	Summary     string
}

// EvaluationDefinition is the pinned definition of an evaluation case
// (narrow-evaluation-v2).
type EvaluationDefinition struct {
	ExternalEvaluationID string
	EvaluationDigest     string
	Question             string
	Criteria             []string
	AllowedOutcomes      []string
	EvidencePolicy       string
	// ReviewPolicy says who accepts an issued evaluation before it
	// becomes the award: none (nobody), on_request (a side may ask for
	// review instead of accepting) or always (both sides accept).
	ReviewPolicy string
}

// Rules are the rules a case is pinned to at opening.
type Rules struct {
	Version string
	Hash    string // SHA-256 of the rules text, lowercase hex
}

// Partner is a webhook recipient: a partner in one tenant and environment.
type Partner struct {
	Tenant      string
	Environment string
	PartnerID   string
}

// Participant is one participant of the case.
type Participant struct {
	ID   string
	Side Side
	// PartnerID is the partner whose credentials act for the participant.
	// It is empty for a hosted respondent (one that named no partner or
	// agent and did not confirm the draft): no partner acts for it until it
	// joins, and joining binds it, to the partner whose agent joined with
	// the invitation (PartnerID) or to the person signed in on the hosted
	// page (Hosted).
	PartnerID string
	// Hosted says the participant joined on the hosted page: only that
	// page's session acts for it, never a credential or a capability.
	Hosted      bool
	PrincipalID string
	AgentID     string // immutable agent id, if any
	// AccountID is the platform account that takes part as the
	// participant, if one does; PartnerID is then empty, and only that
	// account's own tokens act for it.
	AccountID string
	// JoinedAt is when the participant took part: the opening instant for
	// one that confirmed the draft, the join act's instant for an invited
	// respondent; zero while it has not joined.
	JoinedAt time.Time
}

// Joined reports whether the participant takes part in the case.
func (p Participant) Joined() bool { return !p.JoinedAt.IsZero() }

// Unbound reports whether nobody acts for the participant yet: a hosted
// respondent that has not joined. Its join binds it.
func (p Participant) Unbound() bool { return p.PartnerID == "" && p.AccountID == "" && !p.Hosted }

// Stage is where the procedure stands while the case is open.
type Stage struct {
	Kind       StageKind
	Round      int // 1-based for evidence and rebuttal rounds, 0 otherwise
	OpenedAt   time.Time
	DeadlineAt time.Time
	// Warned records that deadline_approaching was emitted for this stage.
	Warned bool
}

// Submission is one filing in an evidence or rebuttal round. Its content
// lives outside the procedure; Digest identifies it.
type Submission struct {
	ID            string
	ParticipantID string
	Side          Side
	Stage         StageKind
	Round         int
	Digest        string
	FiledAt       time.Time
	AmendedAt     time.Time // zero until amended
	Amendments    int
}

// Message is one message a side posted to the case. Its text lives
// outside the procedure; Digest identifies it.
type Message struct {
	ID            string
	ParticipantID string
	Side          Side
	Digest        string
	PostedAt      time.Time
}

// Answer is the respondent's answer.
type Answer struct {
	ParticipantID string
	Digest        string
	FiledAt       time.Time
}

// Termination is a pending request to end the case.
type Termination struct {
	ID            string
	Side          Side
	ParticipantID string
	RequestedAt   time.Time
	DeadlineAt    time.Time
}

// Case is an opened case. Its fields are exported for the store's record
// conversion; only [Open], [Decide] and [Tick] produce new values, and
// [Case.Validate] checks a loaded one.
type Case struct {
	ID            string
	ExternalID    string
	Tenant        string
	Environment   string
	PartnerID     string // the filing partner
	OpenedAt      time.Time
	OpenedEventID string // the case-opened event that created it
	Rules         Rules
	Plan          Plan
	Windows       Windows // resolved from Rules at opening and pinned
	Mode          Mode
	// Claim is zero for a case opened before the case-opened fact
	// carried it: its award orders no payment.
	Claim        Claim
	Evaluation   *EvaluationDefinition // set for ModeEvaluation
	FeeID        string
	FeeStatus    string
	Participants []Participant
	Recipients   map[Side][]Partner
	Capabilities map[string]string // purpose → SHA-256 of the secret
	Stage        Stage             // meaningful while Closed is empty
	// PastStages are the stages the case has left, in order, each with
	// the deadline it had and when it closed (timeline.go). A case opened
	// before they were kept holds only those it left since.
	PastStages   []PastStage
	Closed       Status // "", StatusRecordConfirmed or StatusTerminated
	ClosedAt     time.Time
	Answer       *Answer
	AnswerMissed bool
	Submissions  []Submission
	Messages     []Message
	// MessagesRead is, per side, how many of Messages (in posting order)
	// that side has marked read.
	MessagesRead   map[Side]int
	RecordConfirms map[Side]time.Time
	RecordDeemed   bool // the record closed at its deadline without every confirmation
	// Corrections are the sides' corrections of their own record entries
	// (record.go), in the order made.
	Corrections []RecordCorrection
	Termination *Termination
	// Tribunal is the decision's part of the case (internal/tribunal):
	// who decides, the runs, the review and the award.
	Tribunal tribunal.State
	// Evidence is the case's exhibits (internal/evidence): files, their
	// disclosure, authenticity challenges and processing defects.
	Evidence evidence.State
	// AfterAward is what follows the award (internal/afteraward): the
	// post-award requests, finality, amended awards and executions.
	AfterAward afteraward.State
	// Settlement is the sides' settlement binding (internal/settlement):
	// the proposals of terms, the agreement and its record.
	Settlement settlement.State
	// Representatives are every representative the sides appointed,
	// removed ones included, in appointment order (representatives.go).
	Representatives []Representative
	// LoginReissues are the instants the hosted respondent's sign-in link
	// was reissued within the last LoginReissueWindow (older ones are
	// dropped at the next reissue): the rate limit counts them.
	LoginReissues []time.Time
	// Origin is set for a case opened from an AP2 or UCP resolution
	// request (origin.go); nil otherwise.
	Origin *Origin
}

// Status returns the case's status. A settled case is settled whatever
// stage the agreement found it in, its consent award issued or not: the
// agreement is how it ended.
func (c Case) Status() Status {
	if c.Settlement.Agreed() {
		return StatusSettled
	}
	if c.Closed == StatusRecordConfirmed && c.Tribunal.Awarded() {
		return StatusAwarded
	}
	if c.Closed != "" {
		return c.Closed
	}
	return stageSpec(c.Stage.Kind).Status
}

// running reports whether the procedure's stages still run: the case is
// neither closed nor settled.
func (c Case) running() bool { return c.Closed == "" && !c.Settlement.Agreed() }

// Participant returns the participant with the given id.
func (c Case) Participant(id string) (Participant, bool) {
	for _, p := range c.Participants {
		if p.ID == id {
			return p, true
		}
	}
	return Participant{}, false
}

// RespondentJoined reports whether some respondent takes part.
func (c Case) RespondentJoined() bool { return c.joined(Respondent) }

func (c Case) joined(s Side) bool {
	for _, p := range c.Participants {
		if p.Side == s && p.Joined() {
			return true
		}
	}
	return false
}

// presentSides are the sides with a joined participant, claimant first.
func (c Case) presentSides() []Side {
	var out []Side
	for _, s := range []Side{Claimant, Respondent} {
		if c.joined(s) {
			out = append(out, s)
		}
	}
	return out
}

// filed counts a side's submissions in the current stage.
func (c Case) filed(s Side) int {
	n := 0
	for _, sub := range c.Submissions {
		if sub.Side == s && sub.Stage == c.Stage.Kind && sub.Round == c.Stage.Round {
			n++
		}
	}
	return n
}

// clone returns a case sharing no mutable memory with c.
func (c Case) clone() Case {
	c.Participants = slices.Clone(c.Participants)
	c.Submissions = slices.Clone(c.Submissions)
	c.PastStages = slices.Clone(c.PastStages)
	c.Messages = slices.Clone(c.Messages)
	c.Corrections = slices.Clone(c.Corrections)
	read := make(map[Side]int, len(c.MessagesRead))
	for k, v := range c.MessagesRead {
		read[k] = v
	}
	c.MessagesRead = read
	rec := make(map[Side][]Partner, len(c.Recipients))
	for k, v := range c.Recipients {
		rec[k] = slices.Clone(v)
	}
	c.Recipients = rec
	caps := make(map[string]string, len(c.Capabilities))
	for k, v := range c.Capabilities {
		caps[k] = v
	}
	c.Capabilities = caps
	c.LoginReissues = slices.Clone(c.LoginReissues)
	confirms := make(map[Side]time.Time, len(c.RecordConfirms))
	for k, v := range c.RecordConfirms {
		confirms[k] = v
	}
	c.RecordConfirms = confirms
	if c.Answer != nil {
		a := *c.Answer
		c.Answer = &a
	}
	if c.Termination != nil {
		t := *c.Termination
		c.Termination = &t
	}
	c.Tribunal = c.Tribunal.Clone()
	c.Evidence = c.Evidence.Clone()
	c.AfterAward = c.AfterAward.Clone()
	c.Settlement = c.Settlement.Clone()
	c.Representatives = slices.Clone(c.Representatives)
	c.Origin = c.Origin.clone()
	return c
}

// ErrCorruptCase means a loaded case breaks an invariant.
var ErrCorruptCase = errors.New("corrupt case")

// Validate checks the invariants a stored case must keep.
func (c Case) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w %s: %s", ErrCorruptCase, c.ID, fmt.Sprintf(format, args...))
	}
	if !validID(c.ID) {
		return bad("case id must be 1 to 64 characters of A-Z a-z 0-9 . _ : -")
	}
	if err := c.Plan.Validate(); err != nil {
		return bad("%v", err)
	}
	if err := c.Windows.Validate(); err != nil {
		return bad("%v", err)
	}
	switch c.Closed {
	case "":
		if _, ok := lookupStage(c.Stage.Kind); !ok {
			return bad("unknown stage %q", c.Stage.Kind)
		}
		if c.Stage.DeadlineAt.Before(c.Stage.OpenedAt) {
			return bad("stage deadline before its opening")
		}
	case StatusRecordConfirmed, StatusTerminated:
	default:
		return bad("unknown closing status %q", c.Closed)
	}
	for _, s := range c.PastStages {
		if _, ok := lookupStage(s.Kind); !ok {
			return bad("unknown past stage %q", s.Kind)
		}
		if s.DeadlineAt.Before(s.OpenedAt) || s.ClosedAt.Before(s.OpenedAt) {
			return bad("past stage %s %d ends before its opening", s.Kind, s.Round)
		}
	}
	switch {
	case c.Mode != ModeProceeding && c.Mode != ModeEvaluation:
		return bad("unknown case mode %q", c.Mode)
	case (c.Mode == ModeEvaluation) != (c.Evaluation != nil):
		return bad("an evaluation case, and only one, carries its evaluation definition")
	}
	seen := map[string]bool{}
	for _, p := range c.Participants {
		if !p.Side.Valid() || p.ID == "" || seen[p.ID] {
			return bad("participant %q is invalid or repeated", p.ID)
		}
		seen[p.ID] = true
		switch {
		case p.AccountID != "" && (p.PartnerID != "" || p.Hosted):
			return bad("participant %q is an account's and names a partner or is hosted", p.ID)
		case p.PartnerID == "" && p.AccountID == "" && p.Side != Respondent:
			return bad("participant %q names no partner and no account: only a hosted respondent may", p.ID)
		case p.Hosted && (p.PartnerID != "" || !p.Joined()):
			return bad("participant %q is hosted but names a partner or has not joined", p.ID)
		case p.Unbound() && p.Joined():
			return bad("participant %q joined without a partner or the hosted page", p.ID)
		}
	}
	if !slices.ContainsFunc(c.Participants, func(p Participant) bool { return p.Side == Claimant && p.Joined() }) {
		return bad("no joined claimant")
	}
	if err := c.Settlement.Validate(); err != nil {
		return bad("%v", err)
	}
	reps, representing := map[string]bool{}, map[string]bool{}
	for _, r := range c.Representatives {
		switch {
		case !validID(r.ID) || reps[r.ID] || !r.Side.Valid() || !ValidSubject(r.Subject) || !ValidRepresentativeLabel(r.Label) || r.AppointedAt.IsZero():
			return bad("representative %q is invalid or repeated", r.ID)
		case r.Active() && representing[r.Subject]:
			return bad("subject %q represents twice", r.Subject)
		}
		reps[r.ID] = true
		representing[r.Subject] = representing[r.Subject] || r.Active()
	}
	return nil
}

// validID reports whether s is 1 to 64 characters of A-Z a-z 0-9 . _ : -.
func validID(s string) bool { return validToken(s, 64) }

// ValidCaseID reports whether s can name a case: 1 to 64 characters of
// A-Z a-z 0-9 . _ : -. A path that names anything else names no case.
func ValidCaseID(s string) bool { return validID(s) }

func validToken(s string, maxLen int) bool {
	if s == "" || len(s) > maxLen {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == ':', r == '-':
		default:
			return false
		}
	}
	return true
}
