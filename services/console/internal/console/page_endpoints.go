// The endpoint pages: the list with each endpoint's health, register,
// enable and disable, edit, and send a test event.

package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

type endpointRow struct {
	endpoint
	Health         endpointHealth
	RecentFailures []delivery
	// RecoverSince is the start of the failed window the one-step
	// recovery offers: the failing streak's first failure.
	RecoverSince string
	// Chart draws the health's hours over the page's window.
	Chart *hourChart
}

type endpointsView struct {
	Endpoints  []endpointRow
	EventTypes []string
	// Window is the charts' span, the API's: "24h" (the default) or "7d".
	Window string
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
	// Another window than 7d is the default one: the page asks the API
	// for no span it does not offer.
	v := endpointsView{EventTypes: eventTypes, Window: "24h"}
	if c.Query("window") == "7d" {
		v.Window = "7d"
	}
	for _, e := range eps.Data {
		row := endpointRow{endpoint: e}
		var health struct {
			Data endpointHealth `json:"data"`
		}
		window := url.Values{"window": {v.Window}}
		if err := cs.client.call(ctx, s.bearer, http.MethodGet, webhooksAPI+"/endpoints/"+e.ID+"/health", window, nil, "", &health); err != nil {
			cs.apiRefusal(c, s, err, cs.path("/endpoints"))
			return
		}
		row.Health = health.Data
		row.Chart = newHourChart(e.ID, v.Window, health.Data.Hours)
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
