package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// Messages between the sides of a case: POST posts one (the other side's
// partners are told, message_posted), GET lists them with their texts and
// how far each side has read, PATCH marks them read for the caller's side
// up to one message. A message is part of the case's record, so it is
// never edited or deleted.

// messageView is one message with its text.
type messageView struct {
	MessageID     string `json:"messageId"`
	ParticipantID string `json:"participantId"`
	Side          string `json:"side"`
	Digest        string `json:"digest"`
	PostedAt      string `json:"postedAt"`
	Text          string `json:"text"`
}

// messagesView lists a case's messages in posting order, with, per side,
// how many of them that side has marked read.
type messagesView struct {
	CaseID   string         `json:"caseId"`
	Messages []messageView  `json:"messages"`
	Read     map[string]int `json:"read"`
}

// readBody is the body of PATCH …/messages: the last message the side has
// read, and who reads when the caller acts for several participants.
type readBody struct {
	ParticipantID string `json:"participantId"`
	ReadThrough   string `json:"readThrough"`
}

func (h *handlers) listMessages(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	v := messagesView{CaseID: l.Case.ID, Messages: []messageView{}, Read: map[string]int{}}
	for _, side := range []procedure.Side{procedure.Claimant, procedure.Respondent} {
		v.Read[string(side)] = l.Case.MessagesRead[side]
	}
	for _, m := range l.Case.Messages {
		text, _, err := h.cases.Document(c.Request.Context(), l.Case.ID, m.Digest)
		if err != nil {
			_ = c.Error(err)
			return
		}
		v.Messages = append(v.Messages, messageView{
			MessageID: m.ID, ParticipantID: m.ParticipantID, Side: string(m.Side), Digest: m.Digest, PostedAt: ts(m.PostedAt), Text: string(text),
		})
	}
	private(c, v)
}

// postMessage posts a message for the caller's side; its text is kept with
// the case in the same step that records message_posted.
func (h *handlers) postMessage(c *gin.Context) {
	h.textAct(c, procedure.Act{Kind: procedure.ActPostMessage, MessageID: newID("msg_")}, http.StatusCreated)
}

// markMessagesRead records that the caller's side has read the case's
// messages up to readThrough. Reading never moves back.
func (h *handlers) markMessagesRead(c *gin.Context) {
	var body readBody
	if err := httpserver.DecodeJSON(c, &body); err != nil {
		_ = c.Error(err)
		return
	}
	if body.ReadThrough == "" {
		_ = c.Error(invalidAct("readThrough is required: the id of the last message read."))
		return
	}
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	pid, _, err := h.actor(c, cred, l.Case, anySide, body.ParticipantID)
	if err != nil {
		_ = c.Error(err)
		return
	}
	act := procedure.Act{Kind: procedure.ActMarkMessagesRead, ParticipantID: pid, MessageID: body.ReadThrough}
	if v, ok := h.act(c, cred, l.Case, act); ok {
		answered(c, http.StatusOK, v)
	}
}
