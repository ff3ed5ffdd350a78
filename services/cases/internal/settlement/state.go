package settlement

import (
	"errors"
	"fmt"
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

// ProposalStatus is where a proposal of terms stands.
type ProposalStatus string

// The proposal statuses.
const (
	// ProposalPending: the other side may accept it.
	ProposalPending ProposalStatus = "pending"
	// ProposalAccepted: the other side accepted it; these are the agreed
	// terms.
	ProposalAccepted ProposalStatus = "accepted"
	// ProposalWithdrawn: its side withdrew it.
	ProposalWithdrawn ProposalStatus = "withdrawn"
	// ProposalReplaced: a later proposal, of either side, replaced it.
	ProposalReplaced ProposalStatus = "replaced"
)

// Proposal is one side's proposal of terms.
type Proposal struct {
	ID            string         `json:"proposalId"`
	Side          string         `json:"side"`
	ParticipantID string         `json:"participantId"`
	Terms         award.Terms    `json:"terms"`
	TermsDigest   string         `json:"termsDigest"`
	ProposedAt    time.Time      `json:"proposedAt"`
	Status        ProposalStatus `json:"status"`
	// AcceptedBy is the participant of the other side that accepted it.
	AcceptedBy string `json:"acceptedBy,omitempty"`
	// EndedAt is when it was accepted, withdrawn or replaced.
	EndedAt time.Time `json:"endedAt,omitzero"`
}

// State is the settlement part of a case. Its proposals are kept, every
// one, in the order made: they are the record of the negotiation.
type State struct {
	Proposals []Proposal `json:"proposals,omitempty"`
	// AgreedAt is when the other side accepted a proposal: the case is
	// settled from then on. Zero until then.
	AgreedAt time.Time `json:"agreedAt,omitzero"`
	// RecordedAt, RecordedBy and AwardHash are the reviewer's record of
	// the agreed terms: when, by which credential, and the consent award
	// it issued.
	RecordedAt time.Time `json:"recordedAt,omitzero"`
	RecordedBy string    `json:"recordedBy,omitempty"`
	AwardHash  string    `json:"awardHash,omitempty"`
}

// Stage is where the settlement stands, as the views say it.
type Stage string

// The stages.
const (
	StageNone     Stage = "none"     // no proposal pending, none agreed
	StageProposed Stage = "proposed" // a proposal is pending
	StageAgreed   Stage = "agreed"   // the sides agreed; the reviewer records it
	StageRecorded Stage = "recorded" // the consent award is issued
)

// Stages lists every stage, for docs and tests.
var Stages = []Stage{StageNone, StageProposed, StageAgreed, StageRecorded}

// Stage returns where the settlement stands.
func (s State) Stage() Stage {
	switch _, pending := s.Pending(); {
	case s.Recorded():
		return StageRecorded
	case s.Agreed():
		return StageAgreed
	case pending:
		return StageProposed
	}
	return StageNone
}

// Empty reports whether nothing was ever proposed.
func (s State) Empty() bool {
	return len(s.Proposals) == 0 && s.AgreedAt.IsZero() && s.RecordedAt.IsZero()
}

// Agreed reports whether both sides agreed terms: the case is settled.
func (s State) Agreed() bool { return !s.AgreedAt.IsZero() }

// Recorded reports whether the consent award is issued.
func (s State) Recorded() bool { return !s.RecordedAt.IsZero() }

// Pending returns the pending proposal, if any.
func (s State) Pending() (Proposal, bool) { return s.find(ProposalPending) }

// Accepted returns the accepted proposal, the agreed terms, if any.
func (s State) Accepted() (Proposal, bool) { return s.find(ProposalAccepted) }

func (s State) find(st ProposalStatus) (Proposal, bool) {
	i := slices.IndexFunc(s.Proposals, func(p Proposal) bool { return p.Status == st })
	if i < 0 {
		return Proposal{}, false
	}
	return s.Proposals[i], true
}

// Clone returns a state sharing no mutable memory with s.
func (s State) Clone() State {
	s.Proposals = slices.Clone(s.Proposals)
	for i, p := range s.Proposals {
		s.Proposals[i].Terms.Remedies = slices.Clone(p.Terms.Remedies)
	}
	return s
}

// ErrCorrupt means a loaded state breaks an invariant.
var ErrCorrupt = errors.New("corrupt settlement")

// Validate checks the invariants a stored state keeps: proposal ids in
// order, at most one pending and one accepted, each named by its terms'
// digest; agreed exactly when one was accepted, and recorded only once
// agreed.
func (s State) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	pending, accepted := 0, 0
	for i, p := range s.Proposals {
		if p.ID != ProposalID(i+1) || (p.Side != Claimant && p.Side != Respondent) {
			return bad("proposal %d is %q of side %q", i+1, p.ID, p.Side)
		}
		if d, err := p.Terms.Digest(); err != nil || d != p.TermsDigest {
			return bad("proposal %s is not named by its terms' digest", p.ID)
		}
		switch p.Status {
		case ProposalPending:
			pending++
		case ProposalAccepted:
			accepted++
		case ProposalWithdrawn, ProposalReplaced:
		default:
			return bad("proposal %s has status %q", p.ID, p.Status)
		}
	}
	switch {
	case pending > 1 || accepted > 1 || (pending == 1 && accepted == 1):
		return bad("%d pending and %d accepted proposals", pending, accepted)
	case s.Agreed() != (accepted == 1):
		return bad("agreed at %v with %d accepted proposals", s.AgreedAt, accepted)
	case s.Recorded() && (!s.Agreed() || s.AwardHash == "" || s.RecordedBy == ""):
		return bad("recorded without agreement, award or reviewer")
	}
	return nil
}
