package httpapi

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// The acts either side takes once it takes part: submissions in the
// evidence and rebuttal rounds, the record confirmation, and termination.
// Which side acts follows from the credential (docs/cases-routes.md).

// textBody is the body of a submission or an amendment.
type textBody struct {
	ParticipantID string `json:"participantId"`
	Text          string `json:"text"`
}

// submissionView is one submission with its text.
type submissionView struct {
	SubmissionID  string `json:"submissionId"`
	ParticipantID string `json:"participantId"`
	Side          string `json:"side"`
	Stage         string `json:"stage"`
	Round         int    `json:"round"`
	Digest        string `json:"digest"`
	FiledAt       string `json:"filedAt"`
	AmendedAt     string `json:"amendedAt,omitempty"`
	Amendments    int    `json:"amendments"`
	Text          string `json:"text"`
}

type submissionsView struct {
	CaseID      string           `json:"caseId"`
	Submissions []submissionView `json:"submissions"`
}

// newID mints an id for a submission or a termination request: the
// procedure takes caller-minted ids, and a retry replays the journaled
// answer, so one request never mints two.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func digestOf(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

func (h *handlers) listSubmissions(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	v := submissionsView{CaseID: l.Case.ID, Submissions: []submissionView{}}
	for _, sub := range l.Case.Submissions {
		text, _, err := h.cases.Document(c.Request.Context(), l.Case.ID, sub.Digest)
		if err != nil {
			_ = c.Error(err)
			return
		}
		v.Submissions = append(v.Submissions, submissionView{
			SubmissionID: sub.ID, ParticipantID: sub.ParticipantID, Side: string(sub.Side), Stage: string(sub.Stage), Round: sub.Round,
			Digest: sub.Digest, FiledAt: ts(sub.FiledAt), AmendedAt: ts(sub.AmendedAt), Amendments: sub.Amendments, Text: string(text),
		})
	}
	private(c, v)
}

// textAct runs an act whose content is a text: a submission, an amendment
// or a message. act names the act and its ids; the caller's participant
// and the text's digest are filled in here.
func (h *handlers) textAct(c *gin.Context, act procedure.Act, status int) {
	var body textBody
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
	if act.ParticipantID, _, err = h.actor(c, cred, l.Case, anySide, body.ParticipantID); err != nil {
		_ = c.Error(err)
		return
	}
	act.Digest = digestOf(body.Text)
	if v, ok := h.act(c, cred, l.Case, act, store.Document{Digest: act.Digest, Content: []byte(body.Text)}); ok {
		answered(c, status, v)
	}
}

// fileSubmission files a submission in the open evidence or rebuttal round.
func (h *handlers) fileSubmission(c *gin.Context) {
	h.textAct(c, procedure.Act{Kind: procedure.ActFileSubmission, SubmissionID: newID("sub_")}, http.StatusCreated)
}

// amendSubmission replaces the text of one of the side's submissions of
// the open round.
func (h *handlers) amendSubmission(c *gin.Context) {
	h.textAct(c, procedure.Act{Kind: procedure.ActAmendSubmission, SubmissionID: c.Param("submissionId")}, http.StatusOK)
}

// sideAct runs an act that carries no content: the record confirmation
// and the termination acts.
func (h *handlers) sideAct(c *gin.Context, act procedure.Act, status int) {
	var body participantBody
	if err := decodeOptional(c, &body); err != nil {
		_ = c.Error(err)
		return
	}
	h.sideActAs(c, act, body.ParticipantID, status)
}

// sideActAs runs a content-free act for the participant the body named
// ("" for the caller's own).
func (h *handlers) sideActAs(c *gin.Context, act procedure.Act, participantID string, status int) {
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	if act.ParticipantID, _, err = h.actor(c, cred, l.Case, anySide, participantID); err != nil {
		_ = c.Error(err)
		return
	}
	if v, ok := h.act(c, cred, l.Case, act); ok {
		answered(c, status, v)
	}
}

// requestTermination asks to end the case: the other side confirms it, or
// the claimant withdraws at once while no respondent has joined.
func (h *handlers) requestTermination(c *gin.Context) {
	h.sideAct(c, procedure.Act{Kind: procedure.ActRequestTermination, TerminationID: newID("term_")}, http.StatusCreated)
}

func (h *handlers) confirmTermination(c *gin.Context) {
	h.sideAct(c, procedure.Act{Kind: procedure.ActConfirmTermination, TerminationID: c.Param("requestId")}, http.StatusOK)
}

// websiteTerminationBody is the website termination control's body: the
// action says which act.
type websiteTerminationBody struct {
	Action        string `json:"action"`
	RequestID     string `json:"requestId"`
	ParticipantID string `json:"participantId"`
}

// websiteTermination is the website's one termination control:
// {action: request} asks to end the case (as POST termination-requests,
// 201), {action: confirm, requestId} confirms the other side's request
// (as POST termination-requests/{requestId}/confirmations, 200). Like the
// website restatement, the route keeps its own journal, and the action is
// part of what a retry must repeat.
func (h *handlers) websiteTermination(c *gin.Context) {
	var body websiteTerminationBody
	if err := httpserver.DecodeJSON(c, &body); err != nil {
		_ = c.Error(err)
		return
	}
	switch body.Action {
	case "request":
		if body.RequestID != "" {
			_ = c.Error(invalidAct("requestId belongs to the confirm action, not to request"))
			return
		}
		h.sideActAs(c, procedure.Act{Kind: procedure.ActRequestTermination, TerminationID: newID("term_")}, body.ParticipantID, http.StatusCreated)
	case "confirm":
		if body.RequestID == "" {
			_ = c.Error(invalidAct("requestId is required: the website confirms the request it showed"))
			return
		}
		h.sideActAs(c, procedure.Act{Kind: procedure.ActConfirmTermination, TerminationID: body.RequestID}, body.ParticipantID, http.StatusOK)
	default:
		_ = c.Error(invalidAct(`action must be "request" or "confirm"`))
	}
}
