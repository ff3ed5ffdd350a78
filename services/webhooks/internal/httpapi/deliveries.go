package httpapi

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

type deliveryView struct {
	ID            string     `json:"id"`
	EventID       string     `json:"eventId"`
	EventType     string     `json:"eventType"`
	EndpointID    string     `json:"endpointId"`
	Status        string     `json:"status"`
	Trigger       string     `json:"trigger"`
	ReplayOf      string     `json:"replayOf,omitempty"`
	Test          bool       `json:"test,omitempty"` // a test event, signed x-pc-test: true
	AttemptCount  int        `json:"attemptCount"`
	CreatedAt     time.Time  `json:"createdAt"`
	NextAttemptAt *time.Time `json:"nextAttemptAt,omitempty"`
	LastAttemptAt *time.Time `json:"lastAttemptAt,omitempty"`
	LastStatus    int        `json:"lastResponseStatus,omitempty"`
	// RequestBody is the exact body every attempt sent (the event with this
	// delivery's deliveryId), only on the single read.
	RequestBody string         `json:"requestBody,omitempty"`
	Attempts    *[]attemptView `json:"attempts,omitempty"` // only on the single read
}

type attemptView struct {
	Number          int               `json:"number"`
	Trigger         string            `json:"trigger"`
	StartedAt       time.Time         `json:"startedAt"`
	DurationMs      int64             `json:"durationMs"`
	URL             string            `json:"url"`
	KeyID           string            `json:"keyId,omitempty"`
	RequestHeaders  map[string]string `json:"requestHeaders"`
	Status          int               `json:"responseStatus,omitempty"`
	ResponseHeaders map[string]string `json:"responseHeaders,omitempty"`
	ResponseBody    string            `json:"responseBody,omitempty"`
	// ResponseWithheld: an internal receiver (allowlisted in development)
	// answered; its headers and body are not kept.
	ResponseWithheld bool       `json:"responseWithheld,omitempty"`
	Outcome          string     `json:"outcome"`
	ErrorClass       string     `json:"errorClass,omitempty"`
	Error            string     `json:"error,omitempty"`
	NextAttemptAt    *time.Time `json:"nextAttemptAt,omitempty"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC().Truncate(time.Millisecond)
	return &t
}

func toDeliveryView(d store.Delivery) deliveryView {
	return deliveryView{ID: d.ID, EventID: d.EventID, EventType: d.EventType, EndpointID: d.EndpointID, Status: d.Status,
		Trigger: d.Trigger, ReplayOf: d.ReplayOf, Test: d.Test, AttemptCount: d.Attempts, CreatedAt: d.CreatedAt.UTC().Truncate(time.Millisecond),
		NextAttemptAt: optTime(d.NextAttemptAt), LastAttemptAt: optTime(d.LastAttemptAt), LastStatus: d.LastStatus}
}

func toAttemptView(a store.Attempt) attemptView {
	return attemptView{Number: a.Number, Trigger: a.Trigger, StartedAt: a.StartedAt.UTC().Truncate(time.Millisecond), DurationMs: a.DurationMs,
		URL: a.URL, KeyID: a.KeyID, RequestHeaders: a.RequestHeaders, Status: a.Status, ResponseHeaders: a.ResponseHeaders,
		ResponseBody: a.ResponseBody, ResponseWithheld: a.ResponseWithheld, Outcome: a.Outcome, ErrorClass: a.ErrorClass, Error: a.Error, NextAttemptAt: optTime(a.NextAttemptAt)}
}

var deliveryStatuses = []string{store.StatusScheduled, store.StatusDelivered, store.StatusFailed, store.StatusCancelled}

func encodeCursor(c *store.Cursor) string {
	if c == nil {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.CreatedMs, 10) + "." + c.ID))
}

func decodeCursor(s string) (*store.Cursor, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, false
	}
	ms, id, ok := strings.Cut(string(raw), ".")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || id == "" {
		return nil, false
	}
	return &store.Cursor{CreatedMs: n, ID: id}, true
}

func (h *handlers) listDeliveries(c *gin.Context) {
	f := store.Filter{EventID: c.Query("eventId"), EndpointID: c.Query("endpointId"), Status: c.Query("status"),
		EventType: c.Query("eventType"), CaseID: c.Query("caseId")}
	bad := func(detail string) { _ = c.Error(problem.New(InvalidQuery, detail)) }
	if f.Status != "" && !contains(deliveryStatuses, f.Status) {
		bad("status must be one of scheduled, delivered, failed, cancelled.")
		return
	}
	if f.EventType != "" && !contains(EventTypes, f.EventType) {
		bad("eventType must be a case event type of the case-event-v2 schema.")
		return
	}
	if len(f.CaseID) > 160 || len(f.EventID) > 160 || len(f.EndpointID) > 64 {
		bad("caseId and eventId are at most 160 characters, endpointId 64.")
		return
	}
	if v := c.Query("responseStatus"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n > 599 {
			bad("responseStatus must be an HTTP status from 100 to 599.")
			return
		}
		f.ResponseStatus = n
	}
	for name, dst := range map[string]*time.Time{"since": &f.Since, "until": &f.Until} {
		if v := c.Query(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				bad(name + " must be an RFC 3339 date-time.")
				return
			}
			*dst = t
		}
	}
	limit := 25
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			bad("limit must be an integer from 1 to 100.")
			return
		}
		limit = n
	}
	var after *store.Cursor
	if v := c.Query("cursor"); v != "" {
		var ok bool
		if after, ok = decodeCursor(v); !ok {
			bad("cursor is not one this API returned.")
			return
		}
	}
	list, next, err := h.uc.ListDeliveries(c.Request.Context(), scopeOf(c), f, after, limit)
	if err != nil {
		_ = c.Error(err)
		return
	}
	out := make([]deliveryView, 0, len(list))
	for _, d := range list {
		out = append(out, toDeliveryView(d))
	}
	body := gin.H{"data": out, "requestId": requestid.Get(c)}
	if next != nil {
		body["nextCursor"] = encodeCursor(next)
	}
	c.JSON(http.StatusOK, body)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (h *handlers) getDelivery(c *gin.Context) {
	d, atts, err := h.uc.Delivery(c.Request.Context(), scopeOf(c), c.Param("id"))
	if err != nil {
		_ = c.Error(err)
		return
	}
	v := toDeliveryView(d)
	v.RequestBody = string(d.Event.Body(d.ID))
	views := make([]attemptView, 0, len(atts))
	for _, a := range atts {
		views = append(views, toAttemptView(a))
	}
	v.Attempts = &views
	data(c, http.StatusOK, v)
}

// replay sends the event of a delivery again to the same endpoint as a new
// delivery: a new deliveryId, the same eventId, trigger manual.
func (h *handlers) replay(c *gin.Context) {
	d, err := h.uc.Replay(c.Request.Context(), scopeOf(c), c.Param("id"))
	if err != nil {
		_ = c.Error(err)
		return
	}
	c.Header("Location", "/api/webhooks/deliveries/"+d.ID)
	data(c, http.StatusAccepted, toDeliveryView(d))
}
