package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/services/webhooks/internal/selfservice"
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

// TestCaseID is the caseId of every test event (selfservice.TestCaseID).
const TestCaseID = selfservice.TestCaseID

// sendTestEvent serves POST /endpoints/{id}/test: a delivery of a made-up
// event of the chosen type to this one endpoint, signed and retried like
// any other, with trigger test, and signed x-pc-test: true (the mark a
// receiver relies on). Its eventId starts with evt_test_ and its caseId is
// case_test.
func (h *handlers) sendTestEvent(c *gin.Context) {
	var req testEventRequest
	if err := httpserver.DecodeJSON(c, &req); err != nil {
		_ = c.Error(err)
		return
	}
	d, err := h.uc.SendTestEvent(c.Request.Context(), scopeOf(c), c.Param("id"), req.Type)
	if err != nil {
		_ = c.Error(err)
		return
	}
	c.Header("Location", "/api/webhooks/deliveries/"+d.ID)
	data(c, http.StatusAccepted, toDeliveryView(d))
}
