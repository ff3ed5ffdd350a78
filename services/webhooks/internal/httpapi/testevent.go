package httpapi

import (
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/events"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

type testEventRequest struct {
	Type string `json:"type"` // "": the catalogue's first type
}

// EventTypes are the case event types of the published case-event-v2
// schema (api/events), the types a test event may take.
var EventTypes = mustEventTypes()

func mustEventTypes() []string {
	types, err := api.CaseEventTypes()
	if err != nil {
		panic(err)
	}
	return types
}

// TestCaseID is the caseId of every test event: it names no case, so a
// receiver that reads the case back learns at once that the event was a
// test.
const TestCaseID = "case_test"

// sendTestEvent serves POST /endpoints/{id}/test: a delivery of a made-up
// event of the chosen type to this one endpoint, signed and retried like
// any other, with trigger test, and signed x-pc-test: true (the mark a
// receiver relies on). Its eventId starts with evt_test_ and its caseId is
// case_test.
func (h *handlers) sendTestEvent(c *gin.Context) {
	var req testEventRequest
	if err := httpserver.DecodeJSON(c, &req); err != nil {
		problem.Render(c, err)
		return
	}
	if req.Type == "" {
		req.Type = EventTypes[0]
	}
	if !slices.Contains(EventTypes, req.Type) {
		problem.Write(c, problem.Newf(InvalidTestEvent, "type %q is not a case event type; the case-event-v2 schema lists them.", problem.Clip(req.Type)))
		return
	}
	ctx := c.Request.Context()
	scope := scopeOf(c)
	ep, err := h.Endpoints.Get(ctx, scope, c.Param("id"))
	if err != nil {
		problem.Render(c, err)
		return
	}
	if ep.Status != endpoints.Enabled {
		problem.Write(c, problem.Newf(EndpointDisabled, "Endpoint %s is %s; enable it before sending it a test event.", ep.ID, ep.Status))
		return
	}
	now := h.Now().UTC()
	ev := events.Body{SchemaVersion: events.BodySchema, EventID: newID("evt_test_"), Sequence: 1, Type: req.Type,
		OccurredAt: now.Format("2006-01-02T15:04:05.000Z"), CaseID: TestCaseID, ExternalCaseID: "test"}
	if _, err := events.ParseBody(ev.Body("")); err != nil { // the checks every consumed event passes
		problem.Render(c, err)
		return
	}
	d := store.Delivery{ID: newID("dlv_"), EventID: ev.EventID, EventType: ev.Type, EndpointID: ep.ID,
		Tenant: scope.Tenant, Environment: scope.Environment, PartnerID: scope.PartnerID, Status: store.StatusScheduled,
		Trigger: store.TriggerTest, Test: true, CreatedAt: now, NextAttemptAt: now, Event: ev}
	if _, err := h.Deliveries.Create(ctx, d); err != nil {
		problem.Render(c, err)
		return
	}
	h.Logger.InfoContext(ctx, "test event scheduled", "delivery", d.ID, "endpoint", ep.ID, "type", ev.Type)
	c.Header("Location", "/api/webhooks/deliveries/"+d.ID)
	data(c, http.StatusAccepted, toDeliveryView(d))
}
