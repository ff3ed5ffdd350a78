package httpapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
	"github.com/pcourt/pcourt/services/cases/internal/afterawardflow"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// After the award (internal/afteraward, acted on through afterawardflow):
// the sides' post-award requests and the reviewer's decision on them, the
// waiver of recourse (the website's consent), finality, and executions;
// appeals are in appeals.go.
// docs/after-award.md describes each route.

// ExecutionReportNotGranted answers a party's report of its own execution
// by a credential without the explicit execution:report grant of its side.
var ExecutionReportNotGranted = problem.Code{Name: "execution_report_not_granted", Status: http.StatusForbidden, Title: "Execution report not granted"}

// ExecutionReportResource is the resource whose membership grants a
// side's credential (or agent identity) the right to report that the side
// executed the award itself: `pcadm grant --resource
// case:<id>:execution-report --side <side> ...`. A case membership does
// not include it: existing grants are not widened (spec, "Other access
// paths").
func ExecutionReportResource(caseID string) string { return resource(caseID) + ":execution-report" }

type (
	postAwardRequestBody struct {
		ParticipantID string `json:"participantId"`
		Kind          string `json:"kind"`
		Text          string `json:"text"`
	}
	// websiteRequestBody is the website's correct and additional-award
	// controls: the kind is the route's.
	websiteRequestBody struct {
		ParticipantID string `json:"participantId"`
		Text          string `json:"text"`
	}
	requestDecisionBody struct {
		RequestID        string          `json:"requestId"`
		Decision         string          `json:"decision"`
		Reasons          string          `json:"reasons"`
		CorrectedReasons string          `json:"correctedReasons"`
		Remedies         *[]award.Remedy `json:"remedies"`
		Interpretation   string          `json:"interpretation"`
	}
	waiverBody struct {
		ParticipantID string `json:"participantId"`
	}
	executionBody struct {
		ParticipantID string              `json:"participantId"`
		Mode          string              `json:"mode"`
		Action        string              `json:"action"`
		AwardHash     string              `json:"awardHash"`
		RemedyIndex   int                 `json:"remedyIndex"`
		Payment       *afteraward.Payment `json:"payment"`
		Reference     string              `json:"reference"`
		Note          string              `json:"note"`
	}
)

// postAwardView is where the award stands after its issue: finality, the
// request window, the waivers, the requests and the awards it amended.
type postAwardView struct {
	CaseID          string        `json:"caseId"`
	AwardHash       string        `json:"awardHash"`
	Final           bool          `json:"final"`
	FinalAt         string        `json:"finalAt,omitempty"`
	FinalBy         string        `json:"finalBy,omitempty"`
	RequestDeadline string        `json:"requestDeadline"`
	Waivers         []waiverView  `json:"waivers"`
	Requests        []requestView `json:"requests"`
	Superseded      []string      `json:"supersededAwardHashes"`
	LastSequence    int64         `json:"lastSequence"`
	Events          []eventRef    `json:"events,omitempty"`
}

type waiverView struct {
	Side     string `json:"side"`
	WaivedAt string `json:"waivedAt"`
}

type requestView struct {
	RequestID       string `json:"requestId"`
	Kind            string `json:"kind"`
	Side            string `json:"side"`
	Text            string `json:"text"`
	AwardHash       string `json:"awardHash"`
	FiledAt         string `json:"filedAt"`
	Status          string `json:"status"`
	Reasons         string `json:"reasons,omitempty"`
	DecidedAt       string `json:"decidedAt,omitempty"`
	IssuedAwardHash string `json:"issuedAwardHash,omitempty"`
}

func toPostAwardView(cs procedure.Case, lastSequence int64) postAwardView {
	s, f := cs.AfterAward, cs.AfterAwardFacts()
	v := postAwardView{CaseID: cs.ID, AwardHash: f.Award.AwardHash, Final: s.Final(), FinalAt: ts(s.FinalAt), FinalBy: s.FinalBy,
		RequestDeadline: ts(afteraward.RequestDeadline(f)), Waivers: []waiverView{}, Requests: []requestView{}, Superseded: []string{},
		LastSequence: lastSequence}
	for _, w := range s.Waivers {
		v.Waivers = append(v.Waivers, waiverView{Side: w.Side, WaivedAt: ts(w.WaivedAt)})
	}
	for _, r := range s.Requests {
		v.Requests = append(v.Requests, requestView{RequestID: r.ID, Kind: string(r.Kind), Side: r.Side, Text: r.Text, AwardHash: r.AwardHash,
			FiledAt: ts(r.FiledAt), Status: string(r.Status), Reasons: r.Reasons, DecidedAt: ts(r.DecidedAt), IssuedAwardHash: r.IssuedAwardHash})
	}
	for _, a := range s.Superseded {
		v.Superseded = append(v.Superseded, a.AwardHash)
	}
	return v
}

// awarded loads the case and answers 404 award_not_issued before its award.
func (h *handlers) awarded(c *gin.Context) (auth.Credential, store.Loaded, bool) {
	cred, l, err := h.load(c, caseID(c))
	if err == nil && l.Case.Tribunal.Award == nil {
		err = problem.Newf(AwardNotIssued, "Case %s has no award yet; GET decision-status says what the decision waits for.", l.Case.ID)
	}
	if err != nil {
		_ = c.Error(err)
		return cred, l, false
	}
	return cred, l, true
}

func (h *handlers) getPostAward(c *gin.Context) {
	if _, l, ok := h.awarded(c); ok {
		private(c, toPostAwardView(l.Case, l.Sequence))
	}
}

// afterAwardSideAct answers a side's act: read builds it from the body and
// names the participant; the caller must act for it.
func (h *handlers) afterAwardSideAct(status int, read func(c *gin.Context, a *afteraward.Act) (participantID string, err error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		var a afteraward.Act
		participantID, err := read(c, &a)
		if err != nil {
			_ = c.Error(err)
			return
		}
		cred, l, err := h.load(c, caseID(c))
		if err != nil {
			_ = c.Error(err)
			return
		}
		if a.Side, a.ParticipantID, err = h.evidenceActor(c, cred, l.Case, participantID); err != nil {
			_ = c.Error(err)
			return
		}
		h.afterAwardAct(c, cred, l.Case, a, status)
	}
}

// decideRequest is the reviewer's decision on a post-award request.
func (h *handlers) decideRequest(c *gin.Context) {
	var b requestDecisionBody
	if err := decodeOptional(c, &b); err != nil {
		_ = c.Error(err)
		return
	}
	a := afteraward.Act{Kind: afteraward.ActDecideRequest, RequestID: b.RequestID, Reasons: b.Reasons,
		CorrectedReasons: b.CorrectedReasons, Interpretation: b.Interpretation}
	switch b.Decision {
	case "grant":
		a.Grant = true
	case "deny":
	default:
		_ = c.Error(afterAwardInvalid("decision must be grant or deny"))
		return
	}
	if b.Remedies != nil {
		a.Remedies = append([]award.Remedy{}, *b.Remedies...)
	}
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
	h.afterAwardAct(c, cred, l.Case, a, http.StatusOK)
}

func (h *handlers) afterAwardAct(c *gin.Context, cred auth.Credential, cs procedure.Case, a afteraward.Act, status int) {
	res, _, err := h.afterAward.Act(c.Request.Context(), cs.ID, a)
	if errors.Is(err, store.ErrNotFound) {
		err = notVisible(cs.ID)
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	h.logger.InfoContext(c.Request.Context(), "after-award act accepted", "case_id", cs.ID, "act", a.Kind,
		"credential", cred.PublicID)
	v := toPostAwardView(res.Case, res.FirstSequence+int64(len(res.Events))-1)
	v.Events = eventRefs(cs.ID, res.FirstSequence, res.Events)
	c.Header("Cache-Control", "no-store")
	c.JSON(status, gin.H{"data": v, "requestId": requestid.Get(c)})
}

func afterAwardInvalid(detail string) error {
	return &afteraward.RefusalError{Code: afteraward.CodeInvalidAct, Detail: detail}
}

// The readers of the sides' acts.

func readPostAwardRequest(c *gin.Context, a *afteraward.Act) (string, error) {
	var b postAwardRequestBody
	err := decodeOptional(c, &b)
	a.Kind, a.RequestKind, a.Text = afteraward.ActFileRequest, afteraward.RequestKind(b.Kind), b.Text
	return b.ParticipantID, err
}

// readRequestOfKind reads the website control of one kind of request.
func readRequestOfKind(kind afteraward.RequestKind) func(c *gin.Context, a *afteraward.Act) (string, error) {
	return func(c *gin.Context, a *afteraward.Act) (string, error) {
		var b websiteRequestBody
		err := decodeOptional(c, &b)
		a.Kind, a.RequestKind, a.Text = afteraward.ActFileRequest, kind, b.Text
		return b.ParticipantID, err
	}
}

func readWaiver(c *gin.Context, a *afteraward.Act) (string, error) {
	var b waiverBody
	err := decodeOptional(c, &b)
	a.Kind = afteraward.ActWaive
	return b.ParticipantID, err
}

// executionView is one execution as both sides see it.
type executionView struct {
	ExecutionID string              `json:"executionId"`
	CaseID      string              `json:"caseId"`
	Mode        string              `json:"mode"`
	Action      string              `json:"action"`
	AwardHash   string              `json:"awardHash"`
	RemedyIndex int                 `json:"remedyIndex"`
	Side        string              `json:"side"`
	AmountMinor int64               `json:"amountMinor,omitempty"`
	Currency    string              `json:"currency,omitempty"`
	Payment     *afteraward.Payment `json:"payment,omitempty"`
	Status      string              `json:"status"`
	CreatedAt   string              `json:"createdAt"`
	Attempts    []attemptView       `json:"attempts"`
	Completion  *completionView     `json:"completion,omitempty"`
	Events      []eventRef          `json:"events,omitempty"`
}

type attemptView struct {
	Number  int    `json:"number"`
	At      string `json:"at"`
	Outcome string `json:"outcome"`
	Detail  string `json:"detail,omitempty"`
}

type completionView struct {
	Transaction  string `json:"transaction,omitempty"`
	Network      string `json:"network,omitempty"`
	Asset        string `json:"asset,omitempty"`
	From         string `json:"from,omitempty"`
	To           string `json:"to,omitempty"`
	AmountAtomic string `json:"amountAtomic,omitempty"`
	Reference    string `json:"reference,omitempty"`
	Note         string `json:"note,omitempty"`
	CompletedAt  string `json:"completedAt"`
}

func toExecutionView(caseID string, e afteraward.Execution) executionView {
	v := executionView{ExecutionID: e.ID, CaseID: caseID, Mode: string(e.Mode), Action: e.Action, AwardHash: e.AwardHash, RemedyIndex: e.RemedyIndex,
		Side: e.Side, AmountMinor: e.AmountMinor, Currency: e.Currency, Payment: e.Payment, Status: string(e.Status), CreatedAt: ts(e.CreatedAt),
		Attempts: []attemptView{}}
	for _, a := range e.Attempts {
		v.Attempts = append(v.Attempts, attemptView{Number: a.Number, At: ts(a.At), Outcome: a.Outcome, Detail: a.Detail})
	}
	if d := e.Completion; d != nil {
		v.Completion = &completionView{Transaction: d.Transaction, Network: d.Network, Asset: d.Asset, From: d.From, To: d.To,
			AmountAtomic: d.AmountAtomic, Reference: d.Reference, Note: d.Note, CompletedAt: ts(d.CompletedAt)}
	}
	return v
}

func (h *handlers) listExecutions(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	out := []executionView{}
	for _, e := range l.Case.AfterAward.Executions {
		out = append(out, toExecutionView(l.Case.ID, e))
	}
	private(c, gin.H{"caseId": l.Case.ID, "executions": out})
}

// getExecution is GET /api/executions/{id}: the id names its case, whose
// visibility decides (another partner's gets the same 404 as no such id).
func (h *handlers) getExecution(c *gin.Context) {
	id := c.Param("executionId")
	notFound := problem.Newf(problem.NotFound, "No execution %s is visible to this credential.", problem.Clip(id))
	cs, ok := afteraward.CaseOfExecution(id)
	if !ok || !procedure.ValidCaseID(cs) {
		_ = c.Error(notFound)
		return
	}
	_, l, err := h.load(c, cs)
	if err != nil {
		var p *problem.Error
		if errors.As(err, &p) && p.Code == CaseNotFoundOrOpening {
			err = notFound
		}
		_ = c.Error(err)
		return
	}
	e, found := l.Case.AfterAward.Execution(id)
	if !found {
		_ = c.Error(notFound)
		return
	}
	private(c, toExecutionView(l.Case.ID, e))
}

// executionCommand reads an execution command from the body (read) and
// runs it: a new execution answers 201, the same command again (a failed
// execution retried, or a completed one replayed by the journal) its
// current state; a failed transfer answers 502 execution_failed, which
// the journal does not keep, so the same command runs again.
func (h *handlers) executionCommand(read func(c *gin.Context) (executionBody, error), render func(c *gin.Context, status int, cs string, e afteraward.Execution, res caseflow.Result)) gin.HandlerFunc {
	return func(c *gin.Context) {
		b, err := read(c)
		if err != nil {
			_ = c.Error(err)
			return
		}
		cred, l, err := h.load(c, caseID(c))
		if err != nil {
			_ = c.Error(err)
			return
		}
		a := afteraward.Act{Kind: afteraward.ActExecute, Mode: afteraward.Mode(b.Mode), Action: b.Action, AwardHash: b.AwardHash,
			RemedyIndex: b.RemedyIndex, Payment: b.Payment, Reference: b.Reference, Note: b.Note,
			KeyDigest: afterawardflow.KeyDigest(cred.PublicID, c.GetHeader(idempotency.Header))}
		if a.Side, a.ParticipantID, err = h.evidenceActor(c, cred, l.Case, b.ParticipantID); err != nil {
			_ = c.Error(err)
			return
		}
		if p := a.Payment; p != nil && !x402.NetworkAllowed(l.Case.Environment, p.Network) {
			_ = c.Error(afterAwardInvalid(fmt.Sprintf("payment.network %q is not a network of the %s environment", p.Network, l.Case.Environment)))
			return
		}
		if a.Mode == afteraward.ModePartyReported {
			if err := h.mayReport(c, cred, l.Case.ID, a.Side); err != nil {
				_ = c.Error(err)
				return
			}
		}
		res, e, err := h.afterAward.Execute(c.Request.Context(), l.Case.ID, a)
		if errors.Is(err, store.ErrNotFound) {
			err = notVisible(l.Case.ID)
		}
		if err != nil {
			_ = c.Error(err)
			return
		}
		h.logger.InfoContext(c.Request.Context(), "execution accepted", "case_id", l.Case.ID, "execution_id", e.ID, "mode", e.Mode,
			"status", e.Status, "credential", cred.PublicID)
		status := http.StatusCreated
		if len(e.Attempts) > 1 || (len(res.Events) > 0 && res.Events[0].Type != procedure.EventType(afteraward.EventExecutionRequested)) {
			status = http.StatusOK
		}
		c.Header("Cache-Control", "no-store")
		render(c, status, l.Case.ID, e, res)
	}
}

// mayReport checks the explicit execution:report grant of side.
//
// An account reports for the side it takes part as with its case
// membership, which the actor check found, and the executions:report
// scope, which its route requires and no other scope implies (the spec's
// "newly approved" scope); a partner's case membership does not include
// the grant.
func (h *handlers) mayReport(c *gin.Context, cred auth.Credential, caseID, side string) error {
	if cred.ForAccount() {
		return nil
	}
	members, err := h.credentials.Memberships(c.Request.Context(), ExecutionReportResource(caseID))
	if err != nil {
		return err
	}
	for _, m := range members {
		if string(m.Side) == side && m.Subject.Admits(cred) {
			return nil
		}
	}
	return problem.Newf(ExecutionReportNotGranted, "Reporting that the %s side executed the award of case %s needs the explicit execution:report grant of that side (membership of %s); a case membership does not include it.",
		side, caseID, ExecutionReportResource(caseID))
}

func readExecution(c *gin.Context) (executionBody, error) {
	var b executionBody
	if err := decodeOptional(c, &b); err != nil {
		return b, err
	}
	if c.GetHeader(idempotency.Header) == "" {
		return b, afterAwardInvalid("an execution command needs an Idempotency-Key: it is the execution's identity, and the same key retries a failed one")
	}
	return b, nil
}

func renderExecution(c *gin.Context, status int, cs string, e afteraward.Execution, res caseflow.Result) {
	v := toExecutionView(cs, e)
	v.Events = eventRefs(cs, res.FirstSequence, res.Events)
	c.JSON(status, gin.H{"data": v, "requestId": requestid.Get(c)})
}

// The historical settlement-executions alias keeps its input and its
// answer: a digest-bound command naming the settlement rail, answered as
// a settlement execution. Its rails are the execution modes'.
var railModes = map[string]afteraward.Mode{
	"x402r":             afteraward.ModeX402rRefund,
	"bilateral_escrow":  afteraward.ModeEscrowRelease,
	"acp":               afteraward.ModeProcessorPayment,
	"processor_connect": afteraward.ModeProcessorPayment,
	"partner_executes":  afteraward.ModePartyReported,
}

type settlementExecutionBody struct {
	ParticipantID string              `json:"participantId"`
	AwardDigest   string              `json:"awardDigest"`
	Rail          string              `json:"rail"`
	RemedyIndex   int                 `json:"remedyIndex"`
	Payment       *afteraward.Payment `json:"payment"`
	Reference     string              `json:"reference"`
	Note          string              `json:"note"`
}

// settlementExecutionView is the historical answer.
type settlementExecutionView struct {
	SettlementExecutionID string `json:"settlementExecutionId"`
	CaseID                string `json:"caseId"`
	Rail                  string `json:"rail"`
	AwardDigest           string `json:"awardDigest"`
	RemedyIndex           int    `json:"remedyIndex"`
	Status                string `json:"status"`
	Transaction           string `json:"transaction,omitempty"`
	Reference             string `json:"reference,omitempty"`
	CompletedAt           string `json:"completedAt,omitempty"`
}

func toSettlementExecutionView(cs string, e afteraward.Execution) settlementExecutionView {
	v := settlementExecutionView{SettlementExecutionID: e.ID, CaseID: cs, AwardDigest: e.AwardHash, RemedyIndex: e.RemedyIndex, Status: string(e.Status)}
	for rail, m := range railModes {
		if m == e.Mode && (v.Rail == "" || rail < v.Rail) {
			v.Rail = rail
		}
	}
	if d := e.Completion; d != nil {
		v.Transaction, v.Reference, v.CompletedAt = d.Transaction, d.Reference, ts(d.CompletedAt)
	}
	return v
}

func readSettlementExecution(c *gin.Context) (executionBody, error) {
	var b settlementExecutionBody
	if err := decodeOptional(c, &b); err != nil {
		return executionBody{}, err
	}
	mode, ok := railModes[b.Rail]
	if !ok {
		return executionBody{}, afterAwardInvalid("rail must be one of x402r, bilateral_escrow, acp, processor_connect, partner_executes")
	}
	if c.GetHeader(idempotency.Header) == "" {
		return executionBody{}, afterAwardInvalid("a settlement execution needs an Idempotency-Key: it is the execution's identity, and the same key retries a failed one")
	}
	return executionBody{ParticipantID: b.ParticipantID, Mode: string(mode), Action: afteraward.Action(mode), AwardHash: b.AwardDigest,
		RemedyIndex: b.RemedyIndex, Payment: b.Payment, Reference: b.Reference, Note: b.Note}, nil
}

func renderSettlementExecution(c *gin.Context, status int, cs string, e afteraward.Execution, _ caseflow.Result) {
	c.JSON(status, gin.H{"data": toSettlementExecutionView(cs, e), "requestId": requestid.Get(c)})
}

func (h *handlers) listSettlementExecutions(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	out := []settlementExecutionView{}
	for _, e := range l.Case.AfterAward.Executions {
		out = append(out, toSettlementExecutionView(l.Case.ID, e))
	}
	private(c, gin.H{"settlementExecutions": out})
}
