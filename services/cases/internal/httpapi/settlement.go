package httpapi

import (
	"errors"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/settlement"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// The settlement binding's routes (docs/settlement.md): GET where it
// stands; POST an act, named by the body's action: a side proposes,
// accepts or withdraws, the reviewer records.

type (
	// settlementBody is every act's body; the action says which members
	// it takes, and the settlement refuses the others.
	settlementBody struct {
		Action        string                `json:"action"`
		ParticipantID string                `json:"participantId"`
		Terms         *settlementTermsInput `json:"terms"`
		TermsDigest   string                `json:"termsDigest"`
	}
	settlementTermsInput struct {
		Remedies []award.Remedy `json:"remedies"`
		Text     string         `json:"text"`
	}
)

// settlementView is where the settlement stands, and in an act's answer
// the proposal it concerned and the events it recorded.
type settlementView struct {
	CaseID     string `json:"caseId"`
	CaseStatus string `json:"caseStatus"`
	// Stage is none, proposed, agreed or recorded.
	Stage      string         `json:"stage"`
	Proposals  []proposalView `json:"proposals"`
	AgreedAt   string         `json:"agreedAt,omitempty"`
	RecordedAt string         `json:"recordedAt,omitempty"`
	AwardHash  string         `json:"awardHash,omitempty"`
	ProposalID string         `json:"proposalId,omitempty"`
	LastSeq    int64          `json:"lastSequence"`
	Events     []eventRef     `json:"events,omitempty"`
}

type proposalView struct {
	ProposalID    string      `json:"proposalId"`
	Side          string      `json:"side"`
	ParticipantID string      `json:"participantId"`
	Terms         award.Terms `json:"terms"`
	TermsDigest   string      `json:"termsDigest"`
	ProposedAt    string      `json:"proposedAt"`
	Status        string      `json:"status"`
	AcceptedBy    string      `json:"acceptedBy,omitempty"`
	EndedAt       string      `json:"endedAt,omitempty"`
}

// toSettlementView is the settlement as cred sees it: the sides see every
// proposal; the tribunal, whose business the terms become only once the
// sides agree them, sees the accepted one alone.
func toSettlementView(cs procedure.Case, cred auth.Credential, lastSequence int64) settlementView {
	s := cs.Settlement
	v := settlementView{CaseID: cs.ID, CaseStatus: string(cs.Status()), Stage: string(s.Stage()), Proposals: []proposalView{},
		AgreedAt: ts(s.AgreedAt), RecordedAt: ts(s.RecordedAt), AwardHash: s.AwardHash, LastSeq: lastSequence}
	for _, p := range s.Proposals {
		if tribunalCredential(cred) && p.Status != settlement.ProposalAccepted {
			continue
		}
		terms := p.Terms
		if terms.Remedies == nil {
			terms.Remedies = []award.Remedy{}
		}
		v.Proposals = append(v.Proposals, proposalView{ProposalID: p.ID, Side: p.Side, ParticipantID: p.ParticipantID, Terms: terms,
			TermsDigest: p.TermsDigest, ProposedAt: ts(p.ProposedAt), Status: string(p.Status), AcceptedBy: p.AcceptedBy, EndedAt: ts(p.EndedAt)})
	}
	return v
}

func (h *handlers) getSettlement(c *gin.Context) {
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	private(c, toSettlementView(l.Case, cred, l.Sequence))
}

// settlementAct answers an act: a side's by the side the caller acts for,
// the record by the caller's tribunal credential. A proposal and a record
// create (201: a proposal, the consent award); an acceptance and a
// withdrawal answer 200.
func (h *handlers) settlementAct(c *gin.Context) {
	var b settlementBody
	if err := decodeOptional(c, &b); err != nil {
		_ = c.Error(err)
		return
	}
	a, err := b.act()
	if err != nil {
		_ = c.Error(err)
		return
	}
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	switch {
	case a.Kind == settlement.ActRecord && !tribunalCredential(cred):
		_ = c.Error(settlementRefusal(settlement.CodeNotTribunal, "the record is the reviewer's: only the reviewer assigned to case "+l.Case.ID+" records its settlement"))
		return
	case a.Kind == settlement.ActRecord:
		a.MemberID = cred.PublicID
	case tribunalCredential(cred):
		_ = c.Error(forbidden("A tribunal member acts for no side: the sides of case %s propose, accept and withdraw terms; the reviewer records them (action record).", l.Case.ID))
		return
	default:
		if a.Side, a.ParticipantID, err = h.evidenceActor(c, cred, l.Case, b.ParticipantID); err != nil {
			_ = c.Error(err)
			return
		}
	}
	res, out, err := h.settlement.Act(c.Request.Context(), l.Case.ID, a)
	if errors.Is(err, store.ErrNotFound) {
		err = notVisible(l.Case.ID)
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	h.logger.InfoContext(c.Request.Context(), "settlement act accepted", "case_id", l.Case.ID, "act", a.Kind, "proposal_id", out.ProposalID,
		"credential", cred.PublicID, "status", res.Case.Status())
	v := toSettlementView(res.Case, cred, res.FirstSequence+int64(len(res.Events))-1)
	v.ProposalID, v.Events = out.ProposalID, eventRefs(l.Case.ID, res.FirstSequence, res.Events)
	status := http.StatusOK
	if a.Kind == settlement.ActPropose || a.Kind == settlement.ActRecord {
		status = http.StatusCreated
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(status, gin.H{"data": v, "requestId": requestid.Get(c)})
}

// act reads the body's action and its members; the settlement checks
// their shape.
func (b settlementBody) act() (settlement.Act, error) {
	a := settlement.Act{Kind: settlement.ActKind(b.Action), TermsDigest: b.TermsDigest}
	if b.Terms != nil {
		a.Terms = award.Terms{Remedies: b.Terms.Remedies, Text: b.Terms.Text}
	}
	switch {
	case !slices.Contains(settlement.Acts, a.Kind):
		return a, settlementRefusal(settlement.CodeInvalidAct, "action must be one of propose, accept, withdraw, record")
	case (a.Kind == settlement.ActPropose) != (b.Terms != nil):
		return a, settlementRefusal(settlement.CodeInvalidAct, string(a.Kind)+": terms (remedies and text) come with a proposal, and only with one")
	case a.Kind == settlement.ActRecord && b.ParticipantID != "":
		return a, settlementRefusal(settlement.CodeInvalidAct, "record: the reviewer acts for no participant")
	}
	return a, nil
}

func settlementRefusal(code settlement.RefusalCode, detail string) error {
	return &settlement.RefusalError{Code: code, Detail: detail}
}
