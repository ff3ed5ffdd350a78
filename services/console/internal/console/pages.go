// The audit page, and what the pages share.

package console

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/api"
)

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
