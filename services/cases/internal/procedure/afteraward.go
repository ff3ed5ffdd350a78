package procedure

import (
	"slices"
	"time"

	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// The case and what follows its award meet here, as they do for the
// decision (tribunal.go): the facts the after-the-award domain reads, and
// its notes turned into case events with their recipients.

// AfterAwardFacts are what internal/afteraward reads of the case. The
// flow adds the served award's document and the deployment's execution
// modes.
func (c Case) AfterAwardFacts() afteraward.Facts {
	f := afteraward.Facts{
		CaseID: c.ID, Environment: c.Environment, Terminated: c.Closed == StatusTerminated,
		Award: c.Tribunal.Award, Windows: afteraward.WindowsByRules[c.Rules.Version],
		AppealFees: afteraward.AppealFeesByRules[c.Rules.Version],
		Decision:   c.TribunalFacts(),
	}
	if r := c.Tribunal.Reviewer; r != nil {
		f.ReviewerID = r.CredentialID
	}
	for _, s := range c.presentSides() {
		f.Sides = append(f.Sides, string(s))
	}
	return f
}

// WithAfterAward returns the outcome of an act after the award: c with
// the next state, a new award served in place of the one it amends, and
// the notes as case events at now.
func (c Case) WithAfterAward(out afteraward.Outcome, now time.Time) Outcome {
	c.AfterAward = out.State
	if out.Issued != nil {
		issued := *out.Issued
		c.Tribunal.Award = &issued
	}
	var events []Event
	for _, n := range out.Notes {
		events = append(events, c.afterAwardEvent(n, now))
	}
	return Outcome{Case: c, Events: events}
}

func (c Case) afterAwardEvent(n afteraward.Note, now time.Time) Event {
	ev := Event{Type: EventType(n.Type), OccurredAt: now, ActionRequired: n.ActionRequired}
	var out []Partner
	add := func(ps ...Partner) {
		for _, p := range ps {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	reviewer := func() {
		if m := c.Tribunal.Reviewer; m != nil {
			add(Partner{Tenant: c.Tenant, Environment: c.Environment, PartnerID: m.PartnerID})
		}
		// An appeal's events reach its appellate reviewer too.
		for _, ap := range c.AfterAward.Appeals {
			add(Partner{Tenant: c.Tenant, Environment: c.Environment, PartnerID: ap.Reviewer.PartnerID})
		}
	}
	switch n.Audience {
	case afteraward.ToSides:
		add(recipients(c, bothSides)...)
		for _, m := range []*tribunal.Member{c.Tribunal.Adjudicator} {
			if m != nil {
				add(Partner{Tenant: c.Tenant, Environment: c.Environment, PartnerID: m.PartnerID})
			}
		}
		reviewer()
	case afteraward.ToOtherSide:
		add(recipients(c, []Side{Side(n.Actor).Other()})...)
		reviewer()
	case afteraward.ToParties:
		add(recipients(c, bothSides)...)
	}
	ev.Recipients = out
	return ev
}
