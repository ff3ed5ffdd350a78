package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/api"
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
}

// deliveryFilters are the query parameters the page passes to the list API
// as they are; since and until are translated from the form's UTC
// datetime-local spelling.
var deliveryFilters = []string{"status", "endpointId", "eventId", "eventType", "caseId", "responseStatus"}

// deliveries lists the partner's deliveries with the API's filters and
// cursor; every filter and page has its own URL.
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
	v.Items, v.Endpoints = list.Data, eps.Data
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

type endpointRow struct {
	endpoint
	Health         endpointHealth
	RecentFailures []delivery
	// RecoverSince is the start of the failed window the one-step
	// recovery offers: the failing streak's first failure.
	RecoverSince string
}

type endpointsView struct {
	Endpoints  []endpointRow
	EventTypes []string
}

// endpoints lists the endpoints with their health and recent failed
// deliveries, and the form that registers one.
func (cs *Console) endpoints(c *gin.Context, s *session) {
	ctx := c.Request.Context()
	var eps struct {
		Data []endpoint `json:"data"`
	}
	if err := cs.client.call(ctx, s.bearer, http.MethodGet, webhooksAPI+"/endpoints", nil, nil, "", &eps); err != nil {
		cs.apiRefusal(c, s, err, cs.path("/endpoints"))
		return
	}
	v := endpointsView{EventTypes: eventTypes}
	for _, e := range eps.Data {
		row := endpointRow{endpoint: e}
		var health struct {
			Data endpointHealth `json:"data"`
		}
		if err := cs.client.call(ctx, s.bearer, http.MethodGet, webhooksAPI+"/endpoints/"+e.ID+"/health", nil, nil, "", &health); err != nil {
			cs.apiRefusal(c, s, err, cs.path("/endpoints"))
			return
		}
		row.Health = health.Data
		var failed struct {
			Data []delivery `json:"data"`
		}
		q := url.Values{"endpointId": {e.ID}, "status": {"failed"}, "limit": {"5"}}
		if err := cs.client.call(ctx, s.bearer, http.MethodGet, webhooksAPI+"/deliveries", q, nil, "", &failed); err != nil {
			cs.apiRefusal(c, s, err, cs.path("/endpoints"))
			return
		}
		row.RecentFailures = failed.Data
		if since, ok := failedWindowStart(e, row.Health, failed.Data, cs.now()); ok {
			row.RecoverSince = since.Format(windowLayout)
		}
		v.Endpoints = append(v.Endpoints, row)
	}
	cs.render(c, http.StatusOK, "endpoints", cs.frame(c, s, "endpoints", v))
}

// failedWindowStart is where the failed window of an endpoint begins: the
// first failure of its current streak, else of the streak that disabled it,
// else its oldest recent failed delivery; false when nothing failed. It is
// kept within the API's 7-day recovery window.
func failedWindowStart(e endpoint, h endpointHealth, failed []delivery, now time.Time) (time.Time, bool) {
	var since time.Time
	switch {
	case h.FailingSince != nil:
		since = *h.FailingSince
	case len(e.OperationalEvents) > 0 && e.Status != "enabled":
		ev := e.OperationalEvents[len(e.OperationalEvents)-1]
		since = ev.At
		if ev.FailingSince != nil {
			since = *ev.FailingSince
		}
	case len(failed) > 0:
		since = failed[len(failed)-1].CreatedAt
	default:
		return time.Time{}, false
	}
	// The window is [since, until) to the second: start a second early so
	// the first failure's own delivery is inside it.
	since = since.UTC().Truncate(time.Second).Add(-time.Second)
	if oldest := now.Add(-maxRecoveryWindow + time.Minute).UTC().Truncate(time.Second); since.Before(oldest) {
		since = oldest
	}
	return since, true
}

// maxRecoveryWindow is the webhooks API's longest recovery window.
const maxRecoveryWindow = 7 * 24 * time.Hour

// chosenEventTypes reads the event-type picker of a form: the types chosen,
// or every type when none is and the "every type" box is ticked. ok is
// false, with the refusal, otherwise.
func (cs *Console) chosenEventTypes(f url.Values, back string) ([]string, *refusal) {
	types := f["eventTypes"]
	for _, t := range types {
		if !contains(eventTypes, t) {
			return nil, &refusal{Status: http.StatusBadRequest, Code: "unknown_event_type", Back: back,
				Title: "Unknown event type", Detail: fmt.Sprintf("%q is not a case event type. Nothing was changed.", t)}
		}
	}
	if len(types) == 0 && f.Get("allTypes") != "yes" {
		return nil, &refusal{Status: http.StatusBadRequest, Code: "all_types_unconfirmed", Back: back,
			Title: "Choose event types", Detail: "No event type was chosen, which subscribes the endpoint to every type, now and future. Tick the confirmation to do that, or choose types. Nothing was changed."}
	}
	return types, nil
}

// createEndpoint registers an endpoint through POST /api/webhooks/endpoints.
// An empty choice of event types subscribes to every type, which the page
// warns about and the form must confirm.
func (cs *Console) createEndpoint(c *gin.Context, s *session) {
	f := c.Request.PostForm
	key := f.Get("key")
	if !validFormKey(key) {
		cs.refuse(c, s, refusalBadForm(fmt.Errorf("bad key")))
		return
	}
	types, bad := cs.chosenEventTypes(f, cs.path("/endpoints"))
	if bad != nil {
		cs.refuse(c, s, *bad)
		return
	}
	body := map[string]any{"url": strings.TrimSpace(f.Get("url")), "description": f.Get("description")}
	if len(types) > 0 {
		body["eventTypes"] = types
	}
	var got struct {
		Data endpoint `json:"data"`
	}
	if err := cs.client.call(c.Request.Context(), s.bearer, http.MethodPost, webhooksAPI+"/endpoints", nil, body, key, &got); err != nil {
		cs.apiRefusal(c, s, err, cs.path("/endpoints"))
		return
	}
	cs.audit(c, s.Link.Scope, AuditEntry{Action: "endpoint_created", Actor: s.Link.ID, Link: s.Link.ID, Detail: got.Data.ID + " " + got.Data.URL})
	c.Redirect(http.StatusSeeOther, cs.path("/endpoints")+"#"+got.Data.ID)
}

func (cs *Console) setEnabled(enable bool) func(*gin.Context, *session) {
	verb := map[bool]string{true: "enable", false: "disable"}[enable]
	return func(c *gin.Context, s *session) {
		id := c.Param("id")
		if !validID(id) {
			cs.refuse(c, s, refusalBadForm(fmt.Errorf("bad id")))
			return
		}
		if err := cs.client.call(c.Request.Context(), s.bearer, http.MethodPost, webhooksAPI+"/endpoints/"+id+"/"+verb, nil, struct{}{}, "", nil); err != nil {
			cs.apiRefusal(c, s, err, cs.path("/endpoints"))
			return
		}
		cs.audit(c, s.Link.Scope, AuditEntry{Action: "endpoint_" + verb + "d", Actor: s.Link.ID, Link: s.Link.ID, Detail: id})
		c.Redirect(http.StatusSeeOther, cs.path("/endpoints")+"#"+id)
	}
}

type editView struct {
	Endpoint   endpoint
	EventTypes []string
	Chosen     map[string]bool
}

// editEndpoint shows an endpoint's form: URL, description and the event
// types, the current ones ticked.
func (cs *Console) editEndpoint(c *gin.Context, s *session) {
	id := c.Param("id")
	if !validID(id) {
		cs.refuse(c, s, refusal{Status: http.StatusNotFound, Code: "not_found", Title: "No such endpoint", Detail: "That is not an endpoint id.", Back: cs.path("/endpoints")})
		return
	}
	var ep struct {
		Data endpoint `json:"data"`
	}
	if err := cs.client.call(c.Request.Context(), s.bearer, http.MethodGet, webhooksAPI+"/endpoints/"+id, nil, nil, "", &ep); err != nil {
		cs.apiRefusal(c, s, err, cs.path("/endpoints"))
		return
	}
	v := editView{Endpoint: ep.Data, EventTypes: eventTypes, Chosen: map[string]bool{}}
	for _, t := range ep.Data.EventTypes {
		v.Chosen[t] = true
	}
	cs.render(c, http.StatusOK, "edit", cs.frame(c, s, "endpoints", v))
}

// updateEndpoint changes an endpoint through PATCH /api/webhooks/endpoints/{id}:
// the URL, the description and the event types (every type, [], only when
// the form confirms it).
func (cs *Console) updateEndpoint(c *gin.Context, s *session) {
	id := c.Param("id")
	if !validID(id) {
		cs.refuse(c, s, refusalBadForm(fmt.Errorf("bad id")))
		return
	}
	f := c.Request.PostForm
	back := cs.path("/endpoints/" + id + "/edit")
	types, bad := cs.chosenEventTypes(f, back)
	if bad != nil {
		cs.refuse(c, s, *bad)
		return
	}
	if types == nil {
		types = []string{}
	}
	body := map[string]any{"url": strings.TrimSpace(f.Get("url")), "description": f.Get("description"), "eventTypes": types}
	var got struct {
		Data endpoint `json:"data"`
	}
	if err := cs.client.call(c.Request.Context(), s.bearer, http.MethodPatch, webhooksAPI+"/endpoints/"+id, nil, body, "", &got); err != nil {
		cs.apiRefusal(c, s, err, back)
		return
	}
	detail := got.Data.ID + " " + got.Data.URL + " types: all"
	if len(got.Data.EventTypes) > 0 {
		detail = got.Data.ID + " " + got.Data.URL + " types: " + strings.Join(got.Data.EventTypes, ", ")
	}
	cs.audit(c, s.Link.Scope, AuditEntry{Action: "endpoint_updated", Actor: s.Link.ID, Link: s.Link.ID, Detail: detail})
	c.Redirect(http.StatusSeeOther, cs.path("/endpoints")+"#"+id)
}

// sendTestEvent sends a test event of the chosen type through
// POST /api/webhooks/endpoints/{id}/test and shows its delivery.
func (cs *Console) sendTestEvent(c *gin.Context, s *session) {
	id := c.Param("id")
	f := c.Request.PostForm
	key, typ := f.Get("key"), f.Get("type")
	if !validID(id) || !validFormKey(key) {
		cs.refuse(c, s, refusalBadForm(fmt.Errorf("bad id or key")))
		return
	}
	var got struct {
		Data delivery `json:"data"`
	}
	if err := cs.client.call(c.Request.Context(), s.bearer, http.MethodPost, webhooksAPI+"/endpoints/"+id+"/test", nil, map[string]string{"type": typ}, key, &got); err != nil {
		cs.apiRefusal(c, s, err, cs.path("/endpoints"))
		return
	}
	cs.audit(c, s.Link.Scope, AuditEntry{Action: "test_event_sent", Actor: s.Link.ID, Link: s.Link.ID,
		Detail: fmt.Sprintf("%s to %s as %s", got.Data.EventType, id, got.Data.ID)})
	c.Redirect(http.StatusSeeOther, cs.path("/deliveries/"+got.Data.ID))
}

type recoverView struct {
	Endpoint endpoint
	// Enable: the endpoint is disabled and the session may enable it, so
	// the confirmation re-enables it and replays in one request.
	Enable  bool
	Since   string
	Until   string
	Counted bool
	Count   int
	AtLeast bool
	Error   string
}

// windowLayout is how the recovery form's datetime-local inputs spell a
// moment, read as UTC.
const windowLayout = "2006-01-02T15:04:05"

func parseWindow(s string) (time.Time, bool) {
	for _, layout := range []string{windowLayout, "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// maxCount bounds the count shown before a recovery: past it the page says
// "at least".
const maxCount = 1000

// recoverPreview shows the recovery form and, for a window, the number of
// deliveries it would replay (those that ended without a 2xx: failed and
// cancelled), counted through the deliveries API before anything starts.
func (cs *Console) recoverPreview(c *gin.Context, s *session) {
	id := c.Param("id")
	if !validID(id) {
		cs.refuse(c, s, refusal{Status: http.StatusNotFound, Code: "not_found", Title: "No such endpoint", Detail: "That is not an endpoint id.", Back: cs.path("/endpoints")})
		return
	}
	ctx := c.Request.Context()
	var ep struct {
		Data endpoint `json:"data"`
	}
	if err := cs.client.call(ctx, s.bearer, http.MethodGet, webhooksAPI+"/endpoints/"+id, nil, nil, "", &ep); err != nil {
		cs.apiRefusal(c, s, err, cs.path("/endpoints"))
		return
	}
	v := recoverView{Endpoint: ep.Data, Since: c.Query("since"), Until: c.Query("until"), Enable: ep.Data.Status != "enabled" && s.can(CapManageEndpoints)}
	if v.Since != "" && v.Until == "" {
		v.Until = cs.now().UTC().Format(windowLayout) // "until now", the one-step recovery's window
	}
	if v.Since != "" || v.Until != "" {
		since, ok1 := parseWindow(v.Since)
		until, ok2 := parseWindow(v.Until)
		switch {
		case !ok1 || !ok2:
			v.Error = "Give both times as YYYY-MM-DDTHH:MM:SS in UTC."
		case !since.Before(until):
			v.Error = "The start must be before the end."
		default:
			n, more, err := cs.countRecoverable(c, s, id, since, until)
			if err != nil {
				cs.apiRefusal(c, s, err, cs.path("/endpoints"))
				return
			}
			v.Counted, v.Count, v.AtLeast = true, n, more
		}
	}
	cs.render(c, http.StatusOK, "recover", cs.frame(c, s, "endpoints", v))
}

func (cs *Console) countRecoverable(c *gin.Context, s *session, endpointID string, since, until time.Time) (int, bool, error) {
	n := 0
	for _, status := range []string{"failed", "cancelled"} {
		cursor := ""
		for {
			q := url.Values{"endpointId": {endpointID}, "status": {status}, "limit": {"100"},
				"since": {since.Format(time.RFC3339)}, "until": {until.Format(time.RFC3339)}}
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			var page struct {
				Data       []delivery `json:"data"`
				NextCursor string     `json:"nextCursor"`
			}
			if err := cs.client.call(c.Request.Context(), s.bearer, http.MethodGet, webhooksAPI+"/deliveries", q, nil, "", &page); err != nil {
				return 0, false, err
			}
			n += len(page.Data)
			if n >= maxCount {
				return n, true, nil
			}
			if page.NextCursor == "" {
				break
			}
			cursor = page.NextCursor
		}
	}
	return n, false, nil
}

// recover starts the recovery through POST .../recover.
func (cs *Console) recover(c *gin.Context, s *session) {
	id := c.Param("id")
	f := c.Request.PostForm
	since, ok1 := parseWindow(f.Get("since"))
	until, ok2 := parseWindow(f.Get("until"))
	if !validID(id) || !ok1 || !ok2 || !validFormKey(f.Get("key")) {
		cs.refuse(c, s, refusalBadForm(fmt.Errorf("bad recovery form")))
		return
	}
	var got struct {
		Data recovery `json:"data"`
	}
	body := map[string]any{"since": since.Format(time.RFC3339), "until": until.Format(time.RFC3339)}
	enable := f.Get("enable") == "yes"
	if enable {
		// Turning the endpoint on is an endpoint change: the session must
		// be allowed to make it.
		if !s.can(CapManageEndpoints) {
			cs.refuse(c, s, cs.refusalCapability(CapManageEndpoints))
			return
		}
		body["enable"] = true
	}
	if err := cs.client.call(c.Request.Context(), s.bearer, http.MethodPost, webhooksAPI+"/endpoints/"+id+"/recover", nil, body, f.Get("key"), &got); err != nil {
		cs.apiRefusal(c, s, err, cs.path("/endpoints/"+id+"/recover"))
		return
	}
	if enable {
		cs.audit(c, s.Link.Scope, AuditEntry{Action: "endpoint_enabled", Actor: s.Link.ID, Link: s.Link.ID, Detail: id + " (to recover its failures)"})
	}
	cs.audit(c, s.Link.Scope, AuditEntry{Action: "recovery_started", Actor: s.Link.ID, Link: s.Link.ID,
		Detail: fmt.Sprintf("%s on %s from %s to %s", got.Data.ID, id, body["since"], body["until"])})
	c.Redirect(http.StatusSeeOther, cs.path("/deliveries")+"?"+url.Values{"endpointId": {id}}.Encode())
}

type keyRow struct {
	jwk
	Created string
	// The rotation facts of GET /api/webhooks/keys/status.
	State         string
	ActivatesAt   *time.Time
	RetiresAt     *time.Time
	UnpublishedAt *time.Time
	SignsNow      bool
	// SignedNewest: this key signed the newest attempt to this partner.
	SignedNewest bool
}

type keyStatus struct {
	Kid           string     `json:"kid"`
	State         string     `json:"state"`
	ActivatesAt   *time.Time `json:"activatesAt"`
	RetiresAt     *time.Time `json:"retiresAt"`
	UnpublishedAt *time.Time `json:"unpublishedAt"`
	SignsNow      bool       `json:"signsNow"`
}

type keysView struct {
	// Conformance is the key set of the published conformance vectors'
	// key A, which signs the Events page's examples (Verify only).
	Conformance map[string]any
	Keys        []keyRow
	LatestKey   string
	LatestAt    *time.Time
	LatestID    string
	JWKS        map[string]any
	Environment string
}

// keys lists the JWKS of the session's environment by kid with each key's
// rotation state and dates, and which key signs now. Viewing the keys is
// audited.
func (cs *Console) keys(c *gin.Context, s *session) {
	v, err := cs.loadKeys(c, s)
	if err != nil {
		cs.apiRefusal(c, s, err, cs.path("/keys"))
		return
	}
	var status struct {
		Data []keyStatus `json:"data"`
	}
	if err := cs.client.call(c.Request.Context(), "", http.MethodGet, webhooksAPI+"/keys/status", url.Values{"environment": {v.Environment}}, nil, "", &status); err != nil {
		cs.apiRefusal(c, s, err, cs.path("/keys"))
		return
	}
	for i, k := range v.Keys {
		for _, st := range status.Data {
			if st.Kid == k.Kid {
				v.Keys[i].State, v.Keys[i].ActivatesAt, v.Keys[i].RetiresAt, v.Keys[i].UnpublishedAt, v.Keys[i].SignsNow =
					st.State, st.ActivatesAt, st.RetiresAt, st.UnpublishedAt, st.SignsNow
			}
		}
	}
	kids := make([]string, 0, len(v.Keys))
	for _, k := range v.Keys {
		kids = append(kids, k.Kid)
	}
	cs.audit(c, s.Link.Scope, AuditEntry{Action: "keys_viewed", Actor: s.Link.ID, Link: s.Link.ID, Detail: v.Environment + ": " + strings.Join(kids, ", ")})
	cs.render(c, http.StatusOK, "keys", cs.frame(c, s, "keys", v))
}

func (cs *Console) loadKeys(c *gin.Context, s *session) (keysView, error) {
	ctx := c.Request.Context()
	v := keysView{Environment: s.Link.Scope.Environment}
	var set struct {
		Keys []jwk `json:"keys"`
	}
	if err := cs.client.call(ctx, "", http.MethodGet, webhooksAPI+"/keys", url.Values{"environment": {v.Environment}}, nil, "", &set); err != nil {
		return v, err
	}
	var recent struct {
		Data []delivery `json:"data"`
	}
	if err := cs.client.call(ctx, s.bearer, http.MethodGet, webhooksAPI+"/deliveries", url.Values{"limit": {"10"}}, nil, "", &recent); err != nil {
		return v, err
	}
	for _, d := range recent.Data {
		if d.AttemptCount == 0 {
			continue
		}
		var got struct {
			Data delivery `json:"data"`
		}
		if err := cs.client.call(ctx, s.bearer, http.MethodGet, webhooksAPI+"/deliveries/"+d.ID, nil, nil, "", &got); err != nil {
			return v, err
		}
		if n := len(got.Data.Attempts); n > 0 {
			last := got.Data.Attempts[n-1]
			v.LatestKey, v.LatestAt, v.LatestID = last.KeyID, &last.StartedAt, d.ID
		}
		break
	}
	for _, k := range set.Keys {
		row := keyRow{jwk: k, SignedNewest: k.Kid != "" && k.Kid == v.LatestKey}
		if parts := strings.Split(k.Kid, "_"); len(parts) == 4 {
			row.Created = parts[2]
		}
		v.Keys = append(v.Keys, row)
	}
	sort.Slice(v.Keys, func(i, j int) bool { return v.Keys[i].Kid > v.Keys[j].Kid })
	if set.Keys == nil {
		set.Keys = []jwk{}
	}
	v.JWKS = map[string]any{"keys": set.Keys}
	return v, nil
}

// verify is the in-browser verification page: its module checks a pasted
// delivery against the published keys, embedded in the page as data.
func (cs *Console) verify(c *gin.Context, s *session) {
	v, err := cs.loadKeys(c, s)
	if err != nil {
		cs.apiRefusal(c, s, err, cs.path("/verify"))
		return
	}
	examples, err := exampleCatalogue()
	if err == nil {
		err = json.Unmarshal([]byte(examples.Published), &v.Conformance)
	}
	if err != nil {
		cs.fail(c, s, err)
		return
	}
	cs.render(c, http.StatusOK, "verify", cs.frame(c, s, "verify", v))
}

type compatRow struct {
	Route            string
	Family           string
	Successor        string
	First, Last      time.Time
	Count            int64
	Last24h, Last30d int64
	Sample           string // the request id of the latest call
	Credentials      []string
	Sunset           time.Time
	Extension        time.Time // an approved later deadline for this partner; zero: none
	Brownouts        []span
	Stage            string // warn, brownout or retired
	Status           string
}

type span struct{ Start, End time.Time }

type compatView struct {
	Rows      []compatRow
	Enabled   bool
	Missing   string
	Announced bool
}

// compatibilityUsage is the answer of GET /api/compatibility/usage, the
// edge's partner-scoped read of its legacy-use ledger (api/openapi.yaml).
type compatibilityUsage struct {
	Data struct {
		AnnouncementsEnabled bool `json:"announcementsEnabled"`
		Routes               []struct {
			Route           string     `json:"route"`
			Family          string     `json:"family"`
			Successor       string     `json:"successor"`
			FirstCallAt     time.Time  `json:"firstCallAt"`
			LastCallAt      time.Time  `json:"lastCallAt"`
			Calls           int64      `json:"calls"`
			CallsLast24h    int64      `json:"callsLast24h"`
			CallsLast30d    int64      `json:"callsLast30d"`
			SampleRequestID string     `json:"sampleRequestId"`
			Sunset          *time.Time `json:"sunset"`
			Extension       *time.Time `json:"extension"`
			Stage           string     `json:"stage"`
			Brownouts       []span     `json:"brownouts"`
			Credentials     []struct {
				ID    string `json:"id"`
				Label string `json:"label"`
			} `json:"credentials"`
		} `json:"routes"`
	} `json:"data"`
}

// compatibility lists the deprecated routes this partner's credentials
// called, with the successor and the Sunset that applies to this partner,
// as the edge's public GET /api/compatibility/usage answers the session's
// credential: the partner's own use, and nothing of another's.
func (cs *Console) compatibility(c *gin.Context, s *session) {
	var u compatibilityUsage
	if err := cs.client.call(c.Request.Context(), s.bearer, http.MethodGet, "/api/compatibility/usage", nil, nil, "", &u); err != nil {
		cs.apiRefusal(c, s, err, cs.path("/deliveries"))
		return
	}
	v := compatView{Enabled: u.Data.AnnouncementsEnabled}
	for _, r := range u.Data.Routes {
		row := compatRow{Route: r.Route, Family: r.Family, Successor: r.Successor, First: r.FirstCallAt, Last: r.LastCallAt,
			Count: r.Calls, Last24h: r.CallsLast24h, Last30d: r.CallsLast30d, Sample: r.SampleRequestID,
			Brownouts: r.Brownouts, Stage: r.Stage, Status: "fine: no retirement date is announced for this route"}
		for _, cr := range r.Credentials {
			label := cr.ID
			if cr.Label != "" {
				label += " (" + cr.Label + ")"
			}
			row.Credentials = append(row.Credentials, label)
		}
		if r.Extension != nil {
			row.Extension = *r.Extension
		}
		if r.Sunset != nil {
			row.Sunset = *r.Sunset
			row.Status = "fix by " + row.Sunset.UTC().Format(time.DateOnly)
			if !cs.now().Before(row.Sunset) {
				row.Status = "past its Sunset of " + row.Sunset.UTC().Format(time.DateOnly) + ": calls may be refused with 410; fix now"
			}
			v.Announced = true
		}
		v.Rows = append(v.Rows, row)
	}
	cs.render(c, http.StatusOK, "compatibility", cs.frame(c, s, "compatibility", v))
}

// auditPage shows the partner's console trail, newest first.
func (cs *Console) auditPage(c *gin.Context, s *session) {
	entries, err := cs.store.AuditTrail(c.Request.Context(), s.Link.Scope, 200)
	if err != nil {
		cs.fail(c, s, err)
		return
	}
	cs.render(c, http.StatusOK, "audit", cs.frame(c, s, "audit", entries))
}

// eventTypes are the case event types of api/events' case-event-v2 schema:
// the endpoint form's picker.
var eventTypes = mustEventTypes()

func mustEventTypes() []string {
	types, err := api.CaseEventTypes()
	if err != nil {
		panic(err)
	}
	return types
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
