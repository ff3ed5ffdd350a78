package tribunal

import (
	"fmt"
	"slices"
	"time"

	"github.com/pcourt/pcourt/libs/award"
)

// The decision meets a settlement (internal/settlement) here. Once both
// sides agree terms nobody decides the dispute any more: the decision
// stops where it stands (EndForSettlement), a reviewer is assigned if
// none is (Tick), and the reviewer's record of the terms is served as the
// case's award (RecordConsent).

// EndForSettlement returns s as a settlement agreed at the case leaves it:
// a run not used ends (RunEnded), and an assigned tribunal moves to
// StageSettlement, where no decision act is open. An unassigned one
// stays unassigned until Tick assigns it a reviewer. An awarded decision
// is returned unchanged (a settlement never follows an award).
func EndForSettlement(s State) State {
	if s.Awarded() {
		return s
	}
	next := s.Clone()
	if n := len(next.Runs); n > 0 {
		switch next.Runs[n-1].Status {
		case RunOpen, RunProposed, RunHumanAttention:
			next.Runs[n-1].Status = RunEnded
		}
	}
	if next.Stage != StageUnassigned {
		next.Stage = StageSettlement
	}
	return next
}

// RecordConsent serves the consent award that records a settlement: the
// decision ends as a sign-off ends it (StageAwarded), and award_issued
// goes to the sides the award orders to act and, apart, to the others.
// The settlement builds the award and checks who records it.
func RecordConsent(s State, issued Issued) Outcome {
	next := s.Clone()
	a := issued
	a.Ordered = slices.Clone(issued.Ordered)
	next.Stage, next.Award = StageAwarded, &a
	return Outcome{State: next, Notes: awardNotes(a.Ordered)}
}

// CheckRemedies checks remedies an award on agreed terms would order, as
// a proposal's remedies are checked: their count and shape and each due
// after now (invalid_tribunal_act), then what the case allows
// (remedy_exceeds_claim: an evaluation orders none; payments only from
// the respondent to the claimant, in the claim's currency, never above
// the claim in total). The refusal codes are this package's.
func CheckRemedies(remedies []award.Remedy, f Facts, now time.Time) error {
	bad := func(format string, args ...any) error {
		return refuse(CodeInvalidAct, "%s", fmt.Sprintf(format, args...))
	}
	if len(remedies) > MaxRemedies {
		return bad("at most %d remedies", MaxRemedies)
	}
	if err := validRemedies(remedies, bad); err != nil {
		return err
	}
	if err := dueLater(remedies, now.UTC().Truncate(time.Millisecond)); err != nil {
		return err
	}
	if f.Evaluation && len(remedies) > 0 {
		return refuse(CodeRemedyExceedsClaim, "an evaluation orders no remedies: its settlement's terms are the text alone")
	}
	return withinClaim(remedies, f)
}

// latest returns the later of a and b.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
