package afteraward

import (
	"slices"
	"time"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// The sides, as the award writes them.
const (
	Claimant   = tribunal.Claimant
	Respondent = tribunal.Respondent
)

// RequestKind is a kind of post-award request.
type RequestKind string

// The post-award requests.
const (
	// Correction of a clerical, computational or typographical error: the
	// outcome stays, the reasons and remedies may be corrected.
	Correction RequestKind = "correction"
	// Interpretation of a part of the award: the interpretation is added
	// to the reasons.
	Interpretation RequestKind = "interpretation"
	// AdditionalAward on a claim presented but not decided: remedies are
	// added, within the claim.
	AdditionalAward RequestKind = "additional_award"
)

// RequestKinds lists every kind, for docs and tests.
var RequestKinds = []RequestKind{Correction, Interpretation, AdditionalAward}

// RequestStatus is where a post-award request stands.
type RequestStatus string

// The request statuses.
const (
	RequestPending RequestStatus = "pending"
	RequestGranted RequestStatus = "granted"
	RequestDenied  RequestStatus = "denied"
)

// Request is a side's post-award request.
type Request struct {
	ID            string        `json:"requestId"`
	Kind          RequestKind   `json:"kind"`
	Side          string        `json:"side"`
	ParticipantID string        `json:"participantId"`
	Text          string        `json:"text"`
	AwardHash     string        `json:"awardHash"` // the award it asks about
	FiledAt       time.Time     `json:"filedAt"`
	Status        RequestStatus `json:"status"`
	// Reasons, DecidedAt and IssuedAwardHash are set by the decision;
	// IssuedAwardHash names the new award a granted request issued.
	Reasons         string    `json:"reasons,omitempty"`
	DecidedAt       time.Time `json:"decidedAt,omitzero"`
	IssuedAwardHash string    `json:"issuedAwardHash,omitempty"`
}

// Waiver is a side's waiver of its post-award recourse (the website's
// consent control): it files no request, and the award is final once
// every joined side waived and nothing is pending.
type Waiver struct {
	Side          string    `json:"side"`
	ParticipantID string    `json:"participantId"`
	WaivedAt      time.Time `json:"waivedAt"`
}

// State is the after-the-award part of a case.
type State struct {
	Waivers  []Waiver  `json:"waivers,omitempty"`
	Requests []Request `json:"requests,omitempty"`
	// FinalAt is when the served award became final; zero until then.
	FinalAt time.Time `json:"finalAt,omitzero"`
	// FinalBy says how: "waiver", "window_lapsed" or "appeal_decided".
	FinalBy string `json:"finalBy,omitempty"`
	// Appeals are the sides' appeals, in filing order; at most one is
	// open at a time.
	Appeals []Appeal `json:"appeals,omitempty"`
	// Superseded are the awards amended by a later one, oldest first.
	Superseded []tribunal.Issued `json:"superseded,omitempty"`
	// Executions are the served award's executions, in creation order.
	Executions []Execution `json:"executions,omitempty"`
}

// Empty reports whether nothing happened after the award.
func (s State) Empty() bool {
	return len(s.Waivers) == 0 && len(s.Requests) == 0 && len(s.Appeals) == 0 && s.FinalAt.IsZero() && len(s.Superseded) == 0 && len(s.Executions) == 0
}

// Final reports whether the served award is final.
func (s State) Final() bool { return !s.FinalAt.IsZero() }

// Pending returns the pending request, if any.
func (s State) Pending() (Request, bool) {
	i := slices.IndexFunc(s.Requests, func(r Request) bool { return r.Status == RequestPending })
	if i < 0 {
		return Request{}, false
	}
	return s.Requests[i], true
}

// Request returns the request with the id.
func (s State) Request(id string) (Request, bool) {
	i := slices.IndexFunc(s.Requests, func(r Request) bool { return r.ID == id })
	if i < 0 {
		return Request{}, false
	}
	return s.Requests[i], true
}

// Execution returns the execution with the id.
func (s State) Execution(id string) (Execution, bool) {
	i := slices.IndexFunc(s.Executions, func(e Execution) bool { return e.ID == id })
	if i < 0 {
		return Execution{}, false
	}
	return s.Executions[i], true
}

func (s State) waived(side string) bool {
	return slices.ContainsFunc(s.Waivers, func(w Waiver) bool { return w.Side == side })
}

// Clone returns a state sharing no mutable memory with s.
func (s State) Clone() State {
	s.Waivers = slices.Clone(s.Waivers)
	s.Requests = slices.Clone(s.Requests)
	s.Appeals = slices.Clone(s.Appeals)
	for i, ap := range s.Appeals {
		s.Appeals[i].Grounds = slices.Clone(ap.Grounds)
		if ap.Answer != nil {
			an := *ap.Answer
			s.Appeals[i].Answer = &an
		}
		if ap.Fee.Payment != nil {
			p := *ap.Fee.Payment
			s.Appeals[i].Fee.Payment = &p
		}
	}
	s.Superseded = slices.Clone(s.Superseded)
	for i, a := range s.Superseded {
		s.Superseded[i].Ordered = slices.Clone(a.Ordered)
	}
	s.Executions = slices.Clone(s.Executions)
	for i, e := range s.Executions {
		s.Executions[i].Attempts = slices.Clone(e.Attempts)
		if e.Payment != nil {
			p := *e.Payment
			s.Executions[i].Payment = &p
		}
		if e.Completion != nil {
			c := *e.Completion
			s.Executions[i].Completion = &c
		}
	}
	return s
}

// Facts are what the after-the-award domain reads of the rest of the case.
type Facts struct {
	CaseID      string
	Environment string
	Terminated  bool
	// Award is the served award; nil before the award.
	Award *tribunal.Issued
	// Served is the served award's document, which a granted request
	// amends; the flow decodes it from the award's json artifact for the
	// reviewer's decision (nil otherwise).
	Served *award.Document
	// ReviewerID is the credential id of the reviewer who decides the
	// requests: the reviewer who signed the award.
	ReviewerID string
	// Sides are the sides with a joined participant.
	Sides   []string
	Windows Windows
	// Decision are the decision's facts, against which an amended award
	// is checked as the award was.
	Decision tribunal.Facts
	// Modes are the execution modes this deployment can run.
	Modes []Mode
	// AppellateReviewer is the reviewer an appeal filed now would go to,
	// picked by the flow from the tribunal pool (nil: none eligible);
	// AppealFeeCollection how its fee would be collected, and AppealFees
	// the rules version's schedule.
	AppellateReviewer   *tribunal.Member
	AppealFeeCollection FeeCollection
	AppealFees          AppealFeeSchedule
}
