// The recovery pages: preview a failed window's deliveries, start a bulk
// recovery of them, and follow it.

package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
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
	c.Redirect(http.StatusSeeOther, cs.path("/endpoints/"+id+"/recoveries/"+got.Data.ID))
}

// progressView is a recovery's progress page: the job as the webhooks
// API reports it now, and the endpoint it replays to.
type progressView struct {
	Endpoint endpoint
	Job      recovery
	// Deliveries lists the endpoint's deliveries, the replays among them.
	Deliveries string
	// Again starts a recovery of the rest of the window, once the job
	// stopped at its replay limit.
	Again string
}

// Running: the recovery is still reading its window.
func (v progressView) Running() bool { return v.Job.Status == "running" }

// Finished: nothing will change any more: the scan has ended and no
// replay is waiting to be sent. recovery.js stops asking then.
func (v progressView) Finished() bool { return !v.Running() && v.Job.Replays.Scheduled == 0 }

// Sent is how many of the queued replays have an outcome.
func (v progressView) Sent() int {
	return v.Job.Replays.Delivered + v.Job.Replays.Failed + v.Job.Replays.Cancelled
}

// ScanMax and ScanValue draw how much of the window has been read; an
// empty window is all read once the recovery has ended.
func (v progressView) ScanMax() int { return max(v.Job.Total, 1) }
func (v progressView) ScanValue() int {
	if v.Job.Total == 0 && !v.Running() {
		return 1
	}
	return v.Job.Scanned
}

// SentMax and SentValue draw how many of the queued replays were sent to
// an outcome; none to send is all sent once the recovery has ended.
func (v progressView) SentMax() int { return max(v.Job.Scheduled, 1) }
func (v progressView) SentValue() int {
	if v.Job.Scheduled == 0 && !v.Running() {
		return 1
	}
	return v.Sent()
}

// Summary says the figures in one sentence, the one the page's live
// region announces: how many replays of how many were queued and how many
// delivered. How many the recovery will queue is known only once it has
// read its whole window; until then the sentence says how far it has
// read.
func (v progressView) Summary() string {
	j := v.Job
	var b strings.Builder
	if v.Running() {
		fmt.Fprintf(&b, "%d queued so far (%d of %d deliveries in the window read), %d delivered", j.Scheduled, j.Scanned, j.Total, j.Replays.Delivered)
	} else {
		fmt.Fprintf(&b, "%d of %d queued, %d delivered", j.Scheduled, j.Scheduled, j.Replays.Delivered)
	}
	if j.Replays.Failed > 0 {
		fmt.Fprintf(&b, ", %d failed", j.Replays.Failed)
	}
	if j.Replays.Cancelled > 0 {
		fmt.Fprintf(&b, ", %d cancelled", j.Replays.Cancelled)
	}
	if j.Replays.Scheduled > 0 {
		fmt.Fprintf(&b, ", %d being sent", j.Replays.Scheduled)
	}
	b.WriteString(".")
	switch {
	case j.Status == "cancelled":
		fmt.Fprintf(&b, " The recovery was cancelled (%s) before it read the whole window.", strings.ReplaceAll(j.CancelReason, "_", " "))
	case v.Finished():
		b.WriteString(" Done.")
	}
	return b.String()
}

// recoveryProgress shows a recovery as the webhooks API reports it now:
// how far it has read its window, how many replays it has queued and
// what became of them. recovery.js asks for the page again while it
// changes and shows its figures live; without script a reload shows the
// same, since the page is all there is.
func (cs *Console) recoveryProgress(c *gin.Context, s *session) {
	id, rid := c.Param("id"), c.Param("recoveryId")
	if !validID(id) || !validID(rid) {
		cs.refuse(c, s, refusal{Status: http.StatusNotFound, Code: "not_found", Title: "No such recovery", Detail: "That is not a recovery id.", Back: cs.path("/endpoints")})
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
	var job struct {
		Data recovery `json:"data"`
	}
	if err := cs.client.call(ctx, s.bearer, http.MethodGet, webhooksAPI+"/endpoints/"+id+"/recoveries/"+rid, nil, nil, "", &job); err != nil {
		cs.apiRefusal(c, s, err, cs.path("/endpoints"))
		return
	}
	v := progressView{Endpoint: ep.Data, Job: job.Data, Deliveries: cs.path("/deliveries") + "?" + url.Values{"endpointId": {id}}.Encode()}
	if v.Job.LimitReached && v.Job.NextSince != nil {
		v.Again = cs.path("/endpoints/"+id+"/recover") + "?" + url.Values{"since": {v.Job.NextSince.UTC().Format(windowLayout)},
			"until": {v.Job.Until.UTC().Format(windowLayout)}}.Encode()
	}
	cs.render(c, http.StatusOK, "recovery", cs.frame(c, s, "endpoints", v))
}
