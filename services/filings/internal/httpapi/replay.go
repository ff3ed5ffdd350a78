package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

// journaledDraft is what the journal keeps of an answer that is a draft:
// the stored draft record rather than one route's view of it. The v2 and
// canonical routes of an act share a journal, and a replay answers in the
// view of the route it arrives on (renderReplay); both views render this
// same packet and digest.
//
// It is encoded with go-json-experiment/json, which checks the record once;
// encoding/json would reformat it character by character.
type journaledDraft struct {
	DraftRecord jsontext.Value `json:"draftRecord"`
	RequestID   string         `json:"requestId"`
}

// journalDraft makes the journal keep d, the draft the answer shows.
func journalDraft(c *gin.Context, d draft.Draft) {
	record, err := d.MarshalJSON()
	if err != nil {
		return // the journal keeps the answer as sent
	}
	b, err := jsonv2.Marshal(journaledDraft{DraftRecord: record, RequestID: requestid.Get(c)})
	if err != nil {
		return // the journal keeps the answer as sent
	}
	idempotency.JournalBody(c, b)
}

// renderReplay renders a journaled draft in route's view, with route's
// Location. Other stored answers pass unchanged: problems, and opened cases,
// whose view is the same on every route.
func (h *handlers) renderReplay(route draft.Route) func(*gin.Context, int, http.Header, []byte) ([]byte, error) {
	return func(_ *gin.Context, status int, header http.Header, body []byte) ([]byte, error) {
		var j journaledDraft
		if status >= http.StatusMultipleChoices || jsonv2.Unmarshal(body, &j) != nil || len(j.DraftRecord) == 0 {
			return body, nil
		}
		var d draft.Draft
		if err := d.UnmarshalJSON(j.DraftRecord); err != nil {
			return nil, err
		}
		if header.Get("Location") != "" {
			header.Set("Location", draftPath(route, d.ID()))
		}
		return json.Marshal(gin.H{"data": h.draftView(d, route), "requestId": j.RequestID})
	}
}
