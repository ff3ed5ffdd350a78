package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/services/webhooks/internal/keys"
)

// KeySource is where the published verification keys come from.
type KeySource interface {
	Published(env signature.Environment, now time.Time) []signature.JWK
	States(env signature.Environment, now time.Time) []keys.Status
	Timelines(env signature.Environment) []keys.Timeline
}

// keys serves GET /api/webhooks/keys: the JWKS of both environments, or of
// the one ?environment= names. It is public and cacheable: a new key is
// published long before it signs (keys.Config.LeadTime).
func (h *handlers) keys(c *gin.Context) {
	env := signature.Environment(c.Query("environment"))
	if _, given := c.GetQuery("environment"); given && !env.Valid() {
		_ = c.Error(problem.New(InvalidQuery, "environment must be live or sandbox."))
		return
	}
	set := signature.JWKS{Keys: h.keySource.Published(env, h.now())}
	if set.Keys == nil {
		set.Keys = []signature.JWK{}
	}
	c.Header("Cache-Control", "public, max-age=300")
	c.JSON(http.StatusOK, set)
}

type keyStatusView struct {
	KeyID       string    `json:"kid"`
	Environment string    `json:"environment"`
	State       string    `json:"state"` // next, active or retired
	ActivatesAt time.Time `json:"activatesAt"`
	// RetiresAt is when a newer key activates and this one stops signing;
	// UnpublishedAt when it leaves the JWKS. Absent while no newer key is
	// scheduled.
	RetiresAt     *time.Time `json:"retiresAt,omitempty"`
	UnpublishedAt *time.Time `json:"unpublishedAt,omitempty"`
	SignsNow      bool       `json:"signsNow"`
}

// keyStatus serves GET /api/webhooks/keys/status: the rotation of every
// published key, public facts only (id, state, dates), never key material.
func (h *handlers) keyStatus(c *gin.Context) {
	env := signature.Environment(c.Query("environment"))
	if _, given := c.GetQuery("environment"); given && !env.Valid() {
		_ = c.Error(problem.New(InvalidQuery, "environment must be live or sandbox."))
		return
	}
	now := h.now()
	out := []keyStatusView{}
	for _, e := range []signature.Environment{signature.Live, signature.Sandbox} {
		if env != "" && env != e {
			continue
		}
		state := map[string]keys.State{}
		for _, st := range h.keySource.States(e, now) {
			state[st.ID] = st.State
		}
		for _, tl := range h.keySource.Timelines(e) {
			st := state[tl.ID]
			if st == "" || st == keys.Expired {
				continue // no longer published
			}
			out = append(out, keyStatusView{KeyID: tl.ID, Environment: string(e), State: string(st),
				ActivatesAt: tl.ActivatesAt.UTC(), RetiresAt: optTime(tl.RetiredAt), UnpublishedAt: optTime(tl.ExpiresAt),
				SignsNow: st == keys.Active})
		}
	}
	c.Header("Cache-Control", "public, max-age=60")
	c.JSON(http.StatusOK, gin.H{"data": out})
}
