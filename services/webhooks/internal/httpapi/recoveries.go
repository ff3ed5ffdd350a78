package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/recovery"
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
	ID           string     `json:"id"`
	EndpointID   string     `json:"endpointId"`
	Since        time.Time  `json:"since"`
	Until        time.Time  `json:"until"`
	Status       string     `json:"status"`
	Total        int        `json:"total"`
	Scanned      int        `json:"scanned"`
	Scheduled    int        `json:"scheduled"`
	LimitReached bool       `json:"limitReached"`
	NextSince    *time.Time `json:"nextSince,omitempty"`
	CancelReason string     `json:"cancelReason,omitempty"`
	CreatedAt    time.Time  `json:"createdAt"`
	UpdatedAt    time.Time  `json:"updatedAt"`
	CompletedAt  *time.Time `json:"completedAt,omitempty"`
}

func toRecoveryView(r store.Recovery) recoveryView {
	ms := func(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }
	return recoveryView{ID: r.ID, EndpointID: r.EndpointID, Since: ms(r.Since), Until: ms(r.Until), Status: r.Status,
		Total: r.Total, Scanned: r.Scanned, Scheduled: r.Scheduled, LimitReached: r.LimitReached, NextSince: optTime(r.NextSince),
		CancelReason: r.CancelReason, CreatedAt: ms(r.CreatedAt), UpdatedAt: ms(r.UpdatedAt), CompletedAt: optTime(r.CompletedAt)}
}

// recoverEndpoint starts a bulk recovery of one endpoint: every delivery of it
// created in the window that ended without a 2xx is replayed, by a worker,
// in the background; the 202 names the job to follow.
func (h *handlers) recoverEndpoint(c *gin.Context) {
	var req recoverRequest
	if err := httpserver.DecodeJSON(c, &req); err != nil {
		problem.Render(c, err)
		return
	}
	now := h.Now()
	var since time.Time
	if req.Since != nil {
		since = *req.Since
	}
	w, err := recovery.NewWindow(since, req.Until, now)
	if err != nil {
		problem.Render(c, err)
		return
	}
	ctx := c.Request.Context()
	scope := scopeOf(c)
	ep, err := h.Endpoints.Get(ctx, scope, c.Param("id"))
	if err != nil {
		problem.Render(c, err)
		return
	}
	if ep.Status != endpoints.Enabled && !req.Enable {
		problem.Write(c, problem.Newf(EndpointDisabled, "Endpoint %s is %s; enable it before recovering to it, or send \"enable\": true.", ep.ID, ep.Status))
		return
	}
	if ep.Status != endpoints.Enabled {
		ep, err = h.Endpoints.Modify(ctx, scope, ep.ID, func(e endpoints.Endpoint) (endpoints.Endpoint, error) {
			return endpoints.Enable(e, now), nil
		})
		if err != nil {
			problem.Render(c, err)
			return
		}
		h.Logger.InfoContext(ctx, "endpoint enabled for a recovery", "endpoint", ep.ID)
	}
	total, err := h.Deliveries.CountWindow(ctx, scope, w.Since, w.Until)
	if err != nil {
		problem.Render(c, err)
		return
	}
	job := store.Recovery{ID: newID("rcv_"), EndpointID: ep.ID, Tenant: scope.Tenant, Environment: scope.Environment, PartnerID: scope.PartnerID,
		Since: w.Since, Until: w.Until, Status: store.RecoveryRunning, Total: total, CreatedAt: now, UpdatedAt: now}
	if err := h.Recoveries.Create(ctx, job); err != nil {
		problem.Render(c, err)
		return
	}
	h.Logger.InfoContext(ctx, "recovery started", "recovery", job.ID, "endpoint", ep.ID, "since", w.Since, "until", w.Until, "total", total)
	c.Header("Location", "/api/webhooks/endpoints/"+ep.ID+"/recoveries/"+job.ID)
	data(c, http.StatusAccepted, toRecoveryView(job))
}

func (h *handlers) getRecovery(c *gin.Context) {
	r, err := h.Recoveries.Get(c.Request.Context(), scopeOf(c), c.Param("recoveryId"))
	if err == nil && r.EndpointID != c.Param("id") {
		err = store.ErrRecoveryNotFound
	}
	if err != nil {
		problem.Render(c, err)
		return
	}
	data(c, http.StatusOK, toRecoveryView(r))
}
