package procedure

import (
	"slices"
	"time"

	"github.com/pcourt/pcourt/services/cases/internal/evidence"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// The case and its evidence meet here: the facts of the case the evidence
// reads, and its notes turned into case events with their recipients.

// EvidenceFacts are what internal/evidence reads of the case.
func (c Case) EvidenceFacts() evidence.Facts {
	f := evidence.Facts{Limits: evidence.LimitsFor(c.Rules.Version), Joined: map[string]bool{}}
	for _, s := range c.presentSides() {
		f.Joined[string(s)] = true
	}
	switch st := c.Status(); {
	case st == StatusAwarded || st == StatusSettled || st == StatusTerminated:
		f.Phase = evidence.PhaseEnded
	case st == StatusRecordConfirmed:
		f.Phase = evidence.PhaseDecision
	case st == StatusAwaitingRecordConfirmation:
		f.Phase = evidence.PhaseConfirmation
	default:
		f.Phase = evidence.PhaseFiling
	}
	return f
}

// WithEvidence returns the outcome of an evidence act: c with the next
// evidence state and its notes as case events at now, to both sides and
// the tribunal members assigned. An act with no notes (an upload, or a
// description of an undisclosed exhibit) is quiet.
func (c Case) WithEvidence(out evidence.Outcome, now time.Time) Outcome {
	c.Evidence = out.State
	var events []Event
	for _, n := range out.Notes {
		spec := evidenceSpec(n.Type)
		ev := Event{Type: EventType(n.Type), OccurredAt: now, ActionRequired: spec.ActionRequired}
		ev.Recipients = recipients(c, bothSides)
		for _, m := range []*tribunal.Member{c.Tribunal.Adjudicator, c.Tribunal.Reviewer} {
			if m == nil {
				continue
			}
			if p := (Partner{Tenant: c.Tenant, Environment: c.Environment, PartnerID: m.PartnerID}); !slices.Contains(ev.Recipients, p) {
				ev.Recipients = append(ev.Recipients, p)
			}
		}
		events = append(events, ev)
	}
	// A replayed upload changed nothing: the outcome is not a change.
	return Outcome{Case: c, Events: events, Quiet: len(events) == 0 && !out.Replay}
}

func evidenceSpec(t evidence.EventType) evidence.EventSpec {
	i := slices.IndexFunc(evidence.EventSpecs, func(s evidence.EventSpec) bool { return s.Type == t })
	if i < 0 {
		panic("procedure: evidence event type without a spec: " + string(t))
	}
	return evidence.EventSpecs[i]
}
