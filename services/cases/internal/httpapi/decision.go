package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// The decision's reads: where it stands (decision-status and every
// decision act's answer), the tribunal's review package, the runs, the
// challenges, the rulings, the pre-award review, the evaluation.

// AwardNotIssued answers an award read before the award exists.
var AwardNotIssued = problem.Code{Name: "award_not_issued", Status: http.StatusNotFound, Title: "Award not issued"}

// decisionView says where the decision stands and what it waits for.
type decisionView struct {
	CaseID     string `json:"caseId"`
	CaseStatus string `json:"caseStatus"`
	// Decision is not_decided, evaluation_issued or awarded; a terminated
	// case is never decided (decisionExpected false).
	Decision         string `json:"decision"`
	DecisionExpected bool   `json:"decisionExpected"`
	// Stage is the decision's stage (docs/tribunal.md), "unassigned"
	// before the tribunal is.
	Stage string `json:"stage"`
	// WaitingFor names what the decision waits for next.
	WaitingFor        string              `json:"waitingFor,omitempty"`
	DeadlineAt        string              `json:"deadlineAt,omitempty"`
	Tribunal          *tribunalView       `json:"tribunal,omitempty"`
	ChallengeDeadline string              `json:"challengeDeadline,omitempty"`
	Run               *runView            `json:"run,omitempty"`
	PreAwardReview    *preAwardReviewView `json:"preAwardReview,omitempty"`
	AwardHash         string              `json:"awardHash,omitempty"`
	// Final says the served award is final (docs/after-award.md): its
	// request window lapsed with nothing pending, or every side waived
	// its recourse. Until then, RequestDeadline ends the window.
	Final           bool       `json:"final"`
	FinalAt         string     `json:"finalAt,omitempty"`
	RequestDeadline string     `json:"requestDeadline,omitempty"`
	LastSequence    int64      `json:"lastSequence"`
	Events          []eventRef `json:"events,omitempty"`
}

type tribunalView struct {
	Adjudicator *memberView `json:"adjudicator,omitempty"`
	Reviewer    *memberView `json:"reviewer,omitempty"`
}

type memberView struct {
	MemberID            string               `json:"memberId"`
	Role                string               `json:"role"`
	AssignedAt          string               `json:"assignedAt"`
	Configuration       *award.Configuration `json:"configuration,omitempty"`
	ConfigurationDigest string               `json:"configurationDigest,omitempty"`
}

type runView struct {
	RunID               string          `json:"runId"`
	Number              int             `json:"number"`
	Status              string          `json:"status"`
	AdjudicatorID       string          `json:"adjudicatorId"`
	ConfigurationDigest string          `json:"configurationDigest"`
	InputDigest         string          `json:"inputDigest"`
	OutputDigest        string          `json:"outputDigest,omitempty"`
	Instructions        string          `json:"instructions,omitempty"`
	RequestedAt         string          `json:"requestedAt"`
	FiledAt             string          `json:"filedAt,omitempty"`
	AttentionReason     string          `json:"attentionReason,omitempty"`
	Proposal            *award.Proposal `json:"proposal,omitempty"`
}

type preAwardReviewView struct {
	OpenedAt          string             `json:"openedAt"`
	DeadlineAt        string             `json:"deadlineAt"`
	ClosedAt          string             `json:"closedAt,omitempty"`
	DispositiveDigest string             `json:"dispositiveDigest"`
	Outcome           string             `json:"outcome"`
	Remedies          []award.Remedy     `json:"remedies"`
	Answers           []clericalNoteView `json:"answers"`
}

type clericalNoteView struct {
	Side           string   `json:"side"`
	ClericalErrors []string `json:"clericalErrors"`
	AnsweredAt     string   `json:"answeredAt"`
}

func toMemberView(m *tribunal.Member) *memberView {
	if m == nil {
		return nil
	}
	return &memberView{MemberID: m.CredentialID, Role: string(m.Role), AssignedAt: ts(m.AssignedAt), Configuration: m.Configuration, ConfigurationDigest: m.ConfigurationDigest}
}

func toRunView(r tribunal.Run, withProposal bool) runView {
	v := runView{RunID: r.ID, Number: r.Number, Status: string(r.Status), AdjudicatorID: r.AdjudicatorID, ConfigurationDigest: r.ConfigurationDigest,
		InputDigest: r.InputDigest, OutputDigest: r.OutputDigest, Instructions: r.Instructions, RequestedAt: ts(r.RequestedAt),
		FiledAt: ts(r.FiledAt), AttentionReason: r.AttentionReason}
	if withProposal {
		v.Proposal = r.Proposal
	}
	return v
}

// toDecisionView is the decision as both sides and the tribunal see it;
// the proposal itself is the tribunal's until the pre-award review shows
// its dispositive part.
func toDecisionView(cs procedure.Case, lastSequence int64) decisionView {
	t := cs.Tribunal
	v := decisionView{CaseID: cs.ID, CaseStatus: string(cs.Status()), Decision: "not_decided", Stage: string(t.Stage), LastSequence: lastSequence}
	if t.Stage == tribunal.StageUnassigned {
		v.Stage = "unassigned"
	}
	if t.Adjudicator != nil || t.Reviewer != nil {
		// A settled case may have a reviewer alone (docs/settlement.md).
		v.Tribunal = &tribunalView{Adjudicator: toMemberView(t.Adjudicator), Reviewer: toMemberView(t.Reviewer)}
		v.ChallengeDeadline = ts(t.ChallengeDeadline)
	}
	if r, ok := t.CurrentRun(); ok {
		rv := toRunView(r, false)
		v.Run = &rv
	}
	v.PreAwardReview = toPreAwardView(t)
	v.DecisionExpected = true
	switch {
	case cs.Closed == procedure.StatusTerminated:
		v.DecisionExpected = false
	case t.Awarded():
		v.Decision, v.AwardHash = "awarded", t.Award.AwardHash
		v.Final, v.FinalAt = cs.AfterAward.Final(), ts(cs.AfterAward.FinalAt)
		if !v.Final {
			v.WaitingFor, v.RequestDeadline = "award_finality", ts(afteraward.FinalityDeadline(cs.AfterAwardFacts()))
			if _, pending := cs.AfterAward.Pending(); pending {
				v.WaitingFor = "post_award_request_decision"
			}
			if _, open := cs.AfterAward.OpenAppeal(); open {
				v.WaitingFor = "appeal"
			}
		}
	case cs.Settlement.Agreed():
		// Nobody decides a settled case: its reviewer records the terms.
		v.WaitingFor = "consent_award"
		if t.Reviewer == nil {
			v.WaitingFor = "tribunal_assignment"
		}
	case !t.Assigned():
		if cs.Closed == "" && cs.Mode != procedure.ModeEvaluation {
			v.WaitingFor, v.DeadlineAt = "record_closing", ts(cs.Stage.DeadlineAt)
		} else {
			v.WaitingFor = "tribunal_assignment"
		}
	default:
		v.WaitingFor, v.DeadlineAt = waitingFor(cs)
		if t.Stage == tribunal.StageEvaluationIssued {
			v.Decision = "evaluation_issued"
		}
	}
	return v
}

// waitingFor names who acts next in the decision, and by when.
func waitingFor(cs procedure.Case) (string, string) {
	t := cs.Tribunal
	switch t.Stage {
	case tribunal.StageAwaitingRecord:
		return "record_closing", ts(cs.Stage.DeadlineAt)
	case tribunal.StageAdjudication:
		return "adjudicator_proposal", ""
	case tribunal.StageHumanAttention:
		return "reviewer_resume", ""
	case tribunal.StageReview:
		return "reviewer", ""
	case tribunal.StagePreAwardReview:
		return "pre_award_review", ts(t.PreAward.DeadlineAt)
	case tribunal.StageEvaluationIssued:
		return "evaluation_acceptance", ts(t.Evaluation.DeadlineAt)
	}
	return "", ""
}

func toPreAwardView(t tribunal.State) *preAwardReviewView {
	pa := t.PreAward
	if pa == nil {
		return nil
	}
	d, _ := t.Dispositive()
	v := &preAwardReviewView{OpenedAt: ts(pa.OpenedAt), DeadlineAt: ts(pa.DeadlineAt), ClosedAt: ts(pa.ClosedAt),
		DispositiveDigest: pa.DispositiveDigest, Outcome: d.Outcome, Remedies: d.Remedies, Answers: []clericalNoteView{}}
	if v.Remedies == nil {
		v.Remedies = []award.Remedy{}
	}
	for _, n := range pa.Notes {
		v.Answers = append(v.Answers, clericalNoteView{Side: n.Side, ClericalErrors: n.Errors, AnsweredAt: ts(n.AnsweredAt)})
	}
	return v
}

func (h *handlers) decisionStatus(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	private(c, toDecisionView(l.Case, l.Sequence))
}

// reviewPackage is what the tribunal reads to decide: the claim, the
// question, the parties, the confirmed record with its texts and digest,
// the pinned configuration, the open run and the proposal.
type reviewPackageView struct {
	CaseID              string               `json:"caseId"`
	ExternalCaseID      string               `json:"externalCaseId"`
	CaseMode            string               `json:"caseMode"`
	Stage               string               `json:"stage"`
	Claim               claimView            `json:"claim"`
	Evaluation          *award.Evaluation    `json:"evaluation,omitempty"`
	Parties             []award.Party        `json:"parties"`
	Record              recordView           `json:"record"`
	Configuration       *award.Configuration `json:"configuration,omitempty"`
	ConfigurationDigest string               `json:"configurationDigest,omitempty"`
	Run                 *runView             `json:"run,omitempty"`
	Proposal            *award.Proposal      `json:"proposal,omitempty"`
	Challenges          []challengeView      `json:"challenges"`
}

type claimView struct {
	AmountMinor int64  `json:"amountMinor"`
	Currency    string `json:"currency"`
	Remedy      string `json:"remedy"`
	Summary     string `json:"summary"`
}

type recordView struct {
	Digest string           `json:"digest"`
	Closed bool             `json:"closed"`
	Items  []recordItemView `json:"items"`
}

type recordItemView struct {
	ItemID string `json:"itemId"`
	Side   string `json:"side"`
	Kind   string `json:"kind"`
	Digest string `json:"digest"`
	Text   string `json:"text"`
}

func (h *handlers) reviewPackage(c *gin.Context) {
	cs, ok := h.loadForTribunal(c)
	if !ok {
		return
	}
	f := cs.TribunalFacts()
	v := reviewPackageView{CaseID: cs.ID, ExternalCaseID: cs.ExternalID, CaseMode: string(cs.Mode), Stage: string(cs.Tribunal.Stage),
		Claim:      claimView{cs.Claim.AmountMinor, cs.Claim.Currency, cs.Claim.Remedy, cs.Claim.Summary},
		Evaluation: f.EvaluationDefinition, Parties: []award.Party{}, Challenges: toChallengeViews(cs.Tribunal),
		Record: recordView{Digest: tribunal.RecordDigest(f.Record), Closed: f.RecordClosed, Items: []recordItemView{}}}
	for _, p := range f.Parties {
		if p.Joined {
			v.Parties = append(v.Parties, award.Party{Side: p.Side, ParticipantID: p.ParticipantID, PrincipalID: p.PrincipalID})
		}
	}
	for _, it := range f.Record {
		text, _, err := h.cases.Document(c.Request.Context(), cs.ID, it.Digest)
		if err != nil {
			_ = c.Error(err)
			return
		}
		kind := "submission"
		if it.ID == "answer" {
			kind = "answer"
		}
		v.Record.Items = append(v.Record.Items, recordItemView{ItemID: it.ID, Side: it.Side, Kind: kind, Digest: it.Digest, Text: string(text)})
	}
	if a := cs.Tribunal.Adjudicator; a != nil {
		v.Configuration, v.ConfigurationDigest = a.Configuration, a.ConfigurationDigest
	}
	if r, ok := cs.Tribunal.CurrentRun(); ok {
		rv := toRunView(r, false)
		v.Run, v.Proposal = &rv, r.Proposal
	}
	private(c, v)
}

// loadForTribunal loads the case for an assigned tribunal member.
func (h *handlers) loadForTribunal(c *gin.Context) (procedure.Case, bool) {
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return procedure.Case{}, false
	}
	if !tribunalCredential(cred) {
		_ = c.Error(h.tribunalOnly(l.Case))
		return procedure.Case{}, false
	}
	return l.Case, true
}

// runs lists the runs: to the tribunal with their proposals, to the sides
// with the configuration and digests only (the proposal is the tribunal's
// draft; the award is what the sides get).
func (h *handlers) runs(c *gin.Context) {
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	out := []runView{}
	for _, r := range l.Case.Tribunal.Runs {
		out = append(out, toRunView(r, tribunalCredential(cred)))
	}
	private(c, gin.H{"caseId": l.Case.ID, "runs": out})
}

type challengeView struct {
	ChallengeID         string `json:"challengeId"`
	Side                string `json:"side"`
	Grounds             string `json:"grounds"`
	Status              string `json:"status"`
	FiledAt             string `json:"filedAt"`
	Reasons             string `json:"reasons,omitempty"`
	ResolvedAt          string `json:"resolvedAt,omitempty"`
	ConfigurationDigest string `json:"configurationDigest"`
}

func toChallengeViews(t tribunal.State) []challengeView {
	out := []challengeView{}
	for _, ch := range t.Challenges {
		out = append(out, challengeView{ch.ID, ch.Side, ch.Grounds, string(ch.Status), ts(ch.FiledAt), ch.Reasons, ts(ch.ResolvedAt), ch.ConfigurationDigest})
	}
	return out
}

func (h *handlers) listChallenges(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	t := l.Case.Tribunal
	v := gin.H{"caseId": l.Case.ID, "challenges": toChallengeViews(t)}
	if t.Adjudicator != nil {
		v["configuration"], v["configurationDigest"] = t.Adjudicator.Configuration, t.Adjudicator.ConfigurationDigest
		v["challengeDeadline"] = ts(t.ChallengeDeadline)
	}
	private(c, v)
}

func (h *handlers) listRulings(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	out := []gin.H{}
	for _, r := range l.Case.Tribunal.Rulings {
		out = append(out, gin.H{"rulingId": r.ID, "text": r.Text, "issuedAt": ts(r.IssuedAt)})
	}
	private(c, gin.H{"caseId": l.Case.ID, "rulings": out})
}

func (h *handlers) getPreAwardReview(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	v := toPreAwardView(l.Case.Tribunal)
	if v == nil {
		_ = c.Error(tribunalRefusal(tribunal.CodeDecisionStage, "the reviewer has not opened the pre-award review of case "+l.Case.ID))
		return
	}
	private(c, v)
}

// evaluationView is an evaluation case's question and its result.
type evaluationView struct {
	CaseID       string            `json:"caseId"`
	Definition   *award.Evaluation `json:"definition"`
	ReviewPolicy string            `json:"reviewPolicy"`
	Status       string            `json:"status"`
	Outcome      string            `json:"outcome,omitempty"`
	IssuedAt     string            `json:"issuedAt,omitempty"`
	DeadlineAt   string            `json:"deadlineAt,omitempty"`
	Acceptances  []gin.H           `json:"acceptances"`
	Deemed       bool              `json:"deemed"`
	AwardHash    string            `json:"awardHash,omitempty"`
}

func (h *handlers) getEvaluation(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	cs := l.Case
	if cs.Mode != procedure.ModeEvaluation {
		_ = c.Error(tribunalRefusal(tribunal.CodeNotEvaluation, "case "+cs.ID+" is a proceeding, not an evaluation"))
		return
	}
	f := cs.TribunalFacts()
	v := evaluationView{CaseID: cs.ID, Definition: f.EvaluationDefinition, ReviewPolicy: f.ReviewPolicy, Status: "pending", Acceptances: []gin.H{}}
	t := cs.Tribunal
	if e := t.Evaluation; e != nil {
		v.Status, v.Outcome, v.IssuedAt, v.DeadlineAt, v.Deemed = "issued", e.Outcome, ts(e.IssuedAt), ts(e.DeadlineAt), e.Deemed
		for _, a := range e.Acceptances {
			v.Acceptances = append(v.Acceptances, gin.H{"side": a.Side, "acceptedAt": ts(a.AcceptedAt)})
		}
	}
	if t.Awarded() {
		v.Status, v.Outcome, v.AwardHash = "accepted", t.Award.Outcome, t.Award.AwardHash
		if v.IssuedAt == "" {
			v.IssuedAt = ts(t.Award.IssuedAt)
		}
	}
	private(c, v)
}

// acceptEvaluation refuses on a proceeding before the act reaches the
// decision (whose stage check would say less).
func (h *handlers) acceptEvaluation(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err == nil && l.Case.Mode != procedure.ModeEvaluation {
		err = tribunalRefusal(tribunal.CodeNotEvaluation, "case "+l.Case.ID+" is a proceeding, not an evaluation")
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	h.sideDecisionAct(tribunal.ActAcceptEvaluation, http.StatusOK, readAccept)(c)
}
