package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
)

// deliveryOutcomesView is a partner's deliveries by outcome, hour by hour.
type deliveryOutcomesView struct {
	// Window is the span of Hours: "24h" (the default) or "7d".
	Window string `json:"window"`
	// Since is the start of the oldest hour, Until the instant read.
	Since time.Time         `json:"since"`
	Until time.Time         `json:"until"`
	Hours []outcomeHourView `json:"hours"`
	Total outcomeCountsView `json:"total"`
}

// outcomeCountsView counts deliveries by the status each has now.
type outcomeCountsView struct {
	Scheduled int64 `json:"scheduled"`
	Delivered int64 `json:"delivered"`
	Failed    int64 `json:"failed"`
	Cancelled int64 `json:"cancelled"`
}

// outcomeHourView is the deliveries created in one clock hour.
type outcomeHourView struct {
	Start time.Time `json:"start"`
	outcomeCountsView
}

// deliveryOutcomes serves GET /deliveries/outcomes: the partner's
// deliveries created in each clock hour of the window (?window=24h, the
// default, or 7d), by the status each has now.
func (h *handlers) deliveryOutcomes(c *gin.Context) {
	window := c.DefaultQuery("window", "24h")
	hours, ok := healthWindows[window]
	if !ok {
		_ = c.Error(problem.New(InvalidQuery, "window must be 24h or 7d."))
		return
	}
	o, err := h.uc.DeliveryOutcomes(c.Request.Context(), scopeOf(c), hours)
	if err != nil {
		_ = c.Error(err)
		return
	}
	v := deliveryOutcomesView{Window: window, Until: o.At.UTC().Truncate(time.Millisecond), Hours: make([]outcomeHourView, len(o.Hours))}
	for i, hr := range o.Hours {
		counts := outcomeCountsView{Scheduled: hr.Scheduled, Delivered: hr.Delivered, Failed: hr.Failed, Cancelled: hr.Cancelled}
		v.Hours[i] = outcomeHourView{Start: hr.Start, outcomeCountsView: counts}
		v.Total.Scheduled += counts.Scheduled
		v.Total.Delivered += counts.Delivered
		v.Total.Failed += counts.Failed
		v.Total.Cancelled += counts.Cancelled
	}
	if len(o.Hours) > 0 {
		v.Since = o.Hours[0].Start
	}
	data(c, http.StatusOK, v)
}
