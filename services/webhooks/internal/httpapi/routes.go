// Package httpapi is the webhooks service's HTTP surface: partner endpoint
// management, delivery history and replay, and the public verification keys.
package httpapi

import (
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/selfservice"
)

// Deps are what Register wires: the use cases every partner route calls,
// the credentials and idempotency journal in front of them, and the
// signing keys the public key routes publish.
type Deps struct {
	Credentials *auth.Store
	UseCases    *selfservice.Service
	Journal     *idempotency.Journal
	Keys        KeySource
	Now         func() time.Time // nil: time.Now
}

// handlers decode requests, call one use case and write its view; every
// refusal goes to c.Error, which the server's problem middleware (or the
// idempotency journal, on its routes) renders through Problem.
type handlers struct {
	uc        *selfservice.Service
	keySource KeySource
	now       func() time.Time
}

// The idempotency operations; the v2 and canonical routes share them.
const (
	opCreateEndpoint = "createWebhookEndpoint"
	opReplay         = "replayWebhookDelivery"
	opRecover        = "recoverWebhookEndpoint"
	opTestEvent      = "sendWebhookTestEvent"
)

// Register adds the service's routes under /api/webhooks and its
// /api/v2/webhooks alias.
func Register(r *gin.Engine, d Deps) {
	if d.Now == nil {
		d.Now = time.Now
	}
	h := &handlers{uc: d.UseCases, keySource: d.Keys, now: d.Now}
	authenticated := auth.Middleware(d.Credentials)
	// A partner's orchestrator manages its endpoints and deliveries, and
	// so does a tribunal member (adjudicator, reviewer): each has a
	// partner id of its own, never a party's, to which the case events
	// addressed to it are routed. Either way everything is scoped by the
	// credential's tenant, environment and partner id (scopeOf); agents
	// of a party are refused.
	owner := auth.RequireRole(auth.RolePlatformOrchestrator, auth.RoleAdjudicator, auth.RoleReviewer)

	r.GET("/api/webhooks/keys", h.keys)
	r.GET("/api/webhooks/keys/status", h.keyStatus)
	for _, base := range []string{"/api/webhooks", "/api/v2/webhooks"} {
		g := r.Group(base, authenticated, owner, requirePartner)
		g.GET("/endpoints", private, h.listEndpoints)
		g.POST("/endpoints", noStore, d.Journal.Middleware(opCreateEndpoint), h.createEndpoint)
		g.GET("/endpoints/:id", private, h.getEndpoint)
		g.PATCH("/endpoints/:id", noStore, h.patchEndpoint)
		g.DELETE("/endpoints/:id", noStore, h.deleteEndpoint)
		g.POST("/endpoints/:id/disable", noStore, h.setEnabled(false))
		g.POST("/endpoints/:id/enable", noStore, h.setEnabled(true))
		g.POST("/endpoints/:id/recover", noStore, d.Journal.Middleware(opRecover), h.recoverEndpoint)
		g.GET("/endpoints/:id/recoveries/:recoveryId", private, h.getRecovery)
		g.GET("/endpoints/:id/health", private, h.endpointHealth)
		g.POST("/endpoints/:id/test", noStore, d.Journal.Middleware(opTestEvent), h.sendTestEvent)
		g.GET("/deliveries", private, h.listDeliveries)
		g.GET("/deliveries/outcomes", private, h.deliveryOutcomes)
		g.GET("/deliveries/:id", private, h.getDelivery)
		g.POST("/deliveries/:id/replay", noStore, d.Journal.Middleware(opReplay), h.replay)
	}
}

func private(c *gin.Context) { c.Header("Cache-Control", "private, no-store"); c.Next() }
func noStore(c *gin.Context) { c.Header("Cache-Control", "no-store"); c.Next() }

// requirePartner refuses credentials bound to no partner: every webhook
// resource belongs to one.
func requirePartner(c *gin.Context) {
	cred, ok := auth.CredentialFrom(c.Request.Context())
	if !ok || cred.PartnerID == "" {
		_ = c.Error(problem.New(NoPartner, "Webhook endpoints and deliveries belong to a partner; use a credential bound to one."))
		c.Abort()
		return
	}
	c.Next()
}

func scopeOf(c *gin.Context) endpoints.Scope {
	cred, _ := auth.CredentialFrom(c.Request.Context())
	return endpoints.Scope{Tenant: cred.Tenant, Environment: string(cred.Environment), PartnerID: cred.PartnerID}
}

func data(c *gin.Context, status int, v any) {
	c.JSON(status, gin.H{"data": v, "requestId": requestid.Get(c)})
}
