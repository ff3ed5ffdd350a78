package httpapi

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// The decision's commands: the tribunal members' acts (docs/tribunal.md
// lists each route with its act) and the sides' (challenges, pre-award
// answers, acceptance). Each builds a tribunal.Act from the caller and the
// body, and tribunalflow decides and stores it.

// tribunalBody is the union of the decision commands' bodies; each route
// reads only its fields, and a body with another route's fields is refused
// by strict decoding of the route's own struct.
type (
	proposalBody struct {
		RunID          string          `json:"runId"`
		InputDigest    string          `json:"inputDigest"`
		Proposal       *award.Proposal `json:"proposal"`
		HumanAttention *struct {
			Reason string `json:"reason"`
		} `json:"humanAttention"`
	}
	instructionsBody struct {
		Instructions string `json:"instructions"`
	}
	opinionBody struct {
		Opinion string `json:"opinion"`
		Reasons string `json:"reasons"`
	}
	attestationBody struct {
		ReviewedRecord bool `json:"reviewedRecord"`
		NoConflict     bool `json:"noConflict"`
	}
	reasonBody struct {
		Reason string `json:"reason"`
	}
	rulingBody struct {
		Text string `json:"text"`
	}
	challengeBody struct {
		ParticipantID string `json:"participantId"`
		Grounds       string `json:"grounds"`
	}
	resolutionBody struct {
		ChallengeID string `json:"challengeId"`
		Decision    string `json:"decision"`
		Reasons     string `json:"reasons"`
	}
	preAwardBody struct {
		ParticipantID  string   `json:"participantId"`
		ClericalErrors []string `json:"clericalErrors"`
	}
	acceptBody struct {
		ParticipantID string `json:"participantId"`
	}
)

// memberAct answers a tribunal member's act: the caller must be a member
// of the case's tribunal (a party's credential is refused, 403
// not_tribunal_member), and read builds the act from the body.
func (h *handlers) memberAct(kind tribunal.ActKind, status int, read func(c *gin.Context, a *tribunal.Act) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		a := tribunal.Act{Kind: kind}
		if err := read(c, &a); err != nil {
			_ = c.Error(err)
			return
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
		h.decide(c, cred, l.Case, a, status)
	}
}

// sideAct answers a side's decision act, with the side the caller acts for.
func (h *handlers) sideDecisionAct(kind tribunal.ActKind, status int, read func(c *gin.Context, a *tribunal.Act) (participantID string, err error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		a := tribunal.Act{Kind: kind}
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
		id, _, err := h.actor(c, cred, l.Case, anySide, participantID)
		if err != nil {
			_ = c.Error(err)
			return
		}
		p, ok := l.Case.Participant(id)
		if !ok || !p.Joined() {
			_ = c.Error(caseflowRefusal(procedure.CodeNotAParticipant, "case "+l.Case.ID+" has no joined participant "+id))
			return
		}
		a.Side, a.ParticipantID = string(p.Side), p.ID
		h.decide(c, cred, l.Case, a, status)
	}
}

func (h *handlers) decide(c *gin.Context, cred auth.Credential, cs procedure.Case, a tribunal.Act, status int) {
	res, err := h.tribunal.Act(c.Request.Context(), cs.ID, a)
	if errors.Is(err, store.ErrNotFound) {
		err = notVisible(cs.ID)
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	h.logger.InfoContext(c.Request.Context(), "decision act accepted", "case_id", cs.ID, "act", a.Kind,
		"credential", cred.PublicID, "stage", res.Case.Tribunal.Stage)
	v := toDecisionView(res.Case, res.FirstSequence+int64(len(res.Events))-1)
	v.Events = eventRefs(cs.ID, res.FirstSequence, res.Events)
	c.Header("Cache-Control", "no-store")
	c.JSON(status, gin.H{"data": v, "requestId": requestid.Get(c)})
}

// tribunalOnly refuses a party's credential on a tribunal route.
func (h *handlers) tribunalOnly(cs procedure.Case) error {
	return tribunalRefusal(tribunal.CodeNotTribunal, "this route is the tribunal's: only the adjudicator or reviewer assigned to case "+cs.ID+" may use it")
}

func tribunalRefusal(code tribunal.RefusalCode, detail string) error {
	return &tribunal.RefusalError{Code: code, Detail: detail}
}

func caseflowRefusal(code procedure.RefusalCode, detail string) error {
	return &procedure.RefusalError{Code: code, Detail: detail}
}

// The readers of each route's body.

// readText reads a body whose one member is the act's text.
func readText[B any](text func(B) string) func(*gin.Context, *tribunal.Act) error {
	return func(c *gin.Context, a *tribunal.Act) error {
		var b B
		if err := decodeOptional(c, &b); err != nil {
			return err
		}
		a.Text = text(b)
		return nil
	}
}

var (
	readInstructions = readText(func(b instructionsBody) string { return b.Instructions })
	readReason       = readText(func(b reasonBody) string { return b.Reason })
	readRuling       = readText(func(b rulingBody) string { return b.Text })
)

func readProposal(c *gin.Context, a *tribunal.Act) error {
	var b proposalBody
	if err := decodeOptional(c, &b); err != nil {
		return err
	}
	a.RunID, a.InputDigest = b.RunID, b.InputDigest
	switch {
	case b.Proposal != nil && b.HumanAttention == nil:
		a.Proposal = b.Proposal
	case b.Proposal == nil && b.HumanAttention != nil:
		a.Kind, a.Text = tribunal.ActAskHumanAttention, b.HumanAttention.Reason
	default:
		return tribunalRefusal(tribunal.CodeInvalidAct, "send exactly one of proposal and humanAttention")
	}
	return nil
}

func readOpinion(c *gin.Context, a *tribunal.Act) error {
	var b opinionBody
	if err := decodeOptional(c, &b); err != nil {
		return err
	}
	a.Opinion, a.Text = tribunal.Opinion(b.Opinion), b.Reasons
	return nil
}

// maxOpinionFileBytes bounds a reviewer opinion sent as a file.
const maxOpinionFileBytes = 256 << 10

// readOpinionFile reads a reviewer opinion sent as a text or Markdown
// file: the reviewer revises the proposal with the file's text as reasons.
func readOpinionFile(c *gin.Context, a *tribunal.Act) error {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || (mt != "text/plain" && mt != "text/markdown") {
		return problem.Newf(problem.UnsupportedMediaType, "Send the opinion as text/plain or text/markdown, not %q.", problem.Clip(c.GetHeader("Content-Type")))
	}
	body, err := io.ReadAll(io.LimitReader(c.Request.Body, maxOpinionFileBytes+1))
	if err != nil {
		return err
	}
	if len(body) > maxOpinionFileBytes || !utf8.Valid(body) {
		return tribunalRefusal(tribunal.CodeInvalidAct, "the opinion file must be UTF-8 text of at most 256 KiB")
	}
	a.Opinion, a.Text = tribunal.OpinionRevise, string(body)
	return nil
}

func readOverride(c *gin.Context, a *tribunal.Act) error {
	var p award.Proposal
	if err := decodeOptional(c, &p); err != nil {
		return err
	}
	a.Proposal = &p
	return nil
}

func readAttestation(c *gin.Context, _ *tribunal.Act) error {
	var b attestationBody
	if err := decodeOptional(c, &b); err != nil {
		return err
	}
	if !b.ReviewedRecord || !b.NoConflict {
		return tribunalRefusal(tribunal.CodeInvalidAct, "the reviewer attests reviewedRecord: true and noConflict: true")
	}
	return nil
}

func readResolution(c *gin.Context, a *tribunal.Act) error {
	var b resolutionBody
	if err := decodeOptional(c, &b); err != nil {
		return err
	}
	switch b.Decision {
	case "upheld":
		a.Uphold = true
	case "dismissed":
	default:
		return tribunalRefusal(tribunal.CodeInvalidAct, "decision must be upheld or dismissed")
	}
	a.ChallengeID, a.Text = b.ChallengeID, b.Reasons
	return nil
}

func readNothing(c *gin.Context, _ *tribunal.Act) error {
	var b struct{}
	return decodeOptional(c, &b)
}

func readChallenge(c *gin.Context, a *tribunal.Act) (string, error) {
	var b challengeBody
	if err := decodeOptional(c, &b); err != nil {
		return "", err
	}
	a.Text = b.Grounds
	return b.ParticipantID, nil
}

func readPreAward(c *gin.Context, a *tribunal.Act) (string, error) {
	var b preAwardBody
	if err := decodeOptional(c, &b); err != nil {
		return "", err
	}
	if b.ClericalErrors == nil {
		return "", tribunalRefusal(tribunal.CodeInvalidAct, "clericalErrors is required: the clerical errors found, or [] for none")
	}
	a.Errors = b.ClericalErrors
	return b.ParticipantID, nil
}

func readAccept(c *gin.Context, _ *tribunal.Act) (string, error) {
	var b acceptBody
	if err := decodeOptional(c, &b); err != nil {
		return "", err
	}
	return b.ParticipantID, nil
}

// preAwardReview is POST pre-award-review: the reviewer opens it, a side
// answers it. The route is one in the inventory; the caller's role says
// which act it is. An account token has no role and is never the
// tribunal (tribunalCredential): its request is always its side's answer,
// so the most it can do is answer for the side its membership names.
func (h *handlers) preAwardReview(c *gin.Context) {
	cred, ok := auth.CredentialFrom(c.Request.Context())
	if ok && tribunalCredential(cred) {
		h.memberAct(tribunal.ActOpenPreAward, http.StatusOK, readNothing)(c)
		return
	}
	h.sideDecisionAct(tribunal.ActAnswerPreAward, http.StatusOK, readPreAward)(c)
}
