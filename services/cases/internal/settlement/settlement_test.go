package settlement_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/services/cases/internal/settlement"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

var t0 = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

const due = "2026-12-28T00:00:00.000Z"

// facts are a proceeding for USD 420.00 whose two sides joined, before
// its record closed: no tribunal yet.
func facts() settlement.Facts {
	return settlement.Facts{
		CaseID: "case-1", Sides: []string{settlement.Claimant, settlement.Respondent},
		Decision: tribunal.Facts{
			CaseID: "case-1", ExternalCaseID: "ext-1", Environment: "sandbox",
			Rules: award.Rules{Version: "pcourt-rules-2026-11", Hash: strings.Repeat("1", 64)},
			Parties: []tribunal.Party{
				{ParticipantID: "p-c", Side: settlement.Claimant, PrincipalID: "org-a", Joined: true},
				{ParticipantID: "p-r", Side: settlement.Respondent, PrincipalID: "org-b", Joined: true},
				{ParticipantID: "p-r2", Side: settlement.Respondent, PrincipalID: "org-b2"},
			},
			ClaimMinor: 42000, ClaimCurrency: "USD",
		},
	}
}

// reviewed are the facts once a reviewer is assigned.
func reviewed() settlement.Facts {
	f := facts()
	f.ReviewerID = "cred-rev"
	return f
}

func terms() award.Terms {
	return award.Terms{
		Remedies: []award.Remedy{
			{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: 25000, Currency: "USD", DueBy: due},
			{Kind: award.RemedyPerformance, Obligor: "claimant", Description: "Return the unused keys.", DueBy: due},
		},
		Text: "The respondent refunds 250.00 USD; the claimant returns the unused keys.\nEach side bears its own costs.",
	}
}

func digestOf(t testing.TB, terms award.Terms) string {
	t.Helper()
	d, err := terms.Digest()
	require.NoError(t, err)
	return d
}

func decide(t testing.TB, s settlement.State, f settlement.Facts, a settlement.Act, at time.Time) settlement.Outcome {
	t.Helper()
	out, err := settlement.Decide(s, f, a, at)
	require.NoError(t, err)
	require.NoError(t, out.State.Validate())
	return out
}

func propose(side, participant string, terms award.Terms) settlement.Act {
	return settlement.Act{Kind: settlement.ActPropose, Side: side, ParticipantID: participant, Terms: terms}
}

func accept(side, participant, digest string) settlement.Act {
	return settlement.Act{Kind: settlement.ActAccept, Side: side, ParticipantID: participant, TermsDigest: digest}
}

func record(member, digest string) settlement.Act {
	return settlement.Act{Kind: settlement.ActRecord, MemberID: member, TermsDigest: digest}
}

func types(notes []settlement.Note) []settlement.EventType {
	var out []settlement.EventType
	for _, n := range notes {
		out = append(out, n.Type)
	}
	return out
}

// The respondent proposes, the claimant accepts the exact terms by their
// digest, the reviewer records them: the consent award orders exactly
// the terms, names both consents, and verifies as any award.
func TestBothSidesAgreeAndTheReviewerRecordsAConsentAward(t *testing.T) {
	f := facts()
	out := decide(t, settlement.State{}, f, propose(settlement.Respondent, "p-r", terms()), t0)
	require.Equal(t, "stl_1", out.ProposalID)
	require.Equal(t, []settlement.Note{{Type: settlement.EventProposed, Audience: settlement.ToOtherSide, ActionRequired: true, Actor: settlement.Respondent}}, out.Notes)
	require.Equal(t, settlement.StageProposed, out.State.Stage())
	p, _ := out.State.Pending()
	require.Equal(t, digestOf(t, terms()), p.TermsDigest, "the terms are named by the digest of their RFC 8785 bytes")

	out = decide(t, out.State, f, accept(settlement.Claimant, "p-c", p.TermsDigest), t0.Add(time.Hour))
	require.Equal(t, []settlement.EventType{settlement.EventAgreed}, types(out.Notes), "no tribunal yet: the sides are told")
	require.True(t, out.State.Agreed())
	require.Equal(t, t0.Add(time.Hour), out.State.AgreedAt)
	require.Equal(t, settlement.StageAgreed, out.State.Stage())
	agreed := out.State

	f = reviewed()
	rec := decide(t, agreed, f, record("cred-rev", p.TermsDigest), t0.Add(2*time.Hour))
	require.Empty(t, rec.Notes, "the award's own events are the case's to record")
	require.Equal(t, settlement.StageRecorded, rec.State.Stage())
	doc := *rec.Award
	b, err := doc.Bytes()
	require.NoError(t, err, "a valid award document")
	require.Equal(t, award.Hash(b), rec.Issued.AwardHash)
	require.Equal(t, rec.Issued.AwardHash, rec.State.AwardHash)
	require.Equal(t, "cred-rev", rec.State.RecordedBy)
	require.Equal(t, "award:case-1:1", doc.AwardID)
	require.Equal(t, award.OutcomeSettledByConsent, doc.Outcome)
	require.Equal(t, terms().Remedies, doc.Remedies)
	require.Equal(t, terms().Text, doc.Settlement.Text)
	require.Equal(t, p.TermsDigest, doc.Settlement.TermsDigest)
	require.Equal(t, []award.Consent{
		{Side: "respondent", ParticipantID: "p-r", Act: "proposed", At: "2026-11-28T09:00:00.000Z"},
		{Side: "claimant", ParticipantID: "p-c", Act: "accepted", At: "2026-11-28T10:00:00.000Z"},
	}, doc.Settlement.Consents)
	require.Equal(t, award.Tribunal{Runs: []award.Run{}, Reviewer: award.Member{MemberID: "cred-rev", Kind: "individual"}}, doc.Tribunal)
	require.Equal(t, []award.Party{{Side: "claimant", ParticipantID: "p-c", PrincipalID: "org-a"}, {Side: "respondent", ParticipantID: "p-r", PrincipalID: "org-b"}}, doc.Parties, "the joined parties")
	require.Equal(t, "2026-11-28T11:00:00.000Z", doc.IssuedAt)
	require.Equal(t, "proceeding", doc.CaseMode)
	require.Equal(t, []string{"claimant", "respondent"}, rec.Issued.Ordered, "each side is ordered to do something")
	require.Contains(t, doc.Reasons, "decides nothing of the merits")
	require.Empty(t, agreed.AwardHash, "the state given is not changed")
}

// Once a tribunal is assigned it is told of the agreement, the reviewer to
// record it.
func TestTheTribunalIsToldOfAnAgreementOnceAssigned(t *testing.T) {
	f := reviewed()
	out := decide(t, settlement.State{}, f, propose(settlement.Claimant, "p-c", terms()), t0)
	p, _ := out.State.Pending()
	out = decide(t, out.State, f, accept(settlement.Respondent, "p-r", p.TermsDigest), t0)
	require.Equal(t, []settlement.Note{
		{Type: settlement.EventAgreed, Audience: settlement.ToSides, Actor: settlement.Respondent},
		{Type: settlement.EventAgreed, Audience: settlement.ToTribunal, ActionRequired: true, Actor: settlement.Respondent},
	}, out.Notes)
}

// A new proposal, of either side, replaces the pending one; a side
// withdraws only its own; accepting needs the pending terms' digest.
func TestProposalsReplaceAndWithdraw(t *testing.T) {
	f := facts()
	first := decide(t, settlement.State{}, f, propose(settlement.Claimant, "p-c", terms()), t0)
	counter := terms()
	counter.Remedies[0].AmountMinor = 20000
	second := decide(t, first.State, f, propose(settlement.Respondent, "p-r", counter), t0.Add(time.Minute))
	require.Equal(t, "stl_2", second.ProposalID)
	require.Equal(t, settlement.ProposalReplaced, second.State.Proposals[0].Status)
	require.Equal(t, t0.Add(time.Minute), second.State.Proposals[0].EndedAt)
	pending, _ := second.State.Pending()
	require.Equal(t, "stl_2", pending.ID)

	_, err := settlement.Decide(second.State, f, accept(settlement.Claimant, "p-c", digestOf(t, terms())), t0)
	require.ErrorIs(t, err, &settlement.RefusalError{Code: settlement.CodeTermsMismatch}, "the replaced terms are not the pending ones")

	withdrawn := decide(t, second.State, f, settlement.Act{Kind: settlement.ActWithdraw, Side: settlement.Respondent, ParticipantID: "p-r"}, t0.Add(2*time.Minute))
	require.Equal(t, []settlement.Note{{Type: settlement.EventWithdrawn, Audience: settlement.ToOtherSide, Actor: settlement.Respondent}}, withdrawn.Notes)
	require.Equal(t, settlement.ProposalWithdrawn, withdrawn.State.Proposals[1].Status)
	require.Equal(t, settlement.StageNone, withdrawn.State.Stage())
	require.Len(t, withdrawn.State.Proposals, 2, "the negotiation stays on record")

	// Terms without remedies (a withdrawal of the claim, each side its own
	// costs) settle too.
	textOnly := award.Terms{Text: "The claimant withdraws its claim; each side bears its own costs."}
	third := decide(t, withdrawn.State, f, propose(settlement.Claimant, "p-c", textOnly), t0.Add(3*time.Minute))
	p, _ := third.State.Pending()
	require.Equal(t, []award.Remedy{}, p.Terms.Remedies)
	require.Equal(t, digestOf(t, textOnly), p.TermsDigest)
	agreed := decide(t, third.State, reviewed(), accept(settlement.Respondent, "p-r", p.TermsDigest), t0.Add(4*time.Minute))
	rec := decide(t, agreed.State, reviewed(), record("cred-rev", p.TermsDigest), t0.Add(5*time.Minute))
	require.Empty(t, rec.Issued.Ordered, "nobody is ordered to act")
	require.Empty(t, rec.Award.Remedies)
}

// Every refusal leaves the state as it was, with its code.
func TestRefusals(t *testing.T) {
	f, fr := facts(), reviewed()
	proposed := decide(t, settlement.State{}, f, propose(settlement.Respondent, "p-r", terms()), t0).State
	p, _ := proposed.Pending()
	agreed := decide(t, proposed, fr, accept(settlement.Claimant, "p-c", p.TermsDigest), t0).State
	recorded := decide(t, agreed, fr, record("cred-rev", p.TermsDigest), t0).State
	terminated, awarded, alone, assigned := f, fr, f, fr
	terminated.Terminated = true
	awarded.Awarded = true
	alone.Sides = []string{settlement.Claimant}
	assigned.AdjudicatorID = "cred-ai"
	evaluation := f
	evaluation.Decision.Evaluation = true
	tooMuch, claimantPays, pastDue, blank, control := terms(), terms(), terms(), terms(), terms()
	tooMuch.Remedies[0].AmountMinor = 42001
	claimantPays.Remedies[0].Payer, claimantPays.Remedies[0].Payee = "claimant", "respondent"
	pastDue.Remedies[0].DueBy = "2026-11-28T09:00:00.000Z"
	blank.Text = ""
	control.Text = "pay\x00now"
	other := strings.Repeat("ab", 32)

	for name, tc := range map[string]struct {
		s    settlement.State
		f    settlement.Facts
		a    settlement.Act
		code settlement.RefusalCode
	}{
		"unknown action":          {proposed, f, settlement.Act{Kind: "reject", Side: "claimant"}, settlement.CodeInvalidAct},
		"no side":                 {settlement.State{}, f, propose("", "p-c", terms()), settlement.CodeInvalidAct},
		"no text":                 {settlement.State{}, f, propose("claimant", "p-c", blank), settlement.CodeInvalidAct},
		"control character":       {settlement.State{}, f, propose("claimant", "p-c", control), settlement.CodeInvalidAct},
		"a proposer's digest":     {settlement.State{}, f, settlement.Act{Kind: settlement.ActPropose, Side: "claimant", Terms: terms(), TermsDigest: p.TermsDigest}, settlement.CodeInvalidAct},
		"accept without digest":   {proposed, f, accept("claimant", "p-c", ""), settlement.CodeInvalidAct},
		"accept carrying terms":   {proposed, f, settlement.Act{Kind: settlement.ActAccept, Side: "claimant", TermsDigest: p.TermsDigest, Terms: terms()}, settlement.CodeInvalidAct},
		"record without digest":   {agreed, fr, record("cred-rev", "ABC"), settlement.CodeInvalidAct},
		"record by a stranger":    {agreed, fr, record("cred-other", p.TermsDigest), settlement.CodeNotTribunal},
		"record unassigned":       {agreed, f, record("cred-rev", p.TermsDigest), settlement.CodeNotTribunal},
		"record by the AI":        {agreed, assigned, record("cred-ai", p.TermsDigest), settlement.CodeWrongRole},
		"after termination":       {proposed, terminated, accept("claimant", "p-c", p.TermsDigest), settlement.CodeCaseClosed},
		"after the award":         {settlement.State{}, awarded, propose("claimant", "p-c", terms()), settlement.CodeAwardIssued},
		"recorded twice":          {recorded, func() settlement.Facts { g := fr; g.Awarded = true; return g }(), record("cred-rev", p.TermsDigest), settlement.CodeAwardIssued},
		"the other side absent":   {settlement.State{}, alone, propose("claimant", "p-c", terms()), settlement.CodeSidesNotJoined},
		"proposing once agreed":   {agreed, f, propose("claimant", "p-c", terms()), settlement.CodeAgreed},
		"accepting once agreed":   {agreed, f, accept("respondent", "p-r", p.TermsDigest), settlement.CodeAgreed},
		"withdrawing once agreed": {agreed, f, settlement.Act{Kind: settlement.ActWithdraw, Side: "respondent"}, settlement.CodeAgreed},
		"above the claim":         {settlement.State{}, f, propose("claimant", "p-c", tooMuch), settlement.CodeRemedyExceeds},
		"the claimant pays":       {settlement.State{}, f, propose("claimant", "p-c", claimantPays), settlement.CodeRemedyExceeds},
		"an evaluation's payment": {settlement.State{}, evaluation, propose("claimant", "p-c", terms()), settlement.CodeRemedyExceeds},
		"due already":             {settlement.State{}, f, propose("claimant", "p-c", pastDue), settlement.CodeInvalidAct},
		"nothing to accept":       {settlement.State{}, f, accept("claimant", "p-c", p.TermsDigest), settlement.CodeNoProposal},
		"nothing to withdraw":     {settlement.State{}, f, settlement.Act{Kind: settlement.ActWithdraw, Side: "claimant"}, settlement.CodeNoProposal},
		"accepting its own":       {proposed, f, accept("respondent", "p-r", p.TermsDigest), settlement.CodeOwnProposal},
		"withdrawing the other's": {proposed, f, settlement.Act{Kind: settlement.ActWithdraw, Side: "claimant"}, settlement.CodeNotProposer},
		"accepting other terms":   {proposed, f, accept("claimant", "p-c", other), settlement.CodeTermsMismatch},
		"recording other terms":   {agreed, fr, record("cred-rev", other), settlement.CodeTermsMismatch},
		"recording before":        {proposed, fr, record("cred-rev", p.TermsDigest), settlement.CodeNotAgreed},
	} {
		t.Run(name, func(t *testing.T) {
			before := tc.s.Clone()
			out, err := settlement.Decide(tc.s, tc.f, tc.a, t0.Add(time.Hour))
			require.ErrorIs(t, err, &settlement.RefusalError{Code: tc.code}, "%v", err)
			require.Equal(t, before, out.State, "a refusal changes nothing")
			require.Equal(t, before, tc.s)
			require.Nil(t, out.Award)
			require.Contains(t, settlement.RefusalCodes, tc.code)
		})
	}
}

// The checks run in the documented order: the earlier refusal wins.
func TestTheRefusalsComeInOrder(t *testing.T) {
	f := facts()
	f.Terminated, f.Awarded = true, true
	f.Sides = f.Sides[:1]
	_, err := settlement.Decide(settlement.State{}, f, propose("", "", award.Terms{}), t0)
	require.ErrorIs(t, err, &settlement.RefusalError{Code: settlement.CodeInvalidAct})
	_, err = settlement.Decide(settlement.State{}, f, record("cred-x", strings.Repeat("0", 64)), t0)
	require.ErrorIs(t, err, &settlement.RefusalError{Code: settlement.CodeNotTribunal})
	_, err = settlement.Decide(settlement.State{}, f, propose("claimant", "p-c", terms()), t0)
	require.ErrorIs(t, err, &settlement.RefusalError{Code: settlement.CodeCaseClosed})
	f.Terminated = false
	_, err = settlement.Decide(settlement.State{}, f, propose("claimant", "p-c", terms()), t0)
	require.ErrorIs(t, err, &settlement.RefusalError{Code: settlement.CodeAwardIssued})
	f.Awarded = false
	_, err = settlement.Decide(settlement.State{}, f, propose("claimant", "p-c", terms()), t0)
	require.ErrorIs(t, err, &settlement.RefusalError{Code: settlement.CodeSidesNotJoined})

	var seen []settlement.RefusalCode
	for _, c := range settlement.RefusalCodes {
		require.NotContains(t, seen, c, "each code once")
		seen = append(seen, c)
	}
	tribunalCodes := map[settlement.RefusalCode]tribunal.RefusalCode{
		settlement.CodeNotTribunal: tribunal.CodeNotTribunal, settlement.CodeWrongRole: tribunal.CodeWrongRole,
		settlement.CodeCaseClosed: tribunal.CodeCaseClosed, settlement.CodeAwardIssued: tribunal.CodeAwardIssued,
		settlement.CodeRemedyExceeds: tribunal.CodeRemedyExceedsClaim,
	}
	require.Len(t, settlement.Shared, len(tribunalCodes))
	for _, c := range settlement.Shared {
		require.Equal(t, string(tribunalCodes[c]), string(c), "a shared code is the decision's")
	}
}

// An evaluation settles with text-only terms; its consent award names the
// evaluation as the case pinned it.
func TestAnEvaluationSettlesOnItsText(t *testing.T) {
	f := reviewed()
	f.Decision.Evaluation = true
	f.Decision.EvaluationDefinition = &award.Evaluation{ExternalEvaluationID: "ev-1", EvaluationDigest: strings.Repeat("e", 64), Question: "q?",
		Criteria: []string{"c"}, AllowedOutcomes: []string{"yes", "no"}}
	text := award.Terms{Text: "The sides withdraw the question."}
	out := decide(t, settlement.State{}, f, propose(settlement.Claimant, "p-c", text), t0)
	p, _ := out.State.Pending()
	out = decide(t, out.State, f, accept(settlement.Respondent, "p-r", p.TermsDigest), t0)
	out = decide(t, out.State, f, record("cred-rev", p.TermsDigest), t0)
	require.Equal(t, "evaluation", out.Award.CaseMode)
	require.Equal(t, "ev-1", out.Award.Evaluation.ExternalEvaluationID)
	_, err := out.Award.Bytes()
	require.NoError(t, err)
}

// A stored state keeps its invariants; Validate refuses one that does not.
func TestValidateRefusesACorruptState(t *testing.T) {
	f := reviewed()
	proposed := decide(t, settlement.State{}, f, propose(settlement.Respondent, "p-r", terms()), t0).State
	for name, edit := range map[string]func(s *settlement.State){
		"renamed proposal":    func(s *settlement.State) { s.Proposals[0].ID = "stl_9" },
		"other terms":         func(s *settlement.State) { s.Proposals[0].Terms.Text += "!" },
		"unknown status":      func(s *settlement.State) { s.Proposals[0].Status = "lost" },
		"agreed, none taken":  func(s *settlement.State) { s.AgreedAt = t0 },
		"accepted, no date":   func(s *settlement.State) { s.Proposals[0].Status = settlement.ProposalAccepted },
		"recorded, no accord": func(s *settlement.State) { s.RecordedAt, s.RecordedBy, s.AwardHash = t0, "r", "h" },
		"two pending": func(s *settlement.State) {
			p := s.Proposals[0]
			p.ID = "stl_2"
			s.Proposals = append(s.Proposals, p)
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := proposed.Clone()
			edit(&s)
			require.ErrorIs(t, s.Validate(), settlement.ErrCorrupt)
		})
	}
	require.NoError(t, settlement.State{}.Validate())
	require.True(t, settlement.State{}.Empty())
	require.False(t, proposed.Empty())
	require.True(t, slices.Equal(settlement.Stages, []settlement.Stage{"none", "proposed", "agreed", "recorded"}))
}
