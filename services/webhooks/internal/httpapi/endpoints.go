package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/selfservice"
)

type createEndpointRequest struct {
	URL         string   `json:"url"`
	EventTypes  []string `json:"eventTypes"`
	Description string   `json:"description"`
}

type patchEndpointRequest struct {
	URL         *string         `json:"url"`
	EventTypes  json.RawMessage `json:"eventTypes"` // absent: unchanged; null or []: every type
	Description *string         `json:"description"`
}

type endpointView struct {
	ID             string    `json:"id"`
	URL            string    `json:"url"`
	EventTypes     []string  `json:"eventTypes"`
	Description    string    `json:"description"`
	Status         string    `json:"status"`
	DisabledReason string    `json:"disabledReason,omitempty"`
	Environment    string    `json:"environment"`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt"`
	// OperationalEvents are what the service did to the endpoint on its
	// own (an automatic disable), oldest first.
	OperationalEvents []operationalEventView `json:"operationalEvents"`
}

type operationalEventView struct {
	Type         string     `json:"type"`
	At           time.Time  `json:"at"`
	Reason       string     `json:"reason"`
	FailingSince *time.Time `json:"failingSince,omitempty"`
	Failures     int        `json:"failures"`
}

func toEndpointView(e endpoints.Endpoint) endpointView {
	types := e.EventTypes
	if types == nil {
		types = []string{}
	}
	evs := make([]operationalEventView, 0, len(e.Events))
	for _, ev := range e.Events {
		evs = append(evs, operationalEventView{Type: ev.Type, At: ev.At.UTC().Truncate(time.Millisecond), Reason: ev.Reason,
			FailingSince: optTime(ev.FailingSince), Failures: ev.Failures})
	}
	return endpointView{ID: e.ID, URL: e.URL, EventTypes: types, Description: e.Description, Status: string(e.Status),
		DisabledReason: e.DisabledReason, Environment: e.Scope.Environment,
		CreatedAt: e.CreatedAt.UTC().Truncate(time.Millisecond), UpdatedAt: e.UpdatedAt.UTC().Truncate(time.Millisecond),
		OperationalEvents: evs}
}

func (h *handlers) listEndpoints(c *gin.Context) {
	list, err := h.uc.ListEndpoints(c.Request.Context(), scopeOf(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	out := make([]endpointView, 0, len(list))
	for _, e := range list {
		out = append(out, toEndpointView(e))
	}
	data(c, http.StatusOK, out)
}

func (h *handlers) createEndpoint(c *gin.Context) {
	var req createEndpointRequest
	if err := httpserver.DecodeJSON(c, &req); err != nil {
		_ = c.Error(err)
		return
	}
	e, err := h.uc.RegisterEndpoint(c.Request.Context(), scopeOf(c),
		selfservice.Registration{URL: req.URL, EventTypes: req.EventTypes, Description: req.Description})
	if err != nil {
		_ = c.Error(err)
		return
	}
	c.Header("Location", c.FullPath()+"/"+e.ID)
	data(c, http.StatusCreated, toEndpointView(e))
}

func (h *handlers) getEndpoint(c *gin.Context) {
	e, err := h.uc.Endpoint(c.Request.Context(), scopeOf(c), c.Param("id"))
	if err != nil {
		_ = c.Error(err)
		return
	}
	data(c, http.StatusOK, toEndpointView(e))
}

func (h *handlers) patchEndpoint(c *gin.Context) {
	var req patchEndpointRequest
	if err := httpserver.DecodeJSON(c, &req); err != nil {
		_ = c.Error(err)
		return
	}
	p := endpoints.Patch{URL: req.URL, Description: req.Description}
	if len(req.EventTypes) > 0 {
		types := []string{}
		if !bytes.Equal(req.EventTypes, []byte("null")) {
			if err := httpserver.DecodeStrict(req.EventTypes, &types); err != nil {
				_ = c.Error(err)
				return
			}
		}
		p.EventTypes = &types
	}
	e, err := h.uc.ChangeEndpoint(c.Request.Context(), scopeOf(c), c.Param("id"), p)
	if err != nil {
		_ = c.Error(err)
		return
	}
	data(c, http.StatusOK, toEndpointView(e))
}

func (h *handlers) deleteEndpoint(c *gin.Context) {
	if err := h.uc.DeleteEndpoint(c.Request.Context(), scopeOf(c), c.Param("id")); err != nil {
		_ = c.Error(err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (h *handlers) setEnabled(enable bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		e, err := h.uc.SetEnabled(c.Request.Context(), scopeOf(c), c.Param("id"), enable)
		if err != nil {
			_ = c.Error(err)
			return
		}
		data(c, http.StatusOK, toEndpointView(e))
	}
}
