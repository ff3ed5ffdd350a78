package httpapi

import (
	"errors"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
	"github.com/pcourt/pcourt/services/cases/internal/afterawardflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// Appeals (internal/afteraward, "Appeals"): a side files with its grounds,
// pays the fee at its x402 resource (or is invoiced), the other side
// answers, the appellate reviewer closes the briefing and decides.
// docs/after-award.md describes each route.

// The idempotency operations of the appeal commands.
const (
	opFileAppeal    = "fileAppeal"
	opAnswerAppeal  = "answerAppeal"
	opCloseBriefing = "closeAppealBriefing"
	opDecideAppeal  = "decideAppeal"
)

type (
	appealBody struct {
		ParticipantID string              `json:"participantId"`
		Grounds       []afteraward.Ground `json:"grounds"`
	}
	// appealAnswerBody is the canonical answer; the website's names the
	// appeal in the body (AppealID), the canonical route in the path.
	appealAnswerBody struct {
		AppealID      string `json:"appealId"`
		ParticipantID string `json:"participantId"`
		Text          string `json:"text"`
	}
	appealRefBody struct {
		AppealID string `json:"appealId"`
	}
	appealDecisionBody struct {
		AppealID string          `json:"appealId"`
		Decision string          `json:"decision"`
		Outcome  string          `json:"outcome"`
		Remedies *[]award.Remedy `json:"remedies"`
		Reasons  string          `json:"reasons"`
	}
)

// appealsView is where the appeals of a case's award stand.
type appealsView struct {
	CaseID         string       `json:"caseId"`
	AwardHash      string       `json:"awardHash"`
	AppealsAllowed bool         `json:"appealsAllowed"`
	AppealDeadline string       `json:"appealDeadline,omitempty"`
	Appeals        []appealView `json:"appeals"`
	LastSequence   int64        `json:"lastSequence"`
}

type appealView struct {
	AppealID         string              `json:"appealId"`
	CaseID           string              `json:"caseId"`
	Side             string              `json:"side"`
	Grounds          []afteraward.Ground `json:"grounds"`
	AwardHash        string              `json:"awardHash"`
	FiledAt          string              `json:"filedAt"`
	Status           string              `json:"status"`
	Fee              appealFeeView       `json:"fee"`
	ReviewerID       string              `json:"appellateReviewerId"`
	AnswerDeadline   string              `json:"answerDeadline,omitempty"`
	Answer           *appealAnswerView   `json:"answer,omitempty"`
	BriefingClosedAt string              `json:"briefingClosedAt,omitempty"`
	Decision         string              `json:"decision,omitempty"`
	Reasons          string              `json:"reasons,omitempty"`
	DecidedAt        string              `json:"decidedAt,omitempty"`
	IssuedAwardHash  string              `json:"issuedAwardHash,omitempty"`
	LapsedAt         string              `json:"lapsedAt,omitempty"`
	Events           []eventRef          `json:"events,omitempty"`
}

type appealFeeView struct {
	FeeID       string                 `json:"feeId"`
	Currency    string                 `json:"currency"`
	AmountMinor int64                  `json:"amountMinor"`
	Collection  string                 `json:"collection"`
	Status      string                 `json:"status"`
	DueAt       string                 `json:"dueAt,omitempty"`
	PaidAt      string                 `json:"paidAt,omitempty"`
	Payment     *afteraward.FeePayment `json:"payment,omitempty"`
	// PaymentPath is the fee's x402 resource while it is payable.
	PaymentPath string `json:"paymentPath,omitempty"`
}

type appealAnswerView struct {
	Side    string `json:"side"`
	Text    string `json:"text"`
	FiledAt string `json:"filedAt"`
}

func toAppealView(caseID string, ap afteraward.Appeal) appealView {
	f := ap.Fee
	v := appealView{AppealID: ap.ID, CaseID: caseID, Side: ap.Side, Grounds: ap.Grounds, AwardHash: ap.AwardHash, FiledAt: ts(ap.FiledAt),
		Status: string(ap.Status), ReviewerID: ap.Reviewer.CredentialID, AnswerDeadline: ts(ap.AnswerDeadline),
		BriefingClosedAt: ts(ap.BriefingClosedAt), Decision: ap.Decision, Reasons: ap.Reasons, DecidedAt: ts(ap.DecidedAt),
		IssuedAwardHash: ap.IssuedAwardHash, LapsedAt: ts(ap.LapsedAt),
		Fee: appealFeeView{FeeID: f.FeeID, Currency: f.Currency, AmountMinor: f.AmountMinor, Collection: string(f.Collection),
			Status: string(f.Status), DueAt: ts(f.DueAt), PaidAt: ts(f.PaidAt), Payment: f.Payment}}
	if ap.Status == afteraward.AppealAwaitingFee {
		v.Fee.PaymentPath = afterawardflow.AppealFeeResource(caseID, ap.ID)
	}
	if a := ap.Answer; a != nil {
		v.Answer = &appealAnswerView{Side: a.Side, Text: a.Text, FiledAt: ts(a.FiledAt)}
	}
	return v
}

func toAppealsView(cs procedure.Case, lastSequence int64) appealsView {
	f := cs.AfterAwardFacts()
	v := appealsView{CaseID: cs.ID, AwardHash: f.Award.AwardHash, AppealsAllowed: f.Windows.Appeals > 0,
		AppealDeadline: ts(afteraward.AppealDeadline(f)), Appeals: []appealView{}, LastSequence: lastSequence}
	for _, ap := range cs.AfterAward.Appeals {
		v.Appeals = append(v.Appeals, toAppealView(cs.ID, ap))
	}
	return v
}

func (h *handlers) listAppeals(c *gin.Context) {
	if _, l, ok := h.awarded(c); ok {
		private(c, toAppealsView(l.Case, l.Sequence))
	}
}

// fileAppeal is a side's appeal: 201 with the appeal, its fee quoted.
func (h *handlers) fileAppeal(c *gin.Context) {
	var b appealBody
	if err := decodeOptional(c, &b); err != nil {
		_ = c.Error(err)
		return
	}
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	a := afteraward.Act{Kind: afteraward.ActFileAppeal, Grounds: b.Grounds}
	if a.Side, a.ParticipantID, err = h.evidenceActor(c, cred, l.Case, b.ParticipantID); err != nil {
		_ = c.Error(err)
		return
	}
	h.appealAct(c, cred, l.Case, a, http.StatusCreated, func(cs procedure.Case) string { return cs.AfterAward.Appeals[len(cs.AfterAward.Appeals)-1].ID })
}

// answerAppeal is the other side's answer; the canonical route names the
// appeal in the path, the website control in the body.
func (h *handlers) answerAppeal(c *gin.Context) {
	var b appealAnswerBody
	if err := decodeOptional(c, &b); err != nil {
		_ = c.Error(err)
		return
	}
	if id := c.Param("appealId"); id != "" {
		if b.AppealID != "" && b.AppealID != id {
			_ = c.Error(afterAwardInvalid("the appeal is the path's; appealId in the body must be absent or the same"))
			return
		}
		b.AppealID = id
	}
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	a := afteraward.Act{Kind: afteraward.ActAnswerAppeal, AppealID: b.AppealID, Text: b.Text}
	if a.Side, a.ParticipantID, err = h.evidenceActor(c, cred, l.Case, b.ParticipantID); err != nil {
		_ = c.Error(err)
		return
	}
	h.appealAct(c, cred, l.Case, a, http.StatusCreated, nil)
}

// closeBriefing and decideAppeal are the appellate reviewer's.
func (h *handlers) closeBriefing(c *gin.Context) {
	var b appealRefBody
	if err := decodeOptional(c, &b); err != nil {
		_ = c.Error(err)
		return
	}
	h.appellateAct(c, afteraward.Act{Kind: afteraward.ActCloseBriefing, AppealID: b.AppealID})
}

func (h *handlers) decideAppeal(c *gin.Context) {
	var b appealDecisionBody
	if err := decodeOptional(c, &b); err != nil {
		_ = c.Error(err)
		return
	}
	a := afteraward.Act{Kind: afteraward.ActDecideAppeal, AppealID: b.AppealID, Decision: b.Decision, Outcome: b.Outcome, Reasons: b.Reasons}
	if b.Remedies != nil {
		a.Remedies = append([]award.Remedy{}, *b.Remedies...)
	}
	h.appellateAct(c, a)
}

func (h *handlers) appellateAct(c *gin.Context, a afteraward.Act) {
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	if !tribunalCredential(cred) {
		_ = c.Error(h.tribunalOnly(l.Case))
		return
	}
	a.MemberID = cred.PublicID
	h.appealAct(c, cred, l.Case, a, http.StatusOK, nil)
}

// appealAct applies an act on an appeal and answers the appeal: the one
// the act names, or the one pick finds (a new appeal).
func (h *handlers) appealAct(c *gin.Context, cred auth.Credential, cs procedure.Case, a afteraward.Act, status int, pick func(procedure.Case) string) {
	res, _, err := h.afterAward.Act(c.Request.Context(), cs.ID, a)
	if errors.Is(err, store.ErrNotFound) {
		err = notVisible(cs.ID)
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	id := a.AppealID
	if pick != nil {
		id = pick(res.Case)
	}
	ap, _ := res.Case.AfterAward.Appeal(id)
	h.logger.InfoContext(c.Request.Context(), "appeal act accepted", "case_id", cs.ID, "appeal_id", id, "act", a.Kind,
		"credential", cred.PublicID)
	v := toAppealView(cs.ID, ap)
	v.Events = eventRefs(cs.ID, res.FirstSequence, res.Events)
	c.Header("Cache-Control", "no-store")
	c.JSON(status, gin.H{"data": v, "requestId": requestid.Get(c)})
}

// appealFeeStatus is the website's confirm-fee: it reads the fee's status
// and never attests payment (spec, "Compatibility windows"); a fee is
// paid only at its x402 resource.
func (h *handlers) appealFeeStatus(c *gin.Context) {
	var b appealRefBody
	if c.Request.Method == http.MethodGet {
		b.AppealID = c.Query("appealId")
	} else if err := decodeOptional(c, &b); err != nil {
		_ = c.Error(err)
		return
	}
	_, l, ok := h.awarded(c)
	if !ok {
		return
	}
	ap, found := l.Case.AfterAward.Appeal(b.AppealID)
	if !found {
		_ = c.Error(&afteraward.RefusalError{Code: afteraward.CodeAppealNotFound, Detail: "case " + l.Case.ID + " has no appeal " + problem.Clip(b.AppealID)})
		return
	}
	private(c, toAppealView(l.Case.ID, ap).Fee)
}

// payAppealFee is the x402 resource of an appeal fee: without
// PAYMENT-SIGNATURE it answers 402 with the fee's requirements; with one
// it pays the fee, which opens the briefing. Only the appellant's side
// pays; the payment pays this fee once.
func (h *handlers) payAppealFee(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	cred, l, ok := h.awarded(c)
	if !ok {
		return
	}
	appealID := c.Param("appealId")
	ap, found := l.Case.AfterAward.Appeal(appealID)
	if !found {
		_ = c.Error(&afteraward.RefusalError{Code: afteraward.CodeAppealNotFound, Detail: "case " + l.Case.ID + " has no appeal " + problem.Clip(appealID)})
		return
	}
	side, _, err := h.evidenceActor(c, cred, l.Case, "")
	if err != nil {
		_ = c.Error(err)
		return
	}
	if side != ap.Side {
		_ = c.Error(&afteraward.RefusalError{Code: afteraward.CodeNotAppellant, Detail: "appeal " + ap.ID + " is the " + ap.Side + " side's; only it pays the fee"})
		return
	}
	if ap.Fee.Collection != afteraward.CollectX402 {
		_ = c.Error(&afteraward.RefusalError{Code: afteraward.CodeAppealFeeNotPayable, Detail: "the fee of appeal " + ap.ID + " is invoiced to the appellant's partner; it is not paid here"})
		return
	}
	offers, err := h.afterAward.FeeOffers(l.Case.Environment, ap.Fee)
	if err != nil {
		_ = c.Error(err)
		return
	}
	resource := afterawardflow.AppealFeeResource(l.Case.ID, ap.ID)
	payment, present, err := x402.PaymentSignature(c.Request.Header)
	if err != nil {
		_ = c.Error(err)
		return
	}
	if !present {
		if ap.Status != afteraward.AppealAwaitingFee {
			_ = c.Error(&afteraward.RefusalError{Code: afteraward.CodeAppealFeeNotPayable, Detail: "the fee of appeal " + ap.ID + " is " + string(ap.Fee.Status) + " and the appeal " + string(ap.Status)})
			return
		}
		h.feeChallenge(c, resource, ap.Fee.FeeID, offers, "payment_required", nil)
		return
	}
	offer, err := x402.MatchOffer(offers, payment.Accepted)
	if err != nil {
		h.feeChallenge(c, resource, ap.Fee.FeeID, offers, x402.ReasonInvalidPaymentRequirements, nil)
		return
	}
	paid, err := h.afterAward.PayAppealFee(c.Request.Context(), l.Case.ID, ap.ID, side, payment, offer)
	var refused *journal.Refusal
	if errors.As(err, &refused) {
		h.feeChallenge(c, resource, ap.Fee.FeeID, offers, refused.Reason, refused.Settlement)
		return
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	if encoded, err := x402.EncodeHeader(paid.Settlement); err == nil {
		c.Header(x402.HeaderPaymentResponse, encoded)
	}
	h.logger.InfoContext(c.Request.Context(), "appeal fee paid", "case_id", l.Case.ID, "appeal_id", ap.ID,
		"transaction", paid.Settlement.Transaction, "credential", cred.PublicID)
	paidAp, _ := paid.Result.Case.AfterAward.Appeal(ap.ID)
	v := toAppealView(l.Case.ID, paidAp)
	v.Events = eventRefs(l.Case.ID, paid.Result.FirstSequence, paid.Result.Events)
	c.JSON(http.StatusOK, gin.H{"data": v, "requestId": requestid.Get(c)})
}

func (h *handlers) feeChallenge(c *gin.Context, resource, feeID string, offers []x402.PaymentRequirements, reason string, settlement *x402.SettleResponse) {
	pr := x402.PaymentRequired{
		X402Version: x402.Version, Error: reason,
		Resource:   x402.ResourceInfo{URL: h.publicBase.URL(resource), Description: "Appeal fee " + feeID, MimeType: "application/json"},
		Accepts:    slices.Clone(offers),
		Extensions: x402.Extensions{},
	}
	if err := x402.SetChallengeHeaders(c.Writer.Header(), pr, settlement); err != nil {
		_ = c.Error(err)
		return
	}
	c.JSON(http.StatusPaymentRequired, pr)
}
