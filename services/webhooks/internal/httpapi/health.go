package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
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
}

// endpointHealth serves GET /endpoints/{id}/health: the endpoint's attempts
// over the last 24 clock hours (success rate, latency) and its failing
// streak with the time the senders will disable it if it keeps failing.
func (h *handlers) endpointHealth(c *gin.Context) {
	hl, err := h.uc.EndpointHealth(c.Request.Context(), scopeOf(c), c.Param("id"))
	if err != nil {
		_ = c.Error(err)
		return
	}
	ep, f := hl.Endpoint, hl.Figures
	v := endpointHealthView{EndpointID: ep.ID, Status: string(ep.Status), Since: f.Since, Until: hl.At.UTC().Truncate(time.Millisecond),
		Attempts: f.Attempts, Successes: f.Successes, LatencyAvgMs: f.LatencyAvgMs, LatencyP95Ms: f.LatencyP95Ms,
		ConsecutiveFailures: ep.Health.Failures, DisableMinFailures: hl.Policy.MinFailures, RecoverAfter: hl.Policy.RecoverAfter,
		DisableAt: optTime(hl.DisableAt)}
	if f.Attempts > 0 {
		rate := float64(f.Successes) / float64(f.Attempts)
		v.SuccessRate = &rate
	}
	if ep.Health.Failing() {
		v.FailingSince = optTime(ep.Health.FailingSince)
	}
	data(c, http.StatusOK, v)
}
