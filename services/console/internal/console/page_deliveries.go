// The delivery pages: the filtered list, one delivery with every attempt
// (its exact signed request and answer), and replay.

package console

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

const webhooksAPI = "/api/webhooks"

// MaxResponseBody is how much of a receiver's answer body an attempt shows.
const MaxResponseBody = 4 << 10

var deliveryStatuses = []string{"scheduled", "delivered", "failed", "cancelled"}

type deliveriesView struct {
	Status         string
	EndpointID     string
	EventID        string
	EventType      string
	CaseID         string
	ResponseStatus string
	Since, Until   string // as the form's datetime-local inputs spell them, UTC
	Statuses       []string
	EventTypes     []string
	Endpoints      []endpoint
	Items          []delivery
	Next           string
	First          bool
	// Outcomes draws the partner's deliveries of the last 24 hours by
	// outcome, whatever the filters.
	Outcomes *outcomeChart
}

// deliveryFilters are the query parameters the page passes to the list API
// as they are; since and until are translated from the form's UTC
// datetime-local spelling.
var deliveryFilters = []string{"status", "endpointId", "eventId", "eventType", "caseId", "responseStatus"}

// deliveries lists the partner's deliveries with the API's filters and
// cursor; every filter and page has its own URL. Above the list, the
// chart of the last 24 hours' deliveries by outcome.
func (cs *Console) deliveries(c *gin.Context, s *session) {
	q := url.Values{}
	page := url.Values{} // this page's own query, for the next page's link
	v := deliveriesView{Statuses: deliveryStatuses, EventTypes: eventTypes}
	for _, name := range deliveryFilters {
		if val := strings.TrimSpace(c.Query(name)); val != "" {
			q.Set(name, val)
			page.Set(name, val)
		}
	}
	for name, dst := range map[string]*string{"since": &v.Since, "until": &v.Until} {
		val := strings.TrimSpace(c.Query(name))
		if val == "" {
			continue
		}
		at, ok := parseWindow(val)
		if !ok {
			cs.refuse(c, s, refusal{Status: http.StatusBadRequest, Code: "invalid_query", Back: cs.path("/deliveries"),
				Title: "Invalid time", Detail: name + " must be a UTC time as YYYY-MM-DDTHH:MM(:SS)."})
			return
		}
		*dst = val
		q.Set(name, at.Format(time.RFC3339))
		page.Set(name, val)
	}
	v.Status, v.EndpointID, v.EventID = q.Get("status"), q.Get("endpointId"), q.Get("eventId")
	v.EventType, v.CaseID, v.ResponseStatus = q.Get("eventType"), q.Get("caseId"), q.Get("responseStatus")
	if cursor := strings.TrimSpace(c.Query("cursor")); cursor != "" {
		q.Set("cursor", cursor)
	}
	v.First = q.Get("cursor") == ""
	q.Set("limit", "25")
	var list struct {
		Data       []delivery `json:"data"`
		NextCursor string     `json:"nextCursor"`
	}
	ctx := c.Request.Context()
	if err := cs.client.call(ctx, s.bearer, http.MethodGet, webhooksAPI+"/deliveries", q, nil, "", &list); err != nil {
		cs.apiRefusal(c, s, err, cs.path("/deliveries"))
		return
	}
	var eps struct {
		Data []endpoint `json:"data"`
	}
	if err := cs.client.call(ctx, s.bearer, http.MethodGet, webhooksAPI+"/endpoints", nil, nil, "", &eps); err != nil {
		cs.apiRefusal(c, s, err, cs.path("/deliveries"))
		return
	}
	var outcomes struct {
		Data struct {
			Hours []outcomeFigures `json:"hours"`
		} `json:"data"`
	}
	if err := cs.client.call(ctx, s.bearer, http.MethodGet, webhooksAPI+"/deliveries/outcomes", url.Values{"window": {"24h"}}, nil, "", &outcomes); err != nil {
		cs.apiRefusal(c, s, err, cs.path("/deliveries"))
		return
	}
	v.Items, v.Endpoints, v.Outcomes = list.Data, eps.Data, newOutcomeChart(outcomes.Data.Hours)
	if list.NextCursor != "" {
		page.Set("cursor", list.NextCursor)
		v.Next = cs.path("/deliveries") + "?" + page.Encode()
	}
	cs.render(c, http.StatusOK, "deliveries", cs.frame(c, s, "deliveries", v))
}

type deliveryDetailView struct {
	D        delivery
	Attempts []attemptRow
}

type attemptRow struct {
	attempt
	RequestHeaders  []header
	ResponseHeaders []header
	BodyShown       string
	BodyClipped     bool
}

type header struct{ Name, Value string }

func sortedHeaders(m map[string]string) []header {
	out := make([]header, 0, len(m))
	for k, v := range m {
		out = append(out, header{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	return out
}

// deliveryDetail shows one delivery with every attempt, at a stable URL.
func (cs *Console) deliveryDetail(c *gin.Context, s *session) {
	id := c.Param("id")
	if !validID(id) {
		cs.refuse(c, s, refusal{Status: http.StatusNotFound, Code: "not_found", Title: "No such delivery", Detail: "That is not a delivery id.", Back: cs.path("/deliveries")})
		return
	}
	var got struct {
		Data delivery `json:"data"`
	}
	if err := cs.client.call(c.Request.Context(), s.bearer, http.MethodGet, webhooksAPI+"/deliveries/"+id, nil, nil, "", &got); err != nil {
		cs.apiRefusal(c, s, err, cs.path("/deliveries"))
		return
	}
	v := deliveryDetailView{D: got.Data, Attempts: attemptRows(got.Data.Attempts)}
	cs.render(c, http.StatusOK, "delivery", cs.frame(c, s, "deliveries", v))
}

// attemptRows are a delivery's attempts as its page shows them: headers
// sorted, and the first MaxResponseBody bytes of the receiver's answer.
func attemptRows(attempts []attempt) []attemptRow {
	var rows []attemptRow
	for _, a := range attempts {
		r := attemptRow{attempt: a, RequestHeaders: sortedHeaders(a.RequestHeaders), ResponseHeaders: sortedHeaders(a.ResponseHeaders), BodyShown: a.ResponseBody}
		if len(r.BodyShown) > MaxResponseBody {
			r.BodyShown, r.BodyClipped = r.BodyShown[:MaxResponseBody], true
		}
		rows = append(rows, r)
	}
	return rows
}

// replay sends a delivery's event again through POST .../replay.
func (cs *Console) replay(c *gin.Context, s *session) {
	id := c.Param("id")
	key := c.Request.PostForm.Get("key")
	if !validID(id) || !validFormKey(key) {
		cs.refuse(c, s, refusalBadForm(fmt.Errorf("bad id or key")))
		return
	}
	var got struct {
		Data delivery `json:"data"`
	}
	err := cs.client.call(c.Request.Context(), s.bearer, http.MethodPost, webhooksAPI+"/deliveries/"+id+"/replay", nil, struct{}{}, key, &got)
	if err != nil {
		cs.apiRefusal(c, s, err, cs.path("/deliveries/"+id))
		return
	}
	cs.audit(c, s.Link.Scope, AuditEntry{Action: "delivery_replayed", Actor: s.Link.ID, Link: s.Link.ID, Detail: "delivery " + id + " replayed as " + got.Data.ID})
	c.Redirect(http.StatusSeeOther, cs.path("/deliveries/"+got.Data.ID))
}
