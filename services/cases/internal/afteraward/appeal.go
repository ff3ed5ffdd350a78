package afteraward

import (
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// An appeal, as the rules version allows it (Windows.Appeals): a side
// files it with its grounds within the window, pays its fee (or is
// invoiced), the other side answers, the appellate reviewer (a reviewer
// who took no part in the appealed award) closes the briefing and decides:
// affirm, modify or set aside, issued as an award of its own, final on
// issue. docs/after-award.md, "Appeals".

// GroundKind is a ground of appeal. The grounds follow the optional
// appellate arbitration rules the platform models (errors of law,
// clearly erroneous findings of fact) and add the procedural one an
// online procedure needs.
type GroundKind string

// The grounds of appeal.
const (
	GroundErrorOfLaw           GroundKind = "material_error_of_law"
	GroundErroneousFact        GroundKind = "clearly_erroneous_fact"
	GroundProceduralIrregulary GroundKind = "serious_procedural_irregularity"
)

// GroundKinds lists every ground, for docs and tests.
var GroundKinds = []GroundKind{GroundErrorOfLaw, GroundErroneousFact, GroundProceduralIrregulary}

// MaxGrounds is how many grounds one appeal states.
const MaxGrounds = 5

// Ground is one ground of an appeal, in the appellant's words.
type Ground struct {
	Kind GroundKind `json:"kind"`
	Text string     `json:"text"`
}

// AppealStatus is where an appeal stands.
type AppealStatus string

// The appeal statuses.
const (
	// AppealAwaitingFee: the fee is collected before briefing and is
	// unpaid; the appeal lapses at the fee's due date.
	AppealAwaitingFee AppealStatus = "awaiting_fee"
	// AppealBriefing: the fee is paid (or invoiced); the other side may
	// answer until the answer deadline.
	AppealBriefing AppealStatus = "briefing"
	// AppealBriefingClosed: the appellate reviewer closed the briefing
	// and decides.
	AppealBriefingClosed AppealStatus = "briefing_closed"
	// AppealDecided: the appellate award was issued.
	AppealDecided AppealStatus = "decided"
	// AppealLapsed: the fee was not paid by its due date.
	AppealLapsed AppealStatus = "lapsed"
)

// Open reports whether the appeal still holds the award's finality.
func (s AppealStatus) Open() bool {
	return s == AppealAwaitingFee || s == AppealBriefing || s == AppealBriefingClosed
}

// FeeCollection says how an appeal fee is collected.
type FeeCollection string

// The appeal fee collections.
const (
	// CollectX402: paid with x402 before the briefing opens.
	CollectX402 FeeCollection = "x402"
	// CollectInvoice: invoiced to the appellant's partner; the briefing
	// opens at once. A deployment that takes no x402 fee payments
	// invoices.
	CollectInvoice FeeCollection = "invoice"
)

// FeeStatus is where an appeal fee stands.
type FeeStatus string

// The appeal fee statuses.
const (
	FeeQuoted   FeeStatus = "quoted"
	FeePaid     FeeStatus = "paid"
	FeeInvoiced FeeStatus = "invoiced"
)

// AppealFee is an appeal's fee. It is quoted when the appeal is filed.
type AppealFee struct {
	FeeID       string        `json:"feeId"`
	Currency    string        `json:"currency"`
	AmountMinor int64         `json:"amountMinor"`
	Collection  FeeCollection `json:"collection"`
	Status      FeeStatus     `json:"status"`
	// DueAt is when an unpaid x402 fee lapses the appeal.
	DueAt time.Time `json:"dueAt,omitzero"`
	// PaymentID is the settlement journal's id of the payment that holds
	// the fee (being settled) or paid it; Payment its settlement.
	PaymentID string      `json:"paymentId,omitempty"`
	Payment   *FeePayment `json:"payment,omitempty"`
	PaidAt    time.Time   `json:"paidAt,omitzero"`
}

// FeePayment is a settled fee payment, as the facilitator answered.
type FeePayment struct {
	Network     string `json:"network"`
	Payer       string `json:"payer"`
	Transaction string `json:"transaction"`
}

// AppealAnswer is the other side's answer to an appeal.
type AppealAnswer struct {
	Side          string    `json:"side"`
	ParticipantID string    `json:"participantId"`
	Text          string    `json:"text"`
	FiledAt       time.Time `json:"filedAt"`
}

// Appeal is a side's appeal of the served award.
type Appeal struct {
	ID            string       `json:"appealId"`
	Side          string       `json:"side"`
	ParticipantID string       `json:"participantId"`
	Grounds       []Ground     `json:"grounds"`
	AwardHash     string       `json:"awardHash"` // the appealed award
	FiledAt       time.Time    `json:"filedAt"`
	Status        AppealStatus `json:"status"`
	Fee           AppealFee    `json:"fee"`
	// Reviewer is the appellate reviewer, picked from the tribunal pool
	// when the appeal is filed.
	Reviewer tribunal.Member `json:"reviewer"`
	// AnswerDeadline is set when the briefing opens.
	AnswerDeadline   time.Time     `json:"answerDeadline,omitzero"`
	Answer           *AppealAnswer `json:"answer,omitempty"`
	BriefingClosedAt time.Time     `json:"briefingClosedAt,omitzero"`
	// Decision, Reasons, DecidedAt and IssuedAwardHash are the appellate
	// decision and the award it issued.
	Decision        string    `json:"decision,omitempty"`
	Reasons         string    `json:"reasons,omitempty"`
	DecidedAt       time.Time `json:"decidedAt,omitzero"`
	IssuedAwardHash string    `json:"issuedAwardHash,omitempty"`
	LapsedAt        time.Time `json:"lapsedAt,omitzero"`
}

// Appeal returns the appeal with the id.
func (s State) Appeal(id string) (Appeal, bool) {
	i := slices.IndexFunc(s.Appeals, func(a Appeal) bool { return a.ID == id })
	if i < 0 {
		return Appeal{}, false
	}
	return s.Appeals[i], true
}

// OpenAppeal returns the appeal that holds the award's finality, if any.
func (s State) OpenAppeal() (Appeal, bool) {
	i := slices.IndexFunc(s.Appeals, func(a Appeal) bool { return a.Status.Open() })
	if i < 0 {
		return Appeal{}, false
	}
	return s.Appeals[i], true
}

// HearsAppeal reports whether the credential is the appellate reviewer
// of one of the case's appeals.
func (s State) HearsAppeal(credentialID string) bool {
	return slices.ContainsFunc(s.Appeals, func(a Appeal) bool { return a.Reviewer.CredentialID == credentialID })
}

// AppealFeeID is the fee id of a case's appeal.
func AppealFeeID(caseID, appealID string) string { return "apf:" + caseID + ":" + appealID }

// AppealDeadline is when the served award's appeal window ends; zero
// when its rules allow no appeal.
func AppealDeadline(f Facts) time.Time {
	if f.Award == nil || f.Windows.Appeals <= 0 {
		return time.Time{}
	}
	return f.Award.IssuedAt.Add(f.Windows.Appeals)
}

// quoteAppealFee is the fee of an appeal of a claim of claimMinor.
func quoteAppealFee(f Facts) int64 {
	s := f.AppealFees
	proportional := (f.Decision.ClaimMinor*s.PercentBasisPoints + 5_000) / 10_000
	return max(proportional, s.FloorMinor)
}

func (s *State) fileAppeal(f Facts, a Act, now time.Time) (Outcome, error) {
	_, requestPending := s.Pending()
	switch {
	case s.Final():
		return Outcome{}, refuse(CodeAwardFinal, "the award of case %s is final", f.CaseID)
	case s.waived(a.Side):
		return Outcome{}, refuse(CodeRecourseWaived, "the %s side waived its recourse against the award", a.Side)
	case f.Windows.Appeals <= 0:
		return Outcome{}, refuse(CodeAppealNotAllowed, "the rules of case %s (%s) allow no appeal", f.CaseID, f.Decision.Rules.Version)
	case !now.Before(AppealDeadline(f)):
		return Outcome{}, refuse(CodeAppealWindowClosed, "the appeal window of the award of case %s ended at %s", f.CaseID, ts(AppealDeadline(f)))
	case s.openAppeal():
		return Outcome{}, refuse(CodeAppealPending, "case %s has an appeal pending; its answer is where the other side's points go", f.CaseID)
	case requestPending:
		return Outcome{}, refuse(CodeRequestPending, "a post-award request is pending on case %s; the reviewer decides it first and the appeal is of the award it leaves", f.CaseID)
	case f.AppellateReviewer == nil:
		return Outcome{}, refuse(CodeNoAppellateReviewer, "the tribunal pool has no reviewer eligible to hear an appeal of case %s; an operator adds one with pcadm tribunal add", f.CaseID)
	}
	id := "apl_" + strconv.Itoa(len(s.Appeals)+1)
	ap := Appeal{ID: id, Side: a.Side, ParticipantID: a.ParticipantID, Grounds: slices.Clone(a.Grounds), AwardHash: f.Award.AwardHash,
		FiledAt: now, Reviewer: *f.AppellateReviewer,
		Fee: AppealFee{FeeID: AppealFeeID(f.CaseID, id), Currency: "USD", AmountMinor: quoteAppealFee(f), Collection: f.AppealFeeCollection}}
	ap.Reviewer.AssignedAt = now
	notes := []Note{note(EventAppealFiled, a.Side)}
	if ap.Fee.Collection == CollectX402 {
		ap.Status, ap.Fee.Status, ap.Fee.DueAt = AppealAwaitingFee, FeeQuoted, now.Add(f.Windows.AppealFee)
	} else {
		ap.Fee.Status = FeeInvoiced
		ap.openBriefing(f, now)
		notes = append(notes, note(EventAppealBriefingOpened, a.Side))
	}
	s.Appeals = append(s.Appeals, ap)
	return Outcome{Notes: notes}, nil
}

func (s State) openAppeal() bool { _, ok := s.OpenAppeal(); return ok }

func (ap *Appeal) openBriefing(f Facts, now time.Time) {
	ap.Status, ap.AnswerDeadline = AppealBriefing, now.Add(f.Windows.AppealAnswer)
}

// appealOf finds the act's appeal (appeal_not_found).
func (s *State) appealOf(f Facts, id string) (*Appeal, error) {
	i := slices.IndexFunc(s.Appeals, func(a Appeal) bool { return a.ID == id })
	if i < 0 {
		return nil, refuse(CodeAppealNotFound, "case %s has no appeal %s", f.CaseID, id)
	}
	return &s.Appeals[i], nil
}

// holdAppealFee binds a payment to an unpaid fee before it is settled,
// so that two payments never both settle for one fee. Replaces names the
// payment that held it, which the flow found moved nothing.
func (s *State) holdAppealFee(f Facts, a Act, now time.Time) (Outcome, error) {
	ap, err := s.appealOf(f, a.AppealID)
	if err != nil {
		return Outcome{}, err
	}
	switch {
	case a.Side != ap.Side:
		return Outcome{}, refuse(CodeNotAppellant, "appeal %s is the %s side's; only it pays the fee", ap.ID, ap.Side)
	case ap.Fee.Status == FeePaid:
		return Outcome{}, refuse(CodeAppealFeePaid, "the fee of appeal %s is paid", ap.ID)
	case ap.Status == AppealAwaitingFee && !now.Before(ap.Fee.DueAt):
		return Outcome{}, refuse(CodeAppealFeeNotPayable, "the fee of appeal %s was due by %s; the appeal lapses", ap.ID, ts(ap.Fee.DueAt))
	case ap.Status != AppealAwaitingFee:
		return Outcome{}, refuse(CodeAppealFeeNotPayable, "the fee of appeal %s is not payable: the appeal is %s and its fee %s", ap.ID, ap.Status, ap.Fee.Status)
	case ap.Fee.PaymentID == a.PaymentID:
		return Outcome{}, nil
	case ap.Fee.PaymentID != a.Replaces:
		return Outcome{}, refuse(CodeAppealFeeHeld, "another payment of the fee of appeal %s is being settled", ap.ID)
	}
	ap.Fee.PaymentID = a.PaymentID
	return Outcome{}, nil
}

// payAppealFee records the held payment's settlement and opens the
// briefing. The same settlement recorded again records nothing.
func (s *State) payAppealFee(f Facts, a Act, now time.Time) (Outcome, error) {
	ap, err := s.appealOf(f, a.AppealID)
	if err != nil {
		return Outcome{}, err
	}
	switch {
	case ap.Fee.Status == FeePaid && ap.Fee.PaymentID == a.PaymentID:
		return Outcome{}, nil
	case ap.Fee.Status == FeePaid:
		return Outcome{}, refuse(CodeAppealFeePaid, "the fee of appeal %s was paid by another payment", ap.ID)
	case ap.Fee.PaymentID != a.PaymentID:
		return Outcome{}, refuse(CodeAppealFeeHeld, "payment %s does not hold the fee of appeal %s", a.PaymentID, ap.ID)
	}
	p := *a.FeePayment
	ap.Fee.Status, ap.Fee.Payment, ap.Fee.PaidAt = FeePaid, &p, now
	// A payment held before the due date settles within FeeHoldGrace,
	// before the appeal may lapse. One whose settlement stayed unknown
	// longer (the facilitator away) is recorded on the lapsed appeal, and
	// docs/operations.md says how an operator returns it.
	if ap.Status != AppealAwaitingFee {
		return Outcome{}, nil
	}
	ap.openBriefing(f, now)
	return Outcome{Notes: []Note{note(EventAppealBriefingOpened, ap.Side)}}, nil
}

func (s *State) answerAppeal(f Facts, a Act, now time.Time) (Outcome, error) {
	ap, err := s.appealOf(f, a.AppealID)
	if err != nil {
		return Outcome{}, err
	}
	switch {
	case a.Side == ap.Side:
		return Outcome{}, refuse(CodeNotAppellee, "the %s side filed appeal %s; the other side answers it", a.Side, ap.ID)
	case ap.Status == AppealAwaitingFee:
		return Outcome{}, refuse(CodeAppealFeeUnpaid, "the fee of appeal %s is unpaid; the briefing opens once it is paid", ap.ID)
	case ap.Status != AppealBriefing:
		return Outcome{}, refuse(CodeBriefingClosed, "the briefing of appeal %s is closed (%s)", ap.ID, ap.Status)
	case ap.Answer != nil:
		return Outcome{}, refuse(CodeAppealAnswered, "the %s side answered appeal %s", ap.Answer.Side, ap.ID)
	case !now.Before(ap.AnswerDeadline):
		return Outcome{}, refuse(CodeAppealWindowClosed, "the answer to appeal %s was due by %s", ap.ID, ts(ap.AnswerDeadline))
	}
	ap.Answer = &AppealAnswer{Side: a.Side, ParticipantID: a.ParticipantID, Text: a.Text, FiledAt: now}
	return Outcome{Notes: []Note{note(EventAppealAnswered, a.Side)}}, nil
}

// appellate finds the appeal of an appellate reviewer's act and checks
// who acts (not_appellate_reviewer).
func (s *State) appellate(f Facts, a Act) (*Appeal, error) {
	ap, err := s.appealOf(f, a.AppealID)
	if err != nil {
		return nil, err
	}
	if a.MemberID == "" || a.MemberID != ap.Reviewer.CredentialID {
		return nil, refuse(CodeNotAppellateReviewer, "only the appellate reviewer of appeal %s closes its briefing and decides it", ap.ID)
	}
	return ap, nil
}

func (s *State) closeBriefing(f Facts, a Act, now time.Time) (Outcome, error) {
	ap, err := s.appellate(f, a)
	if err != nil {
		return Outcome{}, err
	}
	switch {
	case ap.Status == AppealAwaitingFee:
		return Outcome{}, refuse(CodeAppealFeeUnpaid, "the fee of appeal %s is unpaid; the briefing opens once it is paid", ap.ID)
	case ap.Status != AppealBriefing:
		return Outcome{}, refuse(CodeBriefingClosed, "the briefing of appeal %s is closed (%s)", ap.ID, ap.Status)
	case ap.Answer == nil && now.Before(ap.AnswerDeadline):
		return Outcome{}, refuse(CodeAnswerWindowOpen, "the other side may answer appeal %s until %s", ap.ID, ts(ap.AnswerDeadline))
	}
	ap.Status, ap.BriefingClosedAt = AppealBriefingClosed, now
	return Outcome{Notes: []Note{note(EventAppealBriefingClosed, "")}}, nil
}

func (s *State) decideAppeal(f Facts, a Act, now time.Time) (Outcome, error) {
	ap, err := s.appellate(f, a)
	if err != nil {
		return Outcome{}, err
	}
	switch {
	case ap.Status == AppealDecided || ap.Status == AppealLapsed:
		return Outcome{}, refuse(CodeAppealClosed, "appeal %s is %s", ap.ID, ap.Status)
	case ap.Status == AppealAwaitingFee:
		return Outcome{}, refuse(CodeAppealFeeUnpaid, "the fee of appeal %s is unpaid; the briefing opens once it is paid", ap.ID)
	case ap.Status != AppealBriefingClosed:
		return Outcome{}, refuse(CodeBriefingOpen, "the briefing of appeal %s is open; the appellate reviewer closes it first", ap.ID)
	case ap.AwardHash != f.Award.AwardHash:
		return Outcome{}, errors.New("afteraward: the appealed award is no longer served")
	case f.Served == nil:
		return Outcome{}, errors.New("afteraward: deciding an appeal needs the served award's document")
	}
	doc, err := appellateAward(*f.Served, *ap, a, f, now)
	if err != nil {
		return Outcome{}, err
	}
	issued, err := s.serve(&doc, f, now)
	if err != nil {
		return Outcome{}, err
	}
	ap.Status, ap.Decision, ap.Reasons, ap.DecidedAt, ap.IssuedAwardHash = AppealDecided, a.Decision, a.Reasons, now, issued.AwardHash
	// The appellate award ends the recourse: it is final on issue.
	s.FinalAt, s.FinalBy = now, "appeal_decided"
	return Outcome{Award: &doc, Issued: issued, Notes: []Note{note(EventAppealDecided, ""), note(EventAwardFinal, "")}}, nil
}

// appellateAward is the award an appeal's decision issues from the
// appealed one: affirmed, its dispositive part stands and the appellate
// reasons are added; modified, the outcome stands and the remedies are
// the appellate reviewer's; set aside, the outcome is replaced (another
// one) with its remedies. The appellate reasons replace the reasons of a
// modified or set-aside award. The dispositive part passes the award's
// own checks.
func appellateAward(doc award.Document, ap Appeal, a Act, f Facts, now time.Time) (award.Document, error) {
	doc.Remedies = slices.Clone(doc.Remedies)
	doc.Citations = slices.Clone(doc.Citations)
	doc.Parties = slices.Clone(doc.Parties)
	doc.Tribunal.Runs = slices.Clone(doc.Tribunal.Runs)
	switch a.Decision {
	case award.AppealAffirmed:
		if a.Outcome != "" || a.Remedies != nil {
			return doc, refuse(CodeInvalidAct, "an affirmed award keeps its outcome and remedies; give neither")
		}
		doc.Reasons += "\n\nAppeal " + ap.ID + " (affirmed): " + a.Reasons
	case award.AppealModified:
		if a.Outcome != "" || a.Remedies == nil {
			return doc, refuse(CodeInvalidAct, "a modified award keeps its outcome and gives its remedies")
		}
		doc.Remedies, doc.Reasons = slices.Clone(a.Remedies), a.Reasons
	case award.AppealSetAside:
		if a.Outcome == "" || a.Outcome == doc.Outcome {
			return doc, refuse(CodeInvalidAct, "setting the award aside replaces its outcome (%s) with another", doc.Outcome)
		}
		doc.Outcome, doc.Reasons = a.Outcome, a.Reasons
		doc.Remedies = slices.Clone(a.Remedies)
		if doc.Remedies == nil {
			doc.Remedies = []award.Remedy{}
		}
	}
	doc.Appeal = &award.Appeal{AppealID: ap.ID, Appellant: ap.Side, Decision: a.Decision,
		Reviewer: award.Member{MemberID: ap.Reviewer.CredentialID, Kind: "individual"}}
	return doc, checkDispositive(doc, f, now)
}

// FeeHoldGrace is how long past its due date an appeal waits for a fee
// payment held before that date: the payment's settlement is under way.
const FeeHoldGrace = time.Hour

// lapsesAt is when an appeal awaiting its fee lapses.
func (ap Appeal) lapsesAt() time.Time {
	if ap.Fee.PaymentID != "" {
		return ap.Fee.DueAt.Add(FeeHoldGrace)
	}
	return ap.Fee.DueAt
}

// lapseAppeals lapses the appeals whose x402 fee is unpaid when due.
func (s *State) lapseAppeals(now time.Time) []Note {
	var notes []Note
	for i := range s.Appeals {
		ap := &s.Appeals[i]
		if ap.Status == AppealAwaitingFee && !now.Before(ap.lapsesAt()) {
			ap.Status, ap.LapsedAt = AppealLapsed, now
			notes = append(notes, note(EventAppealLapsed, ap.Side))
		}
	}
	return notes
}
