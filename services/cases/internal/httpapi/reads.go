package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// Docket pages.
const (
	defaultDocketLimit = 50
	maxDocketLimit     = 200
)

// private answers a read of private state: never cached, by anyone.
func private(c *gin.Context, data any) {
	c.Header("Cache-Control", "private, no-store")
	c.JSON(http.StatusOK, gin.H{"data": data, "requestId": requestid.Get(c)})
}

func (h *handlers) getCase(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	v, err := h.toCaseView(c.Request.Context(), l.Case, l.Sequence)
	if err != nil {
		_ = c.Error(err)
		return
	}
	private(c, v)
}

type participantsView struct {
	CaseID       string            `json:"caseId"`
	Participants []participantView `json:"participants"`
}

func (h *handlers) getParticipants(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	private(c, participantsView{CaseID: l.Case.ID, Participants: toParticipantViews(l.Case)})
}

// docketView is one page of a case's events (case-event-v2 bodies as
// recorded, without the per-delivery deliveryId), in sequence order.
// nextCursor is the sequence to pass as cursor for the next page, absent
// when the page reaches the case's last event.
type docketView struct {
	CaseID       string            `json:"caseId"`
	Events       []json.RawMessage `json:"events"`
	NextCursor   *string           `json:"nextCursor"`
	LastSequence int64             `json:"lastSequence"`
}

// getDocket pages through the docket: ?cursor=<sequence> returns the
// events after that sequence (from the first without one), ?limit=1..200.
func (h *handlers) getDocket(c *gin.Context) {
	after, limit, perr := docketQuery(c)
	if perr != nil {
		_ = c.Error(perr)
		return
	}
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	raw, err := h.cases.Docket(c.Request.Context(), l.Case.ID, after+1, limit)
	if err != nil {
		_ = c.Error(err)
		return
	}
	v := docketView{CaseID: l.Case.ID, Events: raw, LastSequence: l.Sequence}
	if v.Events == nil {
		v.Events = []json.RawMessage{}
	}
	if last := after + int64(len(raw)); len(raw) > 0 && last < l.Sequence {
		next := strconv.FormatInt(last, 10)
		v.NextCursor = &next
	}
	private(c, v)
}

func docketQuery(c *gin.Context) (after, limit int64, p *problem.Error) {
	limit = defaultDocketLimit
	if s, ok := c.GetQuery("cursor"); ok {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, problem.New(InvalidQuery, "cursor must be the nextCursor of a previous page: a sequence number, 0 or more.")
		}
		after = n
	}
	if s, ok := c.GetQuery("limit"); ok {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || n > maxDocketLimit {
			return 0, 0, problem.Newf(InvalidQuery, "limit must be a whole number from 1 to %d.", maxDocketLimit)
		}
		limit = n
	}
	return after, limit, nil
}

// currentRulesView is the procedural rules every new case is pinned to.
type currentRulesView struct {
	Version string `json:"version"`
	Hash    string `json:"hash"`
	Text    string `json:"text"`
}

// currentRules is public: the rules are published text, the same for
// every caller, so shared caches may keep them for a while.
func (h *handlers) currentRules(c *gin.Context) {
	version, hash, text := api.Rules()
	c.Header("Cache-Control", "public, max-age=300")
	c.JSON(http.StatusOK, gin.H{"data": currentRulesView{Version: version, Hash: hash, Text: string(text)}, "requestId": requestid.Get(c)})
}

// caseRulesView is the rules a case is pinned to, with the deadline
// windows resolved at its opening.
type caseRulesView struct {
	CaseID  string      `json:"caseId"`
	Version string      `json:"version"`
	Hash    string      `json:"hash"`
	Windows windowsView `json:"windows"`
}

// windowsView gives each window in seconds.
type windowsView struct {
	RespondentJoin          int64 `json:"respondentJoinSeconds"`
	Answer                  int64 `json:"answerSeconds"`
	EvidenceRound           int64 `json:"evidenceRoundSeconds"`
	RebuttalRound           int64 `json:"rebuttalRoundSeconds"`
	RecordConfirmation      int64 `json:"recordConfirmationSeconds"`
	TerminationConfirmation int64 `json:"terminationConfirmationSeconds"`
	Warning                 int64 `json:"warningSeconds"`
}

func toWindowsView(w procedure.Windows) windowsView {
	s := func(d time.Duration) int64 { return int64(d / time.Second) }
	return windowsView{
		RespondentJoin: s(w.RespondentJoin), Answer: s(w.Answer), EvidenceRound: s(w.EvidenceRound), RebuttalRound: s(w.RebuttalRound),
		RecordConfirmation: s(w.RecordConfirmation), TerminationConfirmation: s(w.TerminationConfirmation), Warning: s(w.Warning),
	}
}

func (h *handlers) caseRules(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	cs := l.Case
	private(c, caseRulesView{CaseID: cs.ID, Version: cs.Rules.Version, Hash: cs.Rules.Hash, Windows: toWindowsView(cs.Windows)})
}
