// GET /policy: each family's dates, stage, window and brownouts, and an
// integration's own window with its extensions.

package admin

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
)

func toFamilyView(w *policy.Window, ids []string, now time.Time) familyView {
	v := familyView{Family: w.Family, GA: w.GA.String(), Source: w.Source, Invalid: w.Invalid, Stage: w.Stage,
		Brownouts: []spanView{}, Extensions: []extensionView{}}
	for _, b := range w.Brownouts {
		v.Brownouts = append(v.Brownouts, spanView{b.Start, b.End})
	}
	for _, id := range w.SortedExtensions() {
		v.Extensions = append(v.Extensions, extensionView{id, w.Extensions[id].String()})
	}
	if !w.GA.IsZero() {
		v.WindowEnd = w.End(nil).Format(time.DateOnly)
		if len(ids) > 0 {
			v.IntegrationWindowEnd = w.End(ids).Format(time.DateOnly)
		}
		if next, ok := w.NextMilestone(nil, ids, now); ok {
			v.NextMilestone = &milestoneView{string(next.Milestone), next.At}
		}
	}
	return v
}

// getPolicy answers the effective policy, per family; with
// ?integration=<credential or partner id> (repeatable) also that
// integration's window end and next milestone. ?family= narrows it.
func (a *API) getPolicy(c *gin.Context) {
	p := a.Policy()
	ids := c.QueryArray("integration")
	view := policyView{Enabled: p.Enabled, Integrations: ids, Families: []familyView{}}
	only := inventory.Family(c.Query("family"))
	if only != "" && !only.Valid() {
		_ = c.Error(invalid("Family %q is not v2-filings, v2-cases or website-cases.", problem.Clip(string(only))))
		return
	}
	for _, w := range p.Windows() {
		if only == "" || w.Family == only {
			view.Families = append(view.Families, toFamilyView(w, ids, a.Now()))
		}
	}
	c.JSON(http.StatusOK, gin.H{"data": view, "requestId": requestid.Get(c)})
}
