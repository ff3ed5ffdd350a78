package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/services/webhooks/internal/selfservice"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

type recoverRequest struct {
	Since *time.Time `json:"since"`
	Until *time.Time `json:"until"`
	// Enable turns a disabled endpoint back on first, so "re-enable and
	// replay what failed" is one request; without it a disabled endpoint
	// is refused.
	Enable bool `json:"enable"`
}

type recoveryView struct {
	ID         string    `json:"id"`
	EndpointID string    `json:"endpointId"`
	Since      time.Time `json:"since"`
	Until      time.Time `json:"until"`
	Status     string    `json:"status"`
	Total      int       `json:"total"`
	Scanned    int       `json:"scanned"`
	Scheduled  int       `json:"scheduled"`
	// Replays counts the replays made so far by the status each has now.
	Replays      outcomeCountsView `json:"replays"`
	LimitReached bool              `json:"limitReached"`
	NextSince    *time.Time        `json:"nextSince,omitempty"`
	CancelReason string            `json:"cancelReason,omitempty"`
	CreatedAt    time.Time         `json:"createdAt"`
	UpdatedAt    time.Time         `json:"updatedAt"`
	CompletedAt  *time.Time        `json:"completedAt,omitempty"`
}

func toRecoveryView(r store.Recovery, replays store.OutcomeCounts) recoveryView {
	ms := func(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }
	return recoveryView{ID: r.ID, EndpointID: r.EndpointID, Since: ms(r.Since), Until: ms(r.Until), Status: r.Status,
		Total: r.Total, Scanned: r.Scanned, Scheduled: r.Scheduled, LimitReached: r.LimitReached, NextSince: optTime(r.NextSince),
		Replays:      outcomeCountsView{Scheduled: replays.Scheduled, Delivered: replays.Delivered, Failed: replays.Failed, Cancelled: replays.Cancelled},
		CancelReason: r.CancelReason, CreatedAt: ms(r.CreatedAt), UpdatedAt: ms(r.UpdatedAt), CompletedAt: optTime(r.CompletedAt)}
}

// recoverEndpoint starts a bulk recovery of one endpoint: every delivery of it
// created in the window that ended without a 2xx is replayed, by a worker,
// in the background; the 202 names the job to follow.
func (h *handlers) recoverEndpoint(c *gin.Context) {
	var req recoverRequest
	if err := httpserver.DecodeJSON(c, &req); err != nil {
		_ = c.Error(err)
		return
	}
	var since time.Time
	if req.Since != nil {
		since = *req.Since
	}
	job, err := h.uc.StartRecovery(c.Request.Context(), scopeOf(c), c.Param("id"),
		selfservice.RecoveryRequest{Since: since, Until: req.Until, Enable: req.Enable})
	if err != nil {
		_ = c.Error(err)
		return
	}
	c.Header("Location", "/api/webhooks/endpoints/"+job.EndpointID+"/recoveries/"+job.ID)
	data(c, http.StatusAccepted, toRecoveryView(job, store.OutcomeCounts{})) // nothing replayed yet
}

func (h *handlers) getRecovery(c *gin.Context) {
	p, err := h.uc.Recovery(c.Request.Context(), scopeOf(c), c.Param("id"), c.Param("recoveryId"))
	if err != nil {
		_ = c.Error(err)
		return
	}
	data(c, http.StatusOK, toRecoveryView(p.Job, p.Replays))
}
