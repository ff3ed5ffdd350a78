// Package httpapi is the cases service's HTTP surface: the reads and
// commands of an opened case on its three route families (canonical
// /api/cases, partner /api/v2/cases, website /api/disputes), the rules,
// and a 501 for every route of the inventory not built yet.
package httpapi

import (
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// Deps are what the handlers need.
type Deps struct {
	Credentials *auth.Store
	Cases       *store.Cases
	Flow        *caseflow.Service
	Journal     *idempotency.Journal
	Logger      *slog.Logger
}

type handlers struct {
	credentials *auth.Store
	cases       *store.Cases
	flow        *caseflow.Service
	logger      *slog.Logger
}

// The idempotency operations. Every route of one act shares its
// operation, and so one journal (the spec's retry rules: canonical answer
// and invitation commands share operation journals); the answer is stored
// in the canonical {data, requestId} form, and the website envelope is
// applied on the way out, so a retry may cross route families.
const (
	opInvite             = "inviteRespondent"
	opJoin               = "joinCase"
	opAnswer             = "fileAnswer"
	opFile               = "fileSubmission"
	opAmend              = "amendSubmission"
	opConfirmRecord      = "confirmRecord"
	opRequestTermination = "requestTermination"
	opConfirmTermination = "confirmTermination"
	opPostMessage        = "postMessage"
	opReadMessages       = "markMessagesRead"
)

// Register adds the service's routes.
func Register(r *gin.Engine, d Deps) {
	h := &handlers{credentials: d.Credentials, cases: d.Cases, flow: d.Flow, logger: d.Logger}
	authenticated := auth.Middleware(d.Credentials)
	website := websiteEnvelope()
	command := func(op string, side procedure.Side) gin.HandlerFunc {
		recheck := idempotency.RecheckBeforeReplay(h.recheck(side))
		return func(c *gin.Context) {
			// The journal fingerprints the operation and the body, not the
			// path: naming the case (and the submission or request) in the
			// operation makes a key reused on another case a different
			// request (422), while the aliases of one act still share it.
			d.Journal.Middleware(op+" "+caseID(c)+" "+c.Param("submissionId")+" "+c.Param("requestId"), recheck)(c)
		}
	}
	invite := command(opInvite, procedure.Claimant)
	join := command(opJoin, procedure.Respondent)
	answer := command(opAnswer, procedure.Respondent)
	file := command(opFile, anySide)
	amend := command(opAmend, anySide)
	confirmRecord := command(opConfirmRecord, anySide)
	requestTermination := command(opRequestTermination, anySide)
	confirmTermination := command(opConfirmTermination, anySide)
	postMessage := command(opPostMessage, anySide)
	readMessages := command(opReadMessages, anySide)

	r.GET("/api/rules/current", h.currentRules)
	r.GET("/api/v2/rules/current", h.currentRules)

	r.GET("/api/cases/:id", authenticated, h.getCase)
	r.GET("/api/cases/:id/participants", authenticated, h.getParticipants)
	r.GET("/api/cases/:id/events", authenticated, h.getDocket)
	r.POST("/api/cases/:id/invitations", authenticated, invite, h.invite)
	r.POST("/api/cases/:id/answer", authenticated, answer, h.answer)
	r.GET("/api/cases/:id/messages", authenticated, h.listMessages)
	r.POST("/api/cases/:id/messages", authenticated, postMessage, h.postMessage)
	r.PATCH("/api/cases/:id/messages", authenticated, readMessages, h.markMessagesRead)
	r.GET("/api/cases/:id/submissions", authenticated, h.listSubmissions)
	r.POST("/api/cases/:id/submissions", authenticated, file, h.fileSubmission)
	r.PATCH("/api/cases/:id/submissions/:submissionId", authenticated, amend, h.amendSubmission)
	r.GET("/api/cases/:id/record-summary", authenticated, h.recordSummary)
	r.POST("/api/cases/:id/record-summary/confirmations", authenticated, confirmRecord, h.confirmRecord)
	r.POST("/api/cases/:id/termination-requests", authenticated, requestTermination, h.requestTermination)
	r.POST("/api/cases/:id/termination-requests/:requestId/confirmations", authenticated, confirmTermination, h.confirmTermination)

	r.GET("/api/v2/cases/:caseId", authenticated, h.getCase)
	r.GET("/api/v2/cases/:caseId/participants", authenticated, h.getParticipants)
	r.GET("/api/v2/cases/:caseId/docket", authenticated, h.getDocket)
	r.POST("/api/v2/cases/:caseId/respondent-handoff", authenticated, invite, h.invite)
	r.POST("/api/v2/cases/:caseId/answer", authenticated, answer, h.answer)
	r.GET("/api/v2/cases/:caseId/messages", authenticated, h.listMessages)
	r.POST("/api/v2/cases/:caseId/messages", authenticated, postMessage, h.postMessage)
	r.PATCH("/api/v2/cases/:caseId/messages", authenticated, readMessages, h.markMessagesRead)
	r.GET("/api/v2/cases/:caseId/submissions", authenticated, h.listSubmissions)
	r.POST("/api/v2/cases/:caseId/submissions", authenticated, file, h.fileSubmission)
	r.GET("/api/v2/cases/:caseId/record-confirmations", authenticated, h.recordSummary)
	r.POST("/api/v2/cases/:caseId/record-confirmations", authenticated, confirmRecord, h.confirmRecord)
	r.GET("/api/v2/cases/:caseId/decision-status", authenticated, h.decisionStatus)
	r.POST("/api/v2/cases/:caseId/termination-requests", authenticated, requestTermination, h.requestTermination)
	r.POST("/api/v2/cases/:caseId/termination-requests/:requestId/confirmations", authenticated, confirmTermination, h.confirmTermination)

	r.POST("/api/partner-cases/:caseId/respondent", authenticated, join, h.join)

	r.GET("/api/disputes/:id", website, authenticated, h.getCase)
	r.GET("/api/disputes/:id/docket", website, authenticated, h.getDocket)
	r.GET("/api/disputes/:id/rules", website, authenticated, h.caseRules)
	r.POST("/api/disputes/:id/invite", website, authenticated, invite, h.invite)
	r.POST("/api/disputes/:id/join", website, authenticated, join, h.join)
	r.POST("/api/disputes/:id/answer", website, authenticated, answer, h.answer)
	r.GET("/api/disputes/:id/messages", website, authenticated, h.listMessages)
	r.POST("/api/disputes/:id/messages", website, authenticated, postMessage, h.postMessage)
	r.PATCH("/api/disputes/:id/messages", website, authenticated, readMessages, h.markMessagesRead)
	r.GET("/api/disputes/:id/submissions", website, authenticated, h.listSubmissions)
	r.POST("/api/disputes/:id/submissions", website, authenticated, file, h.fileSubmission)

	// The hosted respondent page (/respond/...) is internal/respond's.

	for _, u := range Unbuilt {
		handlers := []gin.HandlerFunc{notAvailable(u.Route)}
		if u.Website {
			handlers = append([]gin.HandlerFunc{website}, handlers...)
		}
		r.Any(u.ginPath(), handlers...)
	}
}

// caseID is the case named in the path, whatever the family calls it.
func caseID(c *gin.Context) string {
	if id := c.Param("id"); id != "" {
		return id
	}
	return c.Param("caseId")
}
