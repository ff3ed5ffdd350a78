package afteraward

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// ActKind is a kind of act after the award.
type ActKind string

// The acts. The route of each is in docs/after-award.md.
const (
	ActWaive         ActKind = "waive_recourse"  // a side
	ActFileRequest   ActKind = "file_request"    // a side
	ActDecideRequest ActKind = "decide_request"  // the reviewer
	ActFileAppeal    ActKind = "file_appeal"     // a side
	ActHoldFee       ActKind = "hold_appeal_fee" // the service, before settling a fee payment
	ActPayFee        ActKind = "pay_appeal_fee"  // the service, once the payment settled
	ActAnswerAppeal  ActKind = "answer_appeal"   // the other side
	ActCloseBriefing ActKind = "close_briefing"  // the appellate reviewer
	ActDecideAppeal  ActKind = "decide_appeal"   // the appellate reviewer
	ActExecute       ActKind = "execute"         // a side
	ActRecordAttempt ActKind = "record_attempt"  // the service, after the rail answered
)

// Acts lists every act, for docs and tests.
var Acts = []ActKind{ActWaive, ActFileRequest, ActDecideRequest, ActFileAppeal, ActHoldFee, ActPayFee, ActAnswerAppeal,
	ActCloseBriefing, ActDecideAppeal, ActExecute, ActRecordAttempt}

// The limits of what an act carries.
const (
	MaxTextRunes      = tribunal.MaxTextRunes  // reasons, a corrected text
	MaxShortRunes     = tribunal.MaxShortRunes // a request, a report's note
	MaxReferenceRunes = 200
	MaxRemedies       = tribunal.MaxRemedies
)

// Act is one act after the award.
type Act struct {
	Kind ActKind
	// MemberID is the acting tribunal member's credential id: the
	// reviewer's for ActDecideRequest, the appellate reviewer's for
	// ActCloseBriefing and ActDecideAppeal.
	MemberID string
	// Side and ParticipantID say who acts for a side's act.
	Side          string
	ParticipantID string

	// RequestKind and Text are a filed request; RequestID names the
	// request decided.
	RequestKind RequestKind
	Text        string
	RequestID   string
	// Grant, Reasons and the amendment decide a request. A granted
	// correction replaces the reasons (CorrectedReasons) or the remedies
	// (Remedies), or both; a granted additional award adds Remedies; a
	// granted interpretation adds Interpretation to the reasons.
	Grant            bool
	Reasons          string
	CorrectedReasons string
	Remedies         []award.Remedy
	Interpretation   string

	// An execution: the mode, its action, the award hash and remedy it
	// executes, the original payment (x402r), the report (party), and
	// the digest of the command's Idempotency-Key.
	Mode        Mode
	Action      string
	AwardHash   string
	RemedyIndex int
	Payment     *Payment
	Reference   string
	Note        string
	KeyDigest   string
	// An appeal: AppealID names it (every act but filing); Grounds are
	// filed, Text answers it; Decision (affirm, modify, set_aside),
	// Outcome (set_aside) and Remedies (modify, set_aside) decide it with
	// Reasons. PaymentID holds (Replaces: the payment that held it) or
	// pays its fee with FeePayment.
	AppealID   string
	Grounds    []Ground
	Decision   string
	Outcome    string
	PaymentID  string
	Replaces   string
	FeePayment *FeePayment

	// ExecutionID names the execution an attempt is for.
	ExecutionID string
	// Completion is a successful attempt's evidence; Detail a failed
	// one's reason.
	Completion *Completion
	Detail     string
}

// Outcome is an accepted act: the next state and the events to record.
type Outcome struct {
	State State
	Notes []Note
	// Award is a new award this act issued (a granted request), and
	// Issued its identity, which becomes the served award; the flow makes
	// its artifacts.
	Award  *award.Document
	Issued *tribunal.Issued
	// ExecutionID is the execution an ActExecute created or resumes, and
	// Resume says it existed (a failed one, commanded again).
	ExecutionID string
	Resume      bool
}

// ExecutionID is the id of a case's n-th execution. It names the case, so
// GET /api/executions/{id} finds it without an index.
func ExecutionID(caseID string, n int) string { return "ex:" + caseID + ":" + strconv.Itoa(n) }

// CaseOfExecution returns the case an execution id names.
func CaseOfExecution(id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, "ex:")
	i := strings.LastIndexByte(rest, ':')
	if !ok || i <= 0 {
		return "", false
	}
	if _, err := strconv.Atoi(rest[i+1:]); err != nil {
		return "", false
	}
	return rest[:i], true
}

// Decide applies an act at now. A refusal leaves the state unchanged;
// the checks run in this order (docs/after-award.md):
//
//  1. invalid_after_award_act: the act's shape;
//  2. not_award_reviewer: a request decided by anyone but the award's
//     reviewer;
//  3. case_closed: the case was terminated;
//  4. award_not_issued: there is no award yet;
//  5. the act's own checks, in the order RefusalCodes lists them.
func Decide(s State, f Facts, a Act, now time.Time) (Outcome, error) {
	unchanged := Outcome{State: s}
	now = now.UTC().Truncate(time.Millisecond)
	if err := a.validate(); err != nil {
		return unchanged, err
	}
	if a.Kind == ActDecideRequest && (f.ReviewerID == "" || a.MemberID != f.ReviewerID) {
		return unchanged, refuse(CodeNotReviewer, "only the reviewer who signed the award of case %s decides its post-award requests", f.CaseID)
	}
	if f.Terminated {
		return unchanged, refuse(CodeCaseClosed, "case %s was terminated", f.CaseID)
	}
	if f.Award == nil {
		return unchanged, refuse(CodeNoAward, "case %s has no award yet", f.CaseID)
	}
	next := s.Clone()
	var out Outcome
	var err error
	switch a.Kind {
	case ActWaive:
		out, err = next.waive(f, a, now)
	case ActFileRequest:
		out, err = next.fileRequest(f, a, now)
	case ActDecideRequest:
		out, err = next.decideRequest(f, a, now)
	case ActFileAppeal:
		out, err = next.fileAppeal(f, a, now)
	case ActHoldFee:
		out, err = next.holdAppealFee(f, a, now)
	case ActPayFee:
		out, err = next.payAppealFee(f, a, now)
	case ActAnswerAppeal:
		out, err = next.answerAppeal(f, a, now)
	case ActCloseBriefing:
		out, err = next.closeBriefing(f, a, now)
	case ActDecideAppeal:
		out, err = next.decideAppeal(f, a, now)
	case ActExecute:
		out, err = next.execute(f, a, now)
	case ActRecordAttempt:
		out, err = next.recordAttempt(a, now)
	}
	if err != nil {
		return unchanged, err
	}
	out.State = next
	return out, nil
}

func (s *State) waive(f Facts, a Act, now time.Time) (Outcome, error) {
	switch {
	case s.Final():
		return Outcome{}, refuse(CodeAwardFinal, "the award of case %s is final", f.CaseID)
	case s.waived(a.Side):
		return Outcome{}, refuse(CodeRecourseWaived, "the %s side already waived its post-award recourse", a.Side)
	}
	s.Waivers = append(s.Waivers, Waiver{Side: a.Side, ParticipantID: a.ParticipantID, WaivedAt: now})
	out := Outcome{Notes: []Note{note(EventRecourseWaived, a.Side)}}
	out.Notes = append(out.Notes, s.finalIfWaived(f, now)...)
	return out, nil
}

// finalIfWaived makes the award final when every joined side waived its
// recourse and no request is pending.
func (s *State) finalIfWaived(f Facts, now time.Time) []Note {
	if s.Final() {
		return nil
	}
	if _, pending := s.Pending(); pending || s.openAppeal() {
		return nil
	}
	for _, side := range f.Sides {
		if !s.waived(side) {
			return nil
		}
	}
	s.FinalAt, s.FinalBy = now, "waiver"
	return []Note{note(EventAwardFinal, "")}
}

// RequestDeadline is when the served award's request window ends.
func RequestDeadline(f Facts) time.Time {
	if f.Award == nil {
		return time.Time{}
	}
	return f.Award.IssuedAt.Add(f.Windows.Requests)
}

func (s *State) fileRequest(f Facts, a Act, now time.Time) (Outcome, error) {
	switch {
	case s.Final():
		return Outcome{}, refuse(CodeAwardFinal, "the award of case %s is final", f.CaseID)
	case s.waived(a.Side):
		return Outcome{}, refuse(CodeRecourseWaived, "the %s side waived its post-award recourse", a.Side)
	case !now.Before(RequestDeadline(f)):
		return Outcome{}, refuse(CodeWindowClosed, "the window for post-award requests on the award of case %s ended at %s", f.CaseID, ts(RequestDeadline(f)))
	case slices.ContainsFunc(s.Requests, func(r Request) bool { return r.Side == a.Side && r.Status == RequestPending }):
		return Outcome{}, refuse(CodeRequestPending, "the %s side has a post-award request pending; the reviewer decides it first", a.Side)
	case s.openAppeal():
		return Outcome{}, refuse(CodeAppealPending, "case %s has an appeal pending; the appellate award ends the recourse", f.CaseID)
	}
	id := "par_" + strconv.Itoa(len(s.Requests)+1)
	s.Requests = append(s.Requests, Request{ID: id, Kind: a.RequestKind, Side: a.Side, ParticipantID: a.ParticipantID,
		Text: a.Text, AwardHash: f.Award.AwardHash, FiledAt: now, Status: RequestPending})
	return Outcome{Notes: []Note{note(EventRequestFiled, a.Side)}}, nil
}

func (s *State) decideRequest(f Facts, a Act, now time.Time) (Outcome, error) {
	i := slices.IndexFunc(s.Requests, func(r Request) bool { return r.ID == a.RequestID })
	if i < 0 {
		return Outcome{}, refuse(CodeRequestNotFound, "case %s has no post-award request %s", f.CaseID, a.RequestID)
	}
	r := &s.Requests[i]
	if r.Status != RequestPending {
		return Outcome{}, refuse(CodeRequestDecided, "post-award request %s was %s", r.ID, r.Status)
	}
	if !a.Grant {
		r.Status, r.Reasons, r.DecidedAt = RequestDenied, a.Reasons, now
		out := Outcome{Notes: []Note{note(EventRequestDecided, "")}}
		out.Notes = append(out.Notes, s.finalIfWaived(f, now)...)
		return out, nil
	}
	if f.Served == nil {
		return Outcome{}, errors.New("afteraward: deciding a request needs the served award's document")
	}
	doc, err := amend(*f.Served, *r, a, f, now)
	if err != nil {
		return Outcome{}, err
	}
	issued, err := s.serve(&doc, f, now)
	if err != nil {
		return Outcome{}, err
	}
	r.Status, r.Reasons, r.DecidedAt, r.IssuedAwardHash = RequestGranted, a.Reasons, now, issued.AwardHash
	// A new award opens its own request window; the executions were of
	// the award it amends and none may run on it any more (each names
	// its award hash), so they stay as the record of what was done.
	out := Outcome{Award: &doc, Issued: issued, Notes: []Note{note(EventRequestDecided, ""), note(EventAwardAmended, "")}}
	return out, nil
}

// serve issues doc, the served award as amended (a granted request) or
// decided on appeal, in place of the served one: its id is the case's
// next, it names the award it replaces (corrects), and the replaced one
// moves to Superseded.
func (s *State) serve(doc *award.Document, f Facts, now time.Time) (*tribunal.Issued, error) {
	doc.AwardID = "award:" + f.CaseID + ":" + strconv.Itoa(len(s.Superseded)+2)
	doc.Corrects = f.Award.AwardHash
	doc.IssuedAt = ts(now)
	b, err := doc.Bytes()
	if err != nil {
		return nil, refuse(CodeInvalidAct, "the new award is not a valid award: %v", err)
	}
	s.Superseded = append(s.Superseded, *f.Award)
	return &tribunal.Issued{AwardID: doc.AwardID, AwardHash: award.Hash(b), IssuedAt: now, Outcome: doc.Outcome, Ordered: tribunal.Ordered(doc.Remedies)}, nil
}

// amend applies a granted request to the served award's document; the
// amended dispositive part passes the award's own checks.
func amend(doc award.Document, r Request, a Act, f Facts, now time.Time) (award.Document, error) {
	doc.Remedies = slices.Clone(doc.Remedies)
	doc.Citations = slices.Clone(doc.Citations)
	doc.Parties = slices.Clone(doc.Parties)
	doc.Tribunal.Runs = slices.Clone(doc.Tribunal.Runs)
	switch r.Kind {
	case Correction:
		if a.CorrectedReasons == "" && a.Remedies == nil {
			return doc, refuse(CodeInvalidAct, "a granted correction corrects the reasons (correctedReasons) or the remedies (remedies)")
		}
		if a.CorrectedReasons != "" {
			doc.Reasons = a.CorrectedReasons
		}
		if a.Remedies != nil {
			doc.Remedies = slices.Clone(a.Remedies)
		}
	case Interpretation:
		if a.Interpretation == "" {
			return doc, refuse(CodeInvalidAct, "a granted interpretation gives the interpretation")
		}
		doc.Reasons += "\n\nInterpretation (post-award request " + r.ID + "): " + a.Interpretation
	case AdditionalAward:
		if len(a.Remedies) == 0 {
			return doc, refuse(CodeInvalidAct, "a granted additional award orders at least one remedy")
		}
		doc.Remedies = append(doc.Remedies, a.Remedies...)
	}
	return doc, checkDispositive(doc, f, now)
}

// checkDispositive checks an amended or appellate award's dispositive
// part as the award's was checked (remedy_exceeds_claim and the rest).
func checkDispositive(doc award.Document, f Facts, now time.Time) error {
	if len(doc.Remedies) > MaxRemedies {
		return refuse(CodeInvalidAct, "an award orders at most %d remedies", MaxRemedies)
	}
	p := award.Proposal{Outcome: doc.Outcome, Remedies: doc.Remedies, Reasons: doc.Reasons, Citations: doc.Citations}
	if err := tribunal.CheckAmended(p, f.Decision, now); err != nil {
		var tr *tribunal.RefusalError
		if errors.As(err, &tr) && tr.Code != tribunal.CodeInvalidAct {
			return refuse(CodeRemedyExceeds, "%s", tr.Detail)
		}
		return refuse(CodeInvalidAct, "%v", err)
	}
	return nil
}

func (s *State) execute(f Facts, a Act, now time.Time) (Outcome, error) {
	if !slices.Contains(f.Modes, a.Mode) {
		return Outcome{}, refuse(CodeModeUnavailable, "execution mode %s is not available on this deployment (docs/after-award.md, \"Executions\")", a.Mode)
	}
	if !s.Final() {
		return Outcome{}, refuse(CodeAwardNotFinal, "the award of case %s is not final; an award is executed once final", f.CaseID)
	}
	if a.AwardHash != f.Award.AwardHash {
		return Outcome{}, refuse(CodeAwardHashMismatch, "awardHash %s is not the served award's (%s)", a.AwardHash, f.Award.AwardHash)
	}
	if f.Served == nil || a.RemedyIndex >= len(f.Served.Remedies) {
		return Outcome{}, refuse(CodeNotExecutable, "the award of case %s has no remedies[%d]", f.CaseID, a.RemedyIndex)
	}
	rem := f.Served.Remedies[a.RemedyIndex]
	if a.Mode != ModePartyReported && (rem.Kind != award.RemedyPayment || rem.Currency != "USD") {
		return Outcome{}, refuse(CodeNotExecutable, "remedies[%d] is not a payment in USD: %s moves USD payments only", a.RemedyIndex, a.Mode)
	}
	if a.Mode == ModePartyReported && a.Side != obligor(rem) {
		return Outcome{}, refuse(CodeNotObligor, "remedies[%d] orders the %s side; only it reports having carried it out", a.RemedyIndex, obligor(rem))
	}
	// A refund goes to the payer of the original payment, which the
	// command names and no facilitator can look up: only the side the
	// remedy pays may name where its own money goes.
	if a.Mode == ModeX402rRefund && a.Side != rem.Payee {
		return Outcome{}, refuse(CodeNotPayee, "remedies[%d] pays the %s side; only it commands the refund to its own payment's payer", a.RemedyIndex, rem.Payee)
	}
	for _, e := range s.Executions {
		if e.AwardHash != a.AwardHash || e.RemedyIndex != a.RemedyIndex {
			continue
		}
		switch {
		case e.Status == ExecutionCompleted:
			return Outcome{}, refuse(CodeAlreadyExecuted, "remedies[%d] of the award was executed by %s", a.RemedyIndex, e.ID)
		case e.KeyDigest == a.KeyDigest && e.Side == a.Side && e.Mode == a.Mode:
			return Outcome{ExecutionID: e.ID, Resume: true}, nil
		default:
			return Outcome{}, refuse(CodeExecutionExists, "remedies[%d] of the award has execution %s (%s); retry it with its own Idempotency-Key", a.RemedyIndex, e.ID, e.Status)
		}
	}
	e := Execution{ID: ExecutionID(f.CaseID, len(s.Executions)+1), Mode: a.Mode, Action: a.Action, AwardHash: a.AwardHash,
		RemedyIndex: a.RemedyIndex, Side: a.Side, ParticipantID: a.ParticipantID, KeyDigest: a.KeyDigest,
		AmountMinor: rem.AmountMinor, Currency: rem.Currency, Status: ExecutionPending, CreatedAt: now}
	if a.Payment != nil {
		p := *a.Payment
		e.Payment = &p
	}
	out := Outcome{ExecutionID: e.ID, Notes: []Note{note(EventExecutionRequested, a.Side)}}
	if a.Mode == ModePartyReported {
		e.Status = ExecutionCompleted
		e.Attempts = []Attempt{{Number: 1, At: now, Outcome: string(ExecutionCompleted)}}
		e.Completion = &Completion{Reference: a.Reference, Note: a.Note, CompletedAt: now}
		out.Notes = append(out.Notes, note(EventExecutionCompleted, a.Side))
	}
	s.Executions = append(s.Executions, e)
	return out, nil
}

// obligor is the side a remedy orders to act.
func obligor(r award.Remedy) string {
	if r.Kind == award.RemedyPayment {
		return r.Payer
	}
	return r.Obligor
}

// recordAttempt records what the rail answered. A completed execution
// stays completed: an attempt's answer arriving twice records nothing.
func (s *State) recordAttempt(a Act, now time.Time) (Outcome, error) {
	i := slices.IndexFunc(s.Executions, func(e Execution) bool { return e.ID == a.ExecutionID })
	if i < 0 {
		return Outcome{}, refuse(CodeExecutionNotFound, "no execution %s", a.ExecutionID)
	}
	e := &s.Executions[i]
	if e.Status == ExecutionCompleted {
		return Outcome{ExecutionID: e.ID}, nil
	}
	at := Attempt{Number: len(e.Attempts) + 1, At: now}
	if c := a.Completion; c != nil {
		done := *c
		done.CompletedAt = now
		at.Outcome, e.Status, e.Completion = string(ExecutionCompleted), ExecutionCompleted, &done
		e.Attempts = append(e.Attempts, at)
		return Outcome{ExecutionID: e.ID, Notes: []Note{note(EventExecutionCompleted, e.Side)}}, nil
	}
	at.Outcome, at.Detail, e.Status = string(ExecutionFailed), a.Detail, ExecutionFailed
	e.Attempts = append(e.Attempts, at)
	return Outcome{ExecutionID: e.ID, Notes: []Note{note(EventExecutionFailed, e.Side)}}, nil
}

// Tick applies what is due at now: an appeal whose x402 fee is unpaid at
// its due date lapses (a fee a payment holds gets FeeHoldGrace more, for
// the settlement under way), and the served award becomes final once its
// request and appeal windows lapsed with no request or appeal pending.
// An outcome without notes means nothing was due.
func Tick(s State, f Facts, now time.Time) Outcome {
	now = now.UTC().Truncate(time.Millisecond)
	if f.Terminated || f.Award == nil || s.Final() {
		return Outcome{State: s}
	}
	next := s.Clone()
	notes := next.lapseAppeals(now)
	_, pending := next.Pending()
	if !pending && !next.openAppeal() && !now.Before(FinalityDeadline(f)) {
		next.FinalAt, next.FinalBy = now, "window_lapsed"
		notes = append(notes, note(EventAwardFinal, ""))
	}
	if len(notes) == 0 {
		return Outcome{State: s}
	}
	return Outcome{State: next, Notes: notes}
}

// FinalityDeadline is when the served award's recourse windows (requests,
// and appeals where the rules allow them) have all lapsed.
func FinalityDeadline(f Facts) time.Time {
	return latest(RequestDeadline(f), AppealDeadline(f))
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// NextDeadline returns when Tick next has something to do: an unpaid
// appeal fee's due date (and its grace while a payment holds it), or the
// end of the recourse windows of an award not yet final. A pending
// request or an appeal in briefing holds finality until it is decided,
// and the scan after that decision sees it.
func NextDeadline(s State, f Facts) (time.Time, bool) {
	if f.Terminated || f.Award == nil || s.Final() {
		return time.Time{}, false
	}
	if ap, open := s.OpenAppeal(); open {
		if ap.Status == AppealAwaitingFee {
			return ap.lapsesAt(), true
		}
		return time.Time{}, false
	}
	return FinalityDeadline(f), true
}

// validate checks the act's shape (step 1).
func (a Act) validate() error {
	bad := func(format string, args ...any) error {
		return refuse(CodeInvalidAct, "%s: %s", a.Kind, fmt.Sprintf(format, args...))
	}
	side := a.Side == Claimant || a.Side == Respondent
	switch a.Kind {
	case ActWaive:
		if !side {
			return bad("a side waives")
		}
	case ActFileRequest:
		if !side {
			return bad("a side files a request")
		}
		if !slices.Contains(RequestKinds, a.RequestKind) {
			return bad("kind must be one of %v", RequestKinds)
		}
		if !text(a.Text, MaxShortRunes) {
			return bad("text must be 1 to %d characters saying what to correct, interpret or decide", MaxShortRunes)
		}
	case ActDecideRequest:
		if a.RequestID == "" || !text(a.Reasons, MaxTextRunes) {
			return bad("requestId and reasons (1 to %d characters) are required", MaxTextRunes)
		}
		if !a.Grant && (a.CorrectedReasons != "" || a.Remedies != nil || a.Interpretation != "") {
			return bad("a denied request amends nothing")
		}
		if a.CorrectedReasons != "" && !text(a.CorrectedReasons, MaxTextRunes) || a.Interpretation != "" && !text(a.Interpretation, MaxShortRunes) {
			return bad("correctedReasons is at most %d characters, interpretation at most %d", MaxTextRunes, MaxShortRunes)
		}
	case ActFileAppeal:
		if !side {
			return bad("a side files an appeal")
		}
		if len(a.Grounds) == 0 || len(a.Grounds) > MaxGrounds {
			return bad("an appeal states 1 to %d grounds", MaxGrounds)
		}
		for i, g := range a.Grounds {
			if !slices.Contains(GroundKinds, g.Kind) || !text(g.Text, MaxShortRunes) {
				return bad("grounds[%d] needs a kind of %v and a text of 1 to %d characters", i, GroundKinds, MaxShortRunes)
			}
		}
	case ActHoldFee, ActPayFee:
		if a.AppealID == "" || a.PaymentID == "" || (a.Kind == ActPayFee) != (a.FeePayment != nil) || (a.Kind == ActHoldFee) != side {
			return bad("a fee payment names its appeal, its payment and its payer's side or, once settled, its settlement")
		}
	case ActAnswerAppeal:
		if !side || a.AppealID == "" || !text(a.Text, MaxTextRunes) {
			return bad("a side answers an appeal (appealId) with a text of 1 to %d characters", MaxTextRunes)
		}
	case ActCloseBriefing:
		if a.AppealID == "" {
			return bad("appealId is required")
		}
	case ActDecideAppeal:
		if a.AppealID == "" || !slices.Contains(award.AppealDecisions, a.Decision) || !text(a.Reasons, MaxTextRunes) {
			return bad("appealId, a decision of %v and reasons (1 to %d characters) are required", award.AppealDecisions, MaxTextRunes)
		}
	case ActExecute:
		if !side {
			return bad("a side commands an execution")
		}
		if !slices.Contains(Modes, a.Mode) {
			return bad("mode must be one of %v", Modes)
		}
		if a.Action != actionOf[a.Mode] {
			return bad("the action of mode %s is %q", a.Mode, actionOf[a.Mode])
		}
		if a.AwardHash == "" || a.RemedyIndex < 0 || a.KeyDigest == "" {
			return bad("awardHash, a remedyIndex of at least 0 and an Idempotency-Key are required")
		}
		if (a.Mode == ModeX402rRefund) != (a.Payment != nil) {
			return bad("payment (the original x402 payment: network, payer, transaction) is required for %s and only for it", ModeX402rRefund)
		}
		if p := a.Payment; p != nil && (p.Network == "" || !hexOf(p.Payer, 40) || !hexOf(p.Transaction, 64)) {
			return bad("payment names its network (CAIP-2), its payer (0x and 40 hex digits) and its transaction (0x and 64 hex digits)")
		}
		if (a.Mode == ModePartyReported) != (a.Reference != "") {
			return bad("reference (the party's own record of having carried it out) is required for %s and only for it", ModePartyReported)
		}
		if a.Reference != "" && !text(a.Reference, MaxReferenceRunes) || a.Note != "" && !text(a.Note, MaxShortRunes) {
			return bad("reference is at most %d characters, note at most %d", MaxReferenceRunes, MaxShortRunes)
		}
	case ActRecordAttempt:
		if a.ExecutionID == "" || (a.Completion == nil) == (a.Detail == "") {
			return bad("an attempt names its execution and either its completion or why it failed")
		}
	default:
		return bad("unknown act")
	}
	return nil
}

// hexOf reports whether s is 0x and n hex digits.
func hexOf(s string, n int) bool {
	if len(s) != n+2 || !strings.HasPrefix(s, "0x") {
		return false
	}
	for _, r := range s[2:] {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') && (r < 'A' || r > 'F') {
			return false
		}
	}
	return true
}

func text(s string, max int) bool {
	n := utf8.RuneCountInString(s)
	return n > 0 && n <= max && utf8.ValidString(s)
}

func ts(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
