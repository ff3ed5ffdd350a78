package procedure

import (
	"slices"
	"time"

	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
	"github.com/pcourt/pcourt/services/cases/internal/settlement"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// The case and its settlement meet here, as they do for the decision
// (tribunal.go): the facts the settlement reads, and its outcome turned
// into the case's. An agreement settles the case (Status settled): the
// procedure stops, a pending termination request lapses, and the
// decision ends where it stands; the record serves the consent award,
// final on its issue.

// SettlementFacts are what internal/settlement reads of the case.
func (c Case) SettlementFacts() settlement.Facts {
	f := settlement.Facts{CaseID: c.ID, Terminated: c.Closed == StatusTerminated, Awarded: c.Tribunal.Awarded(), Decision: c.TribunalFacts()}
	if r := c.Tribunal.Reviewer; r != nil {
		f.ReviewerID = r.CredentialID
	}
	if a := c.Tribunal.Adjudicator; a != nil {
		f.AdjudicatorID = a.CredentialID
	}
	for _, s := range c.presentSides() {
		f.Sides = append(f.Sides, string(s))
	}
	return f
}

// WithSettlement returns the outcome of a settlement act: c with the next
// settlement state and its notes as case events at now; on the agreement,
// the procedure stopped (by the status) with a pending termination lapsed
// and the decision ended (tribunal.EndForSettlement); on the record, the
// consent award served (tribunal.RecordConsent, award_issued) and final
// (afteraward.FinalByConsent, award_final).
func (c Case) WithSettlement(out settlement.Outcome, now time.Time) Outcome {
	agreed := !c.Settlement.Agreed() && out.State.Agreed()
	c.Settlement = out.State
	var events []Event
	for _, n := range out.Notes {
		events = append(events, c.settlementEvent(n, now))
	}
	if agreed {
		c.Tribunal = tribunal.EndForSettlement(c.Tribunal)
		if c.Termination != nil {
			// The settlement ends the dispute: a termination request
			// still pending lapses with it, as with an award.
			c.Termination = nil
			events = append(events, emit(EventTerminationLapsed, c, "", now))
		}
	}
	if out.Issued != nil {
		served := tribunal.RecordConsent(c.Tribunal, *out.Issued)
		c.Tribunal = served.State
		for _, n := range served.Notes {
			events = append(events, c.tribunalEvent(n, now))
		}
		final := afteraward.FinalByConsent(c.AfterAward, now)
		c.AfterAward = final.State
		for _, n := range final.Notes {
			events = append(events, c.afterAwardEvent(n, now))
		}
	}
	return Outcome{Case: c, Events: events}
}

func (c Case) settlementEvent(n settlement.Note, now time.Time) Event {
	ev := Event{Type: EventType(n.Type), OccurredAt: now, ActionRequired: n.ActionRequired}
	switch n.Audience {
	case settlement.ToOtherSide:
		ev.Recipients = recipients(c, []Side{Side(n.Actor).Other()})
	case settlement.ToSides:
		ev.Recipients = recipients(c, bothSides)
	case settlement.ToTribunal:
		for _, m := range []*tribunal.Member{c.Tribunal.Adjudicator, c.Tribunal.Reviewer} {
			if m == nil {
				continue
			}
			if p := (Partner{Tenant: c.Tenant, Environment: c.Environment, PartnerID: m.PartnerID}); !slices.Contains(ev.Recipients, p) {
				ev.Recipients = append(ev.Recipients, p)
			}
		}
	}
	return ev
}
