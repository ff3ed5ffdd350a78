package httpapi

import (
	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// The case and its procedure (internal/procedure, acted on through
// caseflow): the case's reads, the acts of the procedure, the rules, and
// the routes of the inventory this subdomain will serve that are not
// built yet.

// The idempotency operations. Every route of one act shares its
// operation, and so one journal (the spec's retry rules: canonical answer
// and invitation commands share operation journals); the answer is stored
// in the canonical {data, requestId} form, and the website envelope is
// applied on the way out, so a retry may cross route families.
const (
	opInvite             = "inviteRespondent"
	opReissueLogin       = "reissueRespondentLogin"
	opJoin               = "joinCase"
	opAnswer             = "fileAnswer"
	opFile               = "fileSubmission"
	opAmend              = "amendSubmission"
	opConfirmRecord      = "confirmRecord"
	opRequestTermination = "requestTermination"
	opConfirmTermination = "confirmTermination"
	opPostMessage        = "postMessage"
	opReadMessages       = "markMessagesRead"
	// One operation for the appointments, one for the changes and
	// removals (the body's action and representativeId are part of the
	// fingerprint).
	opAppointRepresentative = "appointRepresentative"
	opChangeRepresentative  = "changeRepresentative"
	// The record's corrections keep a journal per route family (the
	// spec's retry rule 6: the partner and canonical restatement and
	// correction routes keep separate journals), and the website
	// restatement POST, which corrects or confirms by its body's action,
	// keeps its own.
	opCorrectRecord      = "correctRecord"
	opPartnerRestatement = "partnerRestatement"
	opRestatement        = "websiteRestatement"
	// The website termination control requests or confirms by its
	// body's action, in its own journal like the website restatement.
	opWebsiteTermination = "websiteTermination"
)

// registerCase adds the case's and its procedure's routes.
func (h *handlers) registerCase(r gin.IRouter, k routeKit) {
	invite := k.command(opInvite, procedure.Claimant)
	reissueLogin := k.command(opReissueLogin, procedure.Claimant)
	join := k.command(opJoin, procedure.Respondent)
	answer := k.command(opAnswer, procedure.Respondent)
	file := k.command(opFile, anySide)
	amend := k.command(opAmend, anySide)
	confirmRecord := k.command(opConfirmRecord, anySide)
	requestTermination := k.command(opRequestTermination, anySide)
	confirmTermination := k.command(opConfirmTermination, anySide)
	postMessage := k.command(opPostMessage, anySide)
	readMessages := k.command(opReadMessages, anySide)
	appointRepresentative := k.command(opAppointRepresentative, anySide)
	changeRepresentative := k.command(opChangeRepresentative, anySide)
	correctRecord := k.command(opCorrectRecord, anySide)
	partnerRestatement := k.command(opPartnerRestatement, anySide)
	restatement := k.command(opRestatement, anySide)
	websiteTermination := k.command(opWebsiteTermination, anySide)

	r.GET("/api/rules/current", h.currentRules)
	r.GET("/api/v2/rules/current", h.currentRules)

	r.GET("/api/cases/:id", k.withAccounts, k.reads, h.getCase)
	r.GET("/api/cases/:id/participants", k.withAccounts, k.reads, h.getParticipants)
	r.GET("/api/cases/:id/events", k.withAccounts, k.reads, h.getDocket)
	r.POST("/api/cases/:id/invitations", k.authenticated, invite, h.invite)
	r.POST("/api/cases/:id/respondent-login", k.authenticated, reissueLogin, h.reissueLogin)
	r.POST("/api/cases/:id/answer", k.withAccounts, k.acts, answer, h.answer)
	r.GET("/api/cases/:id/messages", k.withAccounts, k.reads, h.listMessages)
	r.POST("/api/cases/:id/messages", k.withAccounts, k.acts, postMessage, h.postMessage)
	r.PATCH("/api/cases/:id/messages", k.authenticated, readMessages, h.markMessagesRead)
	r.GET("/api/cases/:id/submissions", k.withAccounts, k.reads, h.listSubmissions)
	r.POST("/api/cases/:id/submissions", k.withAccounts, k.acts, file, h.fileSubmission)
	r.PATCH("/api/cases/:id/submissions/:submissionId", k.authenticated, amend, h.amendSubmission)
	r.GET("/api/cases/:id/record-summary", k.withAccounts, k.reads, h.recordSummary)
	r.POST("/api/cases/:id/record-summary/confirmations", k.withAccounts, k.acts, confirmRecord, h.confirmRecord)
	r.POST("/api/cases/:id/record-summary/corrections", k.authenticated, correctRecord, h.correctRecord)
	r.POST("/api/cases/:id/termination-requests", k.authenticated, requestTermination, h.requestTermination)
	r.POST("/api/cases/:id/termination-requests/:requestId/confirmations", k.authenticated, confirmTermination, h.confirmTermination)
	r.GET("/api/cases/:id/representatives", k.authenticated, h.listRepresentatives)
	r.POST("/api/cases/:id/representatives", k.authenticated, appointRepresentative, h.appointRepresentative)
	r.PATCH("/api/cases/:id/representatives", k.authenticated, changeRepresentative, h.changeRepresentative)

	r.GET("/api/v2/cases/:caseId", k.withAccounts, k.reads, h.getCase)
	r.GET("/api/v2/cases/:caseId/participants", k.withAccounts, k.reads, h.getParticipants)
	r.GET("/api/v2/cases/:caseId/docket", k.withAccounts, k.reads, h.getDocket)
	r.POST("/api/v2/cases/:caseId/respondent-handoff", k.authenticated, invite, h.invite)
	r.POST("/api/v2/cases/:caseId/answer", k.withAccounts, k.acts, answer, h.answer)
	r.GET("/api/v2/cases/:caseId/messages", k.withAccounts, k.reads, h.listMessages)
	r.POST("/api/v2/cases/:caseId/messages", k.withAccounts, k.acts, postMessage, h.postMessage)
	r.PATCH("/api/v2/cases/:caseId/messages", k.authenticated, readMessages, h.markMessagesRead)
	r.GET("/api/v2/cases/:caseId/submissions", k.withAccounts, k.reads, h.listSubmissions)
	r.POST("/api/v2/cases/:caseId/submissions", k.withAccounts, k.acts, file, h.fileSubmission)
	r.GET("/api/v2/cases/:caseId/record-confirmations", k.withAccounts, k.reads, h.recordSummary)
	r.POST("/api/v2/cases/:caseId/record-confirmations", k.withAccounts, k.acts, confirmRecord, h.confirmRecord)
	r.GET("/api/v2/cases/:caseId/restatement", k.authenticated, h.recordSummary)
	r.POST("/api/v2/cases/:caseId/restatement", k.authenticated, partnerRestatement, h.correctRecord)
	r.GET("/api/v2/cases/:caseId/decision-status", k.withAccounts, k.reads, h.decisionStatus)
	r.POST("/api/v2/cases/:caseId/termination-requests", k.authenticated, requestTermination, h.requestTermination)
	r.POST("/api/v2/cases/:caseId/termination-requests/:requestId/confirmations", k.authenticated, confirmTermination, h.confirmTermination)

	r.POST("/api/partner-cases/:caseId/respondent", k.authenticated, join, h.join)

	// Agent commerce (agentcommerce.go): the resolution requests are
	// drafts, served by filings; the results are the case's.
	r.GET("/api/v2/ap2/resolution-results/:caseId", k.authenticated, h.resolutionResults("ap2"))
	r.GET("/api/v2/ucp/resolution-results/:caseId", k.authenticated, h.resolutionResults("ucp"))

	r.GET("/api/disputes", k.website, k.websiteAccounts, k.reads, h.listCases)
	r.GET("/api/disputes/:id", k.website, k.websiteAccounts, k.reads, h.getCase)
	r.GET("/api/disputes/:id/docket", k.website, k.websiteAccounts, k.reads, h.getDocket)
	r.GET("/api/disputes/:id/rules", k.website, k.authenticated, h.caseRules)
	r.POST("/api/disputes/:id/invite", k.website, k.authenticated, invite, h.invite)
	r.POST("/api/disputes/:id/join", k.website, k.authenticated, join, h.join)
	r.POST("/api/disputes/:id/answer", k.website, k.websiteAccounts, k.acts, answer, h.answer)
	r.GET("/api/disputes/:id/messages", k.website, k.websiteAccounts, k.reads, h.listMessages)
	r.POST("/api/disputes/:id/messages", k.website, k.websiteAccounts, k.acts, postMessage, h.postMessage)
	r.PATCH("/api/disputes/:id/messages", k.website, k.authenticated, readMessages, h.markMessagesRead)
	r.GET("/api/disputes/:id/submissions", k.website, k.websiteAccounts, k.reads, h.listSubmissions)
	r.POST("/api/disputes/:id/submissions", k.website, k.websiteAccounts, k.acts, file, h.fileSubmission)
	r.GET("/api/disputes/:id/representatives", k.website, k.authenticated, h.listRepresentatives)
	r.POST("/api/disputes/:id/representatives", k.website, k.authenticated, appointRepresentative, h.appointRepresentative)
	r.PATCH("/api/disputes/:id/representatives", k.website, k.authenticated, changeRepresentative, h.changeRepresentative)
	r.GET("/api/disputes/:id/restatement", k.website, k.websiteAccounts, k.reads, h.recordSummary)
	r.POST("/api/disputes/:id/restatement", k.website, k.authenticated, restatement, h.restate)
	r.POST("/api/disputes/:id/restatement/generate", k.website, k.authenticated, h.generateRestatement)
	r.POST("/api/disputes/:id/termination", k.website, k.authenticated, websiteTermination, h.websiteTermination)

}
