package procedure

import (
	"slices"
	"time"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// The case and its decision meet here: the facts of the case the tribunal
// reads, and its notes turned into case events with their recipients.

// TribunalFacts are what internal/tribunal reads of the case.
func (c Case) TribunalFacts() tribunal.Facts {
	f := tribunal.Facts{
		CaseID: c.ID, ExternalCaseID: c.ExternalID, Environment: c.Environment,
		Evaluation:   c.Mode == ModeEvaluation,
		RecordClosed: c.Closed == StatusRecordConfirmed, Terminated: c.Closed == StatusTerminated,
		OpenedAt: c.OpenedAt, Rules: award.Rules{Version: c.Rules.Version, Hash: c.Rules.Hash},
		ClaimMinor: c.Claim.AmountMinor, ClaimCurrency: c.Claim.Currency,
		Windows: tribunal.WindowsByRules[c.Rules.Version],
	}
	if f.RecordClosed {
		f.RecordAt = c.ClosedAt
	}
	f.SettledAt = c.Settlement.AgreedAt
	for _, p := range c.Participants {
		f.Parties = append(f.Parties, tribunal.Party{ParticipantID: p.ID, Side: string(p.Side), PartnerID: p.PartnerID,
			PrincipalID: p.PrincipalID, AgentID: p.AgentID, Joined: p.Joined()})
	}
	f.Record = c.RecordItems()
	if e := c.Evaluation; e != nil {
		f.EvaluationDefinition = &award.Evaluation{ExternalEvaluationID: e.ExternalEvaluationID, EvaluationDigest: e.EvaluationDigest,
			Question: e.Question, Criteria: slices.Clone(e.Criteria), AllowedOutcomes: slices.Clone(e.AllowedOutcomes)}
		f.ReviewPolicy = e.ReviewPolicy
	}
	return f
}

// RecordItems are the record's items in the order the record summary
// lists them: the answer, then the submissions as filed, then the
// disclosed exhibits as disclosed (an exhibit's digest is its file's
// SHA-256).
func (c Case) RecordItems() []tribunal.Item {
	var out []tribunal.Item
	if a := c.Answer; a != nil {
		out = append(out, tribunal.Item{ID: "answer", Side: string(Respondent), Digest: a.Digest})
	}
	for _, s := range c.Submissions {
		out = append(out, tribunal.Item{ID: s.ID, Side: string(s.Side), Digest: s.Digest})
	}
	for _, e := range c.Evidence.Record() {
		out = append(out, tribunal.Item{ID: e.ID, Side: e.Side, Digest: e.SHA256})
	}
	return out
}

// WithTribunal returns the outcome of a decision act: c with the next
// decision state and its notes as case events at now.
func (c Case) WithTribunal(out tribunal.Outcome, now time.Time) Outcome {
	awarded := !c.Tribunal.Awarded() && out.State.Awarded()
	c.Tribunal = out.State
	var events []Event
	for _, n := range out.Notes {
		events = append(events, c.tribunalEvent(n, now))
	}
	if awarded && c.Termination != nil {
		// The award decides the dispute: a termination request still
		// pending lapses with it (nothing is left to end).
		c.Termination = nil
		events = append(events, emit(EventTerminationLapsed, c, "", now))
	}
	return Outcome{Case: c, Events: events, Quiet: out.Quiet && len(events) == 0}
}

func (c Case) tribunalEvent(n tribunal.Note, now time.Time) Event {
	ev := Event{Type: EventType(n.Type), OccurredAt: now, DeadlineAt: n.DeadlineAt, ActionRequired: n.ActionRequired}
	member := func(m *tribunal.Member) []Partner {
		if m == nil {
			return nil
		}
		return []Partner{{Tenant: c.Tenant, Environment: c.Environment, PartnerID: m.PartnerID}}
	}
	var out []Partner
	add := func(ps ...Partner) {
		for _, p := range ps {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	t := c.Tribunal
	switch n.Audience {
	case tribunal.ToSides:
		add(recipients(c, bothSides)...)
		add(member(t.Adjudicator)...)
		add(member(t.Reviewer)...)
	case tribunal.ToOtherSide:
		add(recipients(c, []Side{Side(n.Actor).Other()})...)
		add(member(t.Reviewer)...)
	case tribunal.ToAdjudicator:
		add(member(t.Adjudicator)...)
	case tribunal.ToReviewer:
		add(member(t.Reviewer)...)
	case tribunal.ToTribunal:
		add(member(t.Adjudicator)...)
		add(member(t.Reviewer)...)
	case tribunal.ToOrdered, tribunal.ToUnordered:
		var sides []Side
		for _, s := range n.Sides {
			sides = append(sides, Side(s))
		}
		add(recipients(c, sides)...)
	}
	ev.Recipients = out
	return ev
}
