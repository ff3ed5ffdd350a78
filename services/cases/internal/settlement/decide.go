package settlement

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// Facts are what the settlement reads of the rest of the case. The case
// builds them (procedure.Case.SettlementFacts).
type Facts struct {
	CaseID string
	// Terminated: the case ended by termination.
	Terminated bool
	// Awarded: the case has an award (decided, or the consent award).
	Awarded bool
	// Sides are the sides with a joined participant.
	Sides []string
	// ReviewerID and AdjudicatorID are the credential ids of the assigned
	// members ("" while none is).
	ReviewerID    string
	AdjudicatorID string
	// Decision are the decision's facts: what the terms' remedies are
	// checked against (the claim, an evaluation) and what the consent
	// award names (the case, its rules, its parties, an evaluation).
	Decision tribunal.Facts
}

// ActKind is a kind of settlement act.
type ActKind string

// The acts, each taken with POST /api/cases/{id}/settlement-binding and
// its action (docs/settlement.md).
const (
	ActPropose  ActKind = "propose"  // a side: terms, replacing a pending proposal
	ActAccept   ActKind = "accept"   // the other side: the pending terms, by their digest
	ActWithdraw ActKind = "withdraw" // the proposing side: its pending proposal
	ActRecord   ActKind = "record"   // the reviewer: the agreed terms, by their digest
)

// Acts lists every act, for docs and tests.
var Acts = []ActKind{ActPropose, ActAccept, ActWithdraw, ActRecord}

// MaxTextRunes bounds the terms' text, as an award's reasons are bound.
const MaxTextRunes = tribunal.MaxTextRunes

// Act is one settlement act.
type Act struct {
	Kind ActKind
	// Side and ParticipantID say who acts for a side's act; MemberID is
	// the reviewer's credential id for ActRecord.
	Side          string
	ParticipantID string
	MemberID      string
	// Terms are proposed; TermsDigest names the terms accepted or
	// recorded.
	Terms       award.Terms
	TermsDigest string
}

// Outcome is an accepted act: the next state and the events to record.
type Outcome struct {
	State State
	Notes []Note
	// ProposalID is the proposal the act made, accepted or withdrew.
	ProposalID string
	// Award is the consent award the record issued, and Issued its
	// identity: the case serves it as its award (tribunal.RecordConsent)
	// and makes it final (afteraward.FinalByConsent); the flow makes its
	// artifacts.
	Award  *award.Document
	Issued *tribunal.Issued
}

// ProposalID is the id of a case's n-th proposal.
func ProposalID(n int) string { return "stl_" + strconv.Itoa(n) }

// Decide applies an act at now. A refusal leaves the state unchanged; the
// checks run in this order (docs/settlement.md):
//
//  1. invalid_settlement_act: the act's shape (a side, a text, a digest);
//  2. not_tribunal_member: a record by a credential that is not a member
//     of the case's tribunal;
//  3. wrong_tribunal_role: a record by the adjudicator;
//  4. case_closed: the case was terminated;
//  5. award_already_issued: the case has an award (a settlement after the
//     award is its execution's business, not a new award);
//  6. the act's own checks, in the order RefusalCodes lists them.
func Decide(s State, f Facts, a Act, now time.Time) (Outcome, error) {
	unchanged := Outcome{State: s}
	now = now.UTC().Truncate(time.Millisecond)
	if err := a.validate(); err != nil {
		return unchanged, err
	}
	if a.Kind == ActRecord {
		switch {
		case a.MemberID == f.AdjudicatorID && f.AdjudicatorID != "":
			return unchanged, refuse(CodeWrongRole, "the adjudicator decides nothing of a settlement; the reviewer records it")
		case a.MemberID != f.ReviewerID || f.ReviewerID == "":
			return unchanged, refuse(CodeNotTribunal, "credential %s is not the reviewer of case %s; the reviewer records its settlement", a.MemberID, f.CaseID)
		}
	}
	if f.Terminated {
		return unchanged, refuse(CodeCaseClosed, "case %s was terminated", f.CaseID)
	}
	if f.Awarded {
		return unchanged, refuse(CodeAwardIssued, "case %s has its award; what the sides agree after it is carried out as its execution (docs/settlement.md)", f.CaseID)
	}
	next := s.Clone()
	var out Outcome
	var err error
	switch a.Kind {
	case ActPropose:
		out, err = next.propose(f, a, now)
	case ActAccept:
		out, err = next.accept(f, a, now)
	case ActWithdraw:
		out, err = next.withdraw(f, a, now)
	case ActRecord:
		out, err = next.record(f, a, now)
	}
	if err != nil {
		return unchanged, err
	}
	out.State = next
	return out, nil
}

func (s *State) propose(f Facts, a Act, now time.Time) (Outcome, error) {
	if len(f.Sides) < 2 {
		return Outcome{}, refuse(CodeSidesNotJoined, "a settlement binds both sides, and only one has joined case %s", f.CaseID)
	}
	if s.Agreed() {
		return Outcome{}, refuse(CodeAgreed, "the sides of case %s agreed their settlement at %s; the reviewer records it", f.CaseID, ts(s.AgreedAt))
	}
	if err := tribunal.CheckRemedies(a.Terms.Remedies, f.Decision, now); err != nil {
		var tr *tribunal.RefusalError
		if errors.As(err, &tr) && tr.Code == tribunal.CodeRemedyExceedsClaim {
			return Outcome{}, refuse(CodeRemedyExceeds, "terms: %s", tr.Detail)
		}
		if errors.As(err, &tr) {
			return Outcome{}, refuse(CodeInvalidAct, "terms: %s", tr.Detail)
		}
		return Outcome{}, err
	}
	terms := award.Terms{Remedies: slices.Clone(a.Terms.Remedies), Text: a.Terms.Text}
	if terms.Remedies == nil {
		terms.Remedies = []award.Remedy{}
	}
	digest, err := terms.Digest()
	if err != nil {
		return Outcome{}, refuse(CodeInvalidAct, "the terms cannot be written canonically: %v", err)
	}
	if p, ok := s.Pending(); ok {
		s.end(p.ID, ProposalReplaced, "", now)
	}
	id := ProposalID(len(s.Proposals) + 1)
	s.Proposals = append(s.Proposals, Proposal{ID: id, Side: a.Side, ParticipantID: a.ParticipantID, Terms: terms, TermsDigest: digest,
		ProposedAt: now, Status: ProposalPending})
	return Outcome{ProposalID: id, Notes: []Note{note(EventProposed, ToOtherSide, a.Side)}}, nil
}

func (s *State) accept(f Facts, a Act, now time.Time) (Outcome, error) {
	if s.Agreed() {
		return Outcome{}, refuse(CodeAgreed, "the sides of case %s agreed their settlement at %s", f.CaseID, ts(s.AgreedAt))
	}
	p, ok := s.Pending()
	switch {
	case !ok:
		return Outcome{}, refuse(CodeNoProposal, "case %s has no pending settlement proposal to accept", f.CaseID)
	case p.Side == a.Side:
		return Outcome{}, refuse(CodeOwnProposal, "the %s side proposed %s; the other side accepts it", a.Side, p.ID)
	case a.TermsDigest != p.TermsDigest:
		return Outcome{}, refuse(CodeTermsMismatch, "termsDigest %s is not the digest of the pending terms (%s, %s); read them again and accept exactly those", a.TermsDigest, p.ID, p.TermsDigest)
	}
	s.end(p.ID, ProposalAccepted, a.ParticipantID, now)
	s.AgreedAt = now
	out := Outcome{ProposalID: p.ID, Notes: []Note{note(EventAgreed, ToSides, a.Side)}}
	if f.ReviewerID != "" || f.AdjudicatorID != "" {
		out.Notes = append(out.Notes, note(EventAgreed, ToTribunal, a.Side))
	}
	return out, nil
}

func (s *State) withdraw(f Facts, a Act, now time.Time) (Outcome, error) {
	if s.Agreed() {
		return Outcome{}, refuse(CodeAgreed, "the sides of case %s agreed their settlement at %s; it binds them", f.CaseID, ts(s.AgreedAt))
	}
	p, ok := s.Pending()
	switch {
	case !ok:
		return Outcome{}, refuse(CodeNoProposal, "case %s has no pending settlement proposal to withdraw", f.CaseID)
	case p.Side != a.Side:
		return Outcome{}, refuse(CodeNotProposer, "the %s side proposed %s; only it withdraws it (the %s side proposes other terms instead)", p.Side, p.ID, a.Side)
	}
	s.end(p.ID, ProposalWithdrawn, "", now)
	return Outcome{ProposalID: p.ID, Notes: []Note{note(EventWithdrawn, ToOtherSide, a.Side)}}, nil
}

// record issues the consent award of the agreed terms.
func (s *State) record(f Facts, a Act, now time.Time) (Outcome, error) {
	p, ok := s.Accepted()
	switch {
	case !s.Agreed() || !ok:
		return Outcome{}, refuse(CodeNotAgreed, "the sides of case %s have not agreed a settlement; the reviewer records one once they have", f.CaseID)
	case a.TermsDigest != p.TermsDigest:
		return Outcome{}, refuse(CodeTermsMismatch, "termsDigest %s is not the digest of the agreed terms (%s)", a.TermsDigest, p.TermsDigest)
	}
	doc := ConsentAward(*s, f, a.MemberID, now)
	b, err := doc.Bytes()
	if err != nil {
		return Outcome{}, fmt.Errorf("settlement: the consent award of case %s: %w", f.CaseID, err)
	}
	issued := &tribunal.Issued{AwardID: doc.AwardID, AwardHash: award.Hash(b), IssuedAt: now, Outcome: doc.Outcome, Ordered: tribunal.Ordered(doc.Remedies)}
	s.RecordedAt, s.RecordedBy, s.AwardHash = now, a.MemberID, issued.AwardHash
	return Outcome{ProposalID: p.ID, Award: &doc, Issued: issued}, nil
}

// end closes proposal id with status at now.
func (s *State) end(id string, status ProposalStatus, by string, now time.Time) {
	for i := range s.Proposals {
		if s.Proposals[i].ID == id {
			s.Proposals[i].Status, s.Proposals[i].AcceptedBy, s.Proposals[i].EndedAt = status, by, now
		}
	}
}

// ConsentAward is the award that records the agreed terms of s, by the
// reviewer memberID, issued at now: the case's first award, its outcome
// settled_by_consent, its remedies the terms' remedies, its settlement the
// terms' digest and text with both sides' consents, and a tribunal of the
// reviewer alone.
func ConsentAward(s State, f Facts, memberID string, now time.Time) award.Document {
	p, _ := s.Accepted()
	d := f.Decision
	proposer, acceptor := p.Side, otherSide(p.Side)
	doc := award.Document{
		SchemaVersion: award.SchemaAward, AwardID: "award:" + f.CaseID + ":1", CaseID: f.CaseID, ExternalCaseID: d.ExternalCaseID,
		Environment: d.Environment, CaseMode: "proceeding", Rules: d.Rules, Parties: []award.Party{},
		Outcome:  award.OutcomeSettledByConsent,
		Remedies: slices.Clone(p.Terms.Remedies),
		Reasons: fmt.Sprintf("The sides settled their dispute. The %s side proposed the terms of the settlement on %s and the %s side accepted exactly those terms, by their digest, on %s. "+
			"At their request the tribunal records the settlement as an award on agreed terms; it decides nothing of the merits.",
			proposer, ts(p.ProposedAt), acceptor, ts(p.EndedAt)),
		Citations: []award.Citation{},
		Settlement: &award.Settlement{TermsDigest: p.TermsDigest, Text: p.Terms.Text, Consents: []award.Consent{
			{Side: proposer, ParticipantID: p.ParticipantID, Act: award.ConsentProposed, At: ts(p.ProposedAt)},
			{Side: acceptor, ParticipantID: p.AcceptedBy, Act: award.ConsentAccepted, At: ts(p.EndedAt)},
		}},
		Tribunal: award.Tribunal{Runs: []award.Run{}, Reviewer: award.Member{MemberID: memberID, Kind: "individual"}},
		IssuedAt: ts(now),
	}
	if doc.Remedies == nil {
		doc.Remedies = []award.Remedy{}
	}
	if d.Evaluation {
		doc.CaseMode = "evaluation"
		if e := d.EvaluationDefinition; e != nil {
			ev := *e
			doc.Evaluation = &ev
		}
	}
	for _, party := range d.Parties {
		if party.Joined {
			doc.Parties = append(doc.Parties, award.Party{Side: party.Side, ParticipantID: party.ParticipantID, PrincipalID: party.PrincipalID})
		}
	}
	return doc
}

func otherSide(side string) string {
	if side == Claimant {
		return Respondent
	}
	return Claimant
}

// validate checks the act's shape (step 1).
func (a Act) validate() error {
	bad := func(format string, args ...any) error {
		return refuse(CodeInvalidAct, "%s: %s", a.Kind, fmt.Sprintf(format, args...))
	}
	side := a.Side == Claimant || a.Side == Respondent
	switch a.Kind {
	case ActPropose:
		if !side {
			return bad("a side proposes")
		}
		if err := checkText(a.Terms.Text); err != nil {
			return bad("terms.text %v", err)
		}
		if a.TermsDigest != "" {
			return bad("a proposal's digest is the service's to take, not the proposer's")
		}
	case ActAccept:
		if !side || !isHex64(a.TermsDigest) {
			return bad("a side accepts the pending terms by their termsDigest (64 lowercase hex)")
		}
	case ActWithdraw:
		if !side {
			return bad("a side withdraws its proposal")
		}
	case ActRecord:
		if a.MemberID == "" || !isHex64(a.TermsDigest) {
			return bad("the reviewer records the agreed terms by their termsDigest (64 lowercase hex)")
		}
	default:
		return bad("the action must be one of %v", Acts)
	}
	if a.Kind != ActPropose && (a.Terms.Text != "" || a.Terms.Remedies != nil) {
		return bad("only a proposal carries terms")
	}
	return nil
}

// checkText accepts 1 to MaxTextRunes characters of UTF-8 without control
// characters other than tab and line breaks.
func checkText(s string) error {
	n := utf8.RuneCountInString(s)
	switch {
	case n == 0:
		return errors.New("is required: the terms in the sides' words")
	case n > MaxTextRunes || !utf8.ValidString(s):
		return fmt.Errorf("must be 1 to %d characters of UTF-8", MaxTextRunes)
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' {
			return fmt.Errorf("holds control character U+%04X", r)
		}
	}
	return nil
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

func ts(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
