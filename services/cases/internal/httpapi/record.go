package httpapi

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// The record the sides confirm (docs/cases-procedure.md#the-record): its
// summary with the summary digest, the exact-digest confirmation, the
// sides' corrections, and the restatement, which is the same record on
// the website and partner routes.

// recordSummaryView is what the sides confirm. Its answer, submissions,
// exhibits and corrections are procedure.RecordSummary as it is digested:
// summaryDigest is the SHA-256 of their RFC 8785 form, so a side can check
// it. The corrections' texts are beside them (correctionTexts), by
// correction id; the digest covers each text's digest.
type recordSummaryView struct {
	CaseID string `json:"caseId"`
	Status string `json:"status"`
	procedure.RecordSummary
	CorrectionTexts map[string]string    `json:"correctionTexts"`
	SummaryDigest   string               `json:"summaryDigest"`
	Confirmations   []recordConfirmation `json:"confirmations"`
	RecordDeemed    bool                 `json:"recordDeemed"`
	DeadlineAt      string               `json:"deadlineAt,omitempty"`
}

type recordConfirmation struct {
	Side        string `json:"side"`
	ConfirmedAt string `json:"confirmedAt"`
}

func (h *handlers) recordSummary(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	cs := l.Case
	v := recordSummaryView{CaseID: cs.ID, Status: string(cs.Status()), RecordSummary: cs.RecordSummary(), CorrectionTexts: map[string]string{},
		SummaryDigest: cs.RecordDigest(), Confirmations: []recordConfirmation{}, RecordDeemed: cs.RecordDeemed}
	for _, k := range cs.Corrections {
		text, _, err := h.cases.Document(c.Request.Context(), cs.ID, k.Digest)
		if err != nil {
			_ = c.Error(err)
			return
		}
		v.CorrectionTexts[k.ID] = string(text)
	}
	for _, side := range []procedure.Side{procedure.Claimant, procedure.Respondent} {
		if at, ok := cs.RecordConfirms[side]; ok {
			v.Confirmations = append(v.Confirmations, recordConfirmation{Side: string(side), ConfirmedAt: ts(at)})
		}
	}
	if cs.Closed == "" && cs.Stage.Kind == procedure.StageRecordConfirmation {
		v.DeadlineAt = ts(cs.Stage.DeadlineAt)
	}
	private(c, v)
}

// confirmBody is the body of a record confirmation. SummaryDigest is
// optional on the canonical and partner routes (without it the side
// confirms the record as it is) and required by the website restatement.
type confirmBody struct {
	ParticipantID string `json:"participantId"`
	SummaryDigest string `json:"summaryDigest"`
}

// correctionBody is the body of a correction.
type correctionBody struct {
	ParticipantID string `json:"participantId"`
	EntryID       string `json:"entryId"`
	Text          string `json:"text"`
}

// restatementBody is the body of the website restatement POST: action
// says which act it is, and the fields are that act's.
type restatementBody struct {
	Action        string `json:"action"`
	ParticipantID string `json:"participantId"`
	EntryID       string `json:"entryId"`
	Text          string `json:"text"`
	SummaryDigest string `json:"summaryDigest"`
}

func (h *handlers) confirmRecord(c *gin.Context) {
	var body confirmBody
	if err := decodeOptional(c, &body); err != nil {
		_ = c.Error(err)
		return
	}
	h.confirm(c, body)
}

func (h *handlers) correctRecord(c *gin.Context) {
	var body correctionBody
	if err := httpserver.DecodeJSON(c, &body); err != nil {
		_ = c.Error(err)
		return
	}
	h.correct(c, body)
}

// restate is the website restatement POST: {action: "correct", entryId,
// text} is the correction, {action: "confirm", summaryDigest} the
// exact-digest confirmation (the digest is required here: the website
// confirms what it showed).
func (h *handlers) restate(c *gin.Context) {
	var body restatementBody
	if err := httpserver.DecodeJSON(c, &body); err != nil {
		_ = c.Error(err)
		return
	}
	switch body.Action {
	case "correct":
		if body.SummaryDigest != "" {
			_ = c.Error(invalidAct("summaryDigest belongs to the confirm action, not to correct"))
			return
		}
		h.correct(c, correctionBody{ParticipantID: body.ParticipantID, EntryID: body.EntryID, Text: body.Text})
	case "confirm":
		switch {
		case body.EntryID != "" || body.Text != "":
			_ = c.Error(invalidAct("entryId and text belong to the correct action, not to confirm"))
		case body.SummaryDigest == "":
			_ = c.Error(invalidAct("summaryDigest is required: the website confirms exactly the summary it showed"))
		default:
			h.confirm(c, confirmBody{ParticipantID: body.ParticipantID, SummaryDigest: body.SummaryDigest})
		}
	default:
		_ = c.Error(invalidAct(`action must be "correct" or "confirm"`))
	}
}

func (h *handlers) confirm(c *gin.Context, body confirmBody) {
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	act := procedure.Act{Kind: procedure.ActConfirmRecord, SummaryDigest: body.SummaryDigest}
	if act.ParticipantID, _, err = h.actor(c, cred, l.Case, anySide, body.ParticipantID); err != nil {
		_ = c.Error(err)
		return
	}
	if v, ok := h.act(c, cred, l.Case, act); ok {
		answered(c, http.StatusOK, v)
	}
}

func (h *handlers) correct(c *gin.Context, body correctionBody) {
	if err := checkText(body.Text); err != nil {
		_ = c.Error(invalidAct("text " + err.Error()))
		return
	}
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	act := procedure.Act{Kind: procedure.ActCorrectRecord, EntryID: body.EntryID, CorrectionID: newID("cor_"), Digest: digestOf(body.Text)}
	if act.ParticipantID, _, err = h.actor(c, cred, l.Case, anySide, body.ParticipantID); err != nil {
		_ = c.Error(err)
		return
	}
	v, ok := h.act(c, cred, l.Case, act, store.Document{Digest: act.Digest, Content: []byte(body.Text)})
	if ok {
		v.CorrectionID = act.CorrectionID
		answered(c, http.StatusCreated, v)
	}
}

// restatementView is the generated restatement: each record entry's
// summary beside the digest it was taken from, and the record's digest.
type restatementView struct {
	CaseID string `json:"caseId"`
	procedure.Restatement
}

// generateRestatement answers the record restated (procedure.Restate): a
// deterministic extraction, so it changes nothing and any side or the
// tribunal may ask for it at any stage; the same record always gives the
// same answer, with its recordDigest.
func (h *handlers) generateRestatement(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	cs := l.Case
	s := cs.RecordSummary()
	entries := s.Submissions
	if s.Answer != nil {
		entries = append([]procedure.SummaryEntry{*s.Answer}, entries...)
	}
	texts := map[string]string{}
	for _, e := range entries {
		text, found, err := h.cases.Document(c.Request.Context(), cs.ID, e.Digest)
		if err != nil {
			_ = c.Error(err)
			return
		}
		if found {
			texts[e.Digest] = string(text)
		}
	}
	r, err := procedure.Restate(cs, texts)
	if err != nil {
		_ = c.Error(fmt.Errorf("case %s: %w", cs.ID, err)) // a stored record always keeps its texts
		return
	}
	private(c, restatementView{CaseID: cs.ID, Restatement: r})
}
