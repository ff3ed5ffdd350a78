package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// actView is the answer to an accepted act: the case after it and the
// events it recorded.
type actView struct {
	Case   caseView   `json:"case"`
	Events []eventRef `json:"events"`
	// Invitation is set by an invitation only.
	Invitation *invitationView `json:"invitation,omitempty"`
	// RespondentLogin is set by a reissue of the sign-in link only.
	RespondentLogin *respondentLoginView `json:"respondentLogin,omitempty"`
	// SubmissionID names the submission filed or amended.
	SubmissionID string `json:"submissionId,omitempty"`
	// TerminationID names the termination request made or confirmed.
	TerminationID string `json:"terminationId,omitempty"`
	// MessageID names the message posted.
	MessageID string `json:"messageId,omitempty"`
	// RepresentativeID names the representative appointed, changed or
	// removed.
	RepresentativeID string `json:"representativeId,omitempty"`
	// CorrectionID names the record correction made.
	CorrectionID string `json:"correctionId,omitempty"`
}

// invitationView carries the new invitation secret, shown once: a replay
// of the invitation answers without it, and a new Idempotency-Key asks for
// a new secret (the previous one stops working).
type invitationView struct {
	RespondentInviteToken string `json:"respondentInviteToken,omitempty"`
	CapabilityDelivery    string `json:"capabilityDelivery"`
	CapabilityHeader      string `json:"capabilityHeader"`
	JoinPath              string `json:"joinPath"`
}

// respondentLoginView carries the hosted respondent's new sign-in link,
// shown once as invitations are: a replay answers without it.
type respondentLoginView struct {
	RespondentLoginPath string `json:"respondentLoginPath,omitempty"`
	CapabilityDelivery  string `json:"capabilityDelivery"`
}

// participantBody is the body of an invitation or a join: who acts, when
// the caller acts for more than one participant of the side. The body may
// be empty.
type participantBody struct {
	ParticipantID string `json:"participantId"`
}

// answerBody is the body of an answer.
type answerBody struct {
	ParticipantID string `json:"participantId"`
	Text          string `json:"text"`
}

// decodeOptional decodes a JSON body strictly into dst, taking an empty
// body as {}.
func decodeOptional(c *gin.Context, dst any) error {
	if ct := c.GetHeader("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return problem.Newf(problem.UnsupportedMediaType, "Content-Type must be application/json, not %q.", problem.Clip(ct))
		}
	}
	body, err := httpserver.ReadBody(c)
	if err != nil {
		return err
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(body))
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return httpserver.DecodeStrict(body, dst)
}

// answered sends an accepted act: never stored by any cache.
func answered(c *gin.Context, status int, v actView) {
	c.Header("Cache-Control", "no-store")
	c.JSON(status, gin.H{"data": v, "requestId": requestid.Get(c)})
}

func (h *handlers) act(c *gin.Context, cred auth.Credential, cs procedure.Case, act procedure.Act, docs ...store.Document) (actView, bool) {
	res, err := h.flow.Act(c.Request.Context(), cs.ID, act, docs...)
	if errors.Is(err, store.ErrNotFound) {
		err = notVisible(cs.ID)
	}
	if err != nil {
		_ = c.Error(err)
		return actView{}, false
	}
	v, err := h.toCaseView(c.Request.Context(), res.Case, res.FirstSequence+int64(len(res.Events))-1)
	if err != nil {
		_ = c.Error(err)
		return actView{}, false
	}
	h.logger.InfoContext(c.Request.Context(), "case act accepted", "case_id", cs.ID, "act", act.Kind,
		"credential", cred.PublicID, "status", res.Case.Status())
	out := actView{Case: v, Events: eventRefs(cs.ID, res.FirstSequence, res.Events), SubmissionID: act.SubmissionID, TerminationID: act.TerminationID}
	if act.Kind == procedure.ActPostMessage {
		out.MessageID = act.MessageID
	}
	return out, true
}

// invite rotates the respondent invitation: a new secret, shown once,
// whose hash replaces the case's current one in the step that records
// respondent_invited. Claimant side.
func (h *handlers) invite(c *gin.Context) {
	var body participantBody
	if err := decodeOptional(c, &body); err != nil {
		_ = c.Error(err)
		return
	}
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	pid, _, err := h.actor(c, cred, l.Case, procedure.Claimant, body.ParticipantID)
	if err != nil {
		_ = c.Error(err)
		return
	}
	token := auth.NewToken("pc_inv_")
	v, ok := h.act(c, cred, l.Case, procedure.Act{Kind: procedure.ActInviteRespondent, ParticipantID: pid, InvitationHash: auth.HashToken(token)})
	if !ok {
		return
	}
	v.Invitation = &invitationView{
		CapabilityDelivery: "show_once_not_replayed", CapabilityHeader: auth.CapabilityHeader,
		JoinPath: "/api/partner-cases/" + l.Case.ID + "/respondent",
	}
	// The journal keeps the answer without the secret: a replay never shows it.
	if stored, err := json.Marshal(gin.H{"data": v, "requestId": requestid.Get(c)}); err == nil {
		idempotency.JournalBody(c, stored)
	}
	v.Invitation.RespondentInviteToken = token
	answered(c, http.StatusCreated, v)
}

// reissueLogin replaces the hosted respondent's one-time sign-in link: a
// new token, shown once in the path the claimant's partner delivers,
// whose hash replaces the case's respondent_login in the step that records
// respondent_link_reissued. The old link stops working at once; the
// sessions it opened stay (store/sessions.go). Claimant side.
func (h *handlers) reissueLogin(c *gin.Context) {
	var body participantBody
	if err := decodeOptional(c, &body); err != nil {
		_ = c.Error(err)
		return
	}
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	pid, _, err := h.actor(c, cred, l.Case, procedure.Claimant, body.ParticipantID)
	if err != nil {
		_ = c.Error(err)
		return
	}
	// A link spent before reissues existed is marked per case: move the
	// mark to that link's own marker first, so it stays spent once replaced.
	if err := h.cases.MigrateLegacyLogin(c.Request.Context(), l.Case.ID); err != nil {
		_ = c.Error(err)
		return
	}
	token := auth.NewToken("pc_login_")
	v, ok := h.act(c, cred, l.Case, procedure.Act{Kind: procedure.ActReissueLogin, ParticipantID: pid, LoginHash: auth.HashToken(token)})
	if !ok {
		return
	}
	v.RespondentLogin = &respondentLoginView{CapabilityDelivery: "show_once_not_replayed"}
	// The journal keeps the answer without the token: a replay never shows it.
	if stored, err := json.Marshal(gin.H{"data": v, "requestId": requestid.Get(c)}); err == nil {
		idempotency.JournalBody(c, stored)
	}
	v.RespondentLogin.RespondentLoginPath = "/respond/" + l.Case.ID + "#login=" + token
	answered(c, http.StatusCreated, v)
}

// join makes a respondent take part. Respondent side; a caller whose
// authority is the invitation presents it, and the procedure checks it is
// the current one.
func (h *handlers) join(c *gin.Context) {
	var body participantBody
	if err := decodeOptional(c, &body); err != nil {
		_ = c.Error(err)
		return
	}
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	pid, by, err := h.actor(c, cred, l.Case, procedure.Respondent, body.ParticipantID)
	if err != nil {
		_ = c.Error(err)
		return
	}
	act := procedure.Act{Kind: procedure.ActJoin, ParticipantID: pid, BindPartnerID: by.bind}
	if by.capability == procedure.CapabilityRespondentInvite {
		act.InvitationHash = by.capabilityHash
	}
	if v, ok := h.act(c, cred, l.Case, act); ok {
		answered(c, http.StatusOK, v)
	}
}

// answer files the respondent's answer. Its text is kept beside the case,
// named by its SHA-256, in the step that records answer_filed.
func (h *handlers) answer(c *gin.Context) {
	var body answerBody
	if err := httpserver.DecodeJSON(c, &body); err != nil {
		_ = c.Error(err)
		return
	}
	if err := checkText(body.Text); err != nil {
		_ = c.Error(invalidAct("text " + err.Error()))
		return
	}
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	pid, _, err := h.actor(c, cred, l.Case, procedure.Respondent, body.ParticipantID)
	if err != nil {
		_ = c.Error(err)
		return
	}
	sum := sha256.Sum256([]byte(body.Text))
	digest := hex.EncodeToString(sum[:])
	act := procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: pid, Digest: digest}
	if v, ok := h.act(c, cred, l.Case, act, store.Document{Digest: digest, Content: []byte(body.Text)}); ok {
		answered(c, http.StatusCreated, v)
	}
}

// checkText accepts 1 to caseflow.MaxAnswerRunes characters of UTF-8 text without
// control characters other than tab and line breaks.
func checkText(s string) error {
	n := utf8.RuneCountInString(s)
	switch {
	case n == 0:
		return errors.New("is required")
	case n > caseflow.MaxAnswerRunes:
		return fmt.Errorf("has %d characters; at most %d", n, caseflow.MaxAnswerRunes)
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' {
			return fmt.Errorf("holds control character U+%04X", r)
		}
	}
	return nil
}

// recheck runs before a stored answer is replayed: the caller must still
// see the case and still have authority over side (any side it had, for
// acts either side takes), so a credential whose membership was revoked,
// or whose capability was rotated, gets no replay.
func (h *handlers) recheck(side procedure.Side) func(*gin.Context) error {
	return func(c *gin.Context) error {
		cred, l, err := h.load(c, caseID(c))
		if err != nil || side == anySide {
			return err
		}
		st, err := h.standing(c.Request.Context(), cred, l.Case, c.GetHeader(auth.CapabilityHeader))
		if err != nil {
			return err
		}
		if !st.actsForSide(l.Case, side) {
			return forbidden("This credential may no longer act for the %s side of case %s.", side, l.Case.ID)
		}
		return nil
	}
}
