package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

type endpointHealthView struct {
	EndpointID string    `json:"endpointId"`
	Status     string    `json:"status"`
	Since      time.Time `json:"since"` // the start of the oldest clock hour counted
	Until      time.Time `json:"until"`
	Attempts   int64     `json:"attempts"`
	Successes  int64     `json:"successes"`
	// SuccessRate is successes / attempts; null without attempts.
	SuccessRate  *float64 `json:"successRate"`
	LatencyAvgMs int64    `json:"latencyAvgMs"`
	LatencyP95Ms int64    `json:"latencyP95Ms"`
	// The failing streak, from the endpoint's record: the first failure,
	// the failures since, and when the streak disables the endpoint if
	// failures go on.
	FailingSince        *time.Time `json:"failingSince,omitempty"`
	ConsecutiveFailures int        `json:"consecutiveFailures"`
	DisableAt           *time.Time `json:"disableAt,omitempty"`
	DisableMinFailures  int        `json:"disableMinFailures"`
	RecoverAfter        int        `json:"recoverAfterSuccesses"`
	// Window is the span of Hours: "24h" (the default) or "7d".
	Window string           `json:"window"`
	Hours  []healthHourView `json:"hours"`
}

// healthHourView is one clock hour of the window, oldest first.
type healthHourView struct {
	Start     time.Time `json:"start"`
	Attempts  int64     `json:"attempts"`
	Successes int64     `json:"successes"`
	// SuccessRate is successes / attempts; null without attempts.
	SuccessRate  *float64 `json:"successRate"`
	LatencyP50Ms int64    `json:"latencyP50Ms"`
	LatencyP95Ms int64    `json:"latencyP95Ms"`
}

// healthWindows are the windows ?window= takes, in clock hours.
var healthWindows = map[string]int{"24h": 24, "7d": store.HistoryHours}

func rate(successes, attempts int64) *float64 {
	if attempts == 0 {
		return nil
	}
	r := float64(successes) / float64(attempts)
	return &r
}

// endpointHealth serves GET /endpoints/{id}/health: the endpoint's attempts
// over the last 24 clock hours (success rate, latency) and its failing
// streak with the time the senders will disable it if it keeps failing.
//
// ?window=24h (the default) or 7d gives the attempts hour by hour over that
// window too, the console's charts.
func (h *handlers) endpointHealth(c *gin.Context) {
	window := c.DefaultQuery("window", "24h")
	hours, ok := healthWindows[window]
	if !ok {
		_ = c.Error(problem.New(InvalidQuery, "window must be 24h or 7d."))
		return
	}
	hl, err := h.uc.EndpointHealth(c.Request.Context(), scopeOf(c), c.Param("id"), hours)
	if err != nil {
		_ = c.Error(err)
		return
	}
	ep, f := hl.Endpoint, hl.Figures
	v := endpointHealthView{EndpointID: ep.ID, Status: string(ep.Status), Since: f.Since, Until: hl.At.UTC().Truncate(time.Millisecond),
		Attempts: f.Attempts, Successes: f.Successes, LatencyAvgMs: f.LatencyAvgMs, LatencyP95Ms: f.LatencyP95Ms,
		ConsecutiveFailures: ep.Health.Failures, DisableMinFailures: hl.Policy.MinFailures, RecoverAfter: hl.Policy.RecoverAfter,
		DisableAt: optTime(hl.DisableAt), SuccessRate: rate(f.Successes, f.Attempts), Window: window,
		Hours: make([]healthHourView, len(hl.Hours))}
	for i, hr := range hl.Hours {
		v.Hours[i] = healthHourView{Start: hr.Start, Attempts: hr.Attempts, Successes: hr.Successes,
			SuccessRate: rate(hr.Successes, hr.Attempts), LatencyP50Ms: hr.LatencyP50Ms, LatencyP95Ms: hr.LatencyP95Ms}
	}
	if ep.Health.Failing() {
		v.FailingSince = optTime(ep.Health.FailingSince)
	}
	data(c, http.StatusOK, v)
}
