// The recovery pages: preview a failed window's deliveries and start a
// bulk recovery of them.

package console

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"
)

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
