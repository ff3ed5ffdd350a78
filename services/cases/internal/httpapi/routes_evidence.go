package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/services/cases/internal/evidence"
)

// Evidence (internal/evidence, acted on through evidenceflow): exhibits
// as files, uploaded, disclosed, described and downloaded; authenticity
// challenges; processing records and their defect reports; and the
// routes of the inventory this subdomain will serve that are not built
// yet. docs/evidence.md describes each route.

// The idempotency operations of the evidence's JSON commands. An upload
// is not journaled: its body is a stream no journal keeps, and a retried
// upload of the same bytes is answered with the exhibit recorded the first
// time (evidence.Decide's replay).
const (
	opDisclose         = "discloseExhibit"
	opDescribe         = "describeExhibit"
	opChallengeExhibit = "challengeAuthenticity"
	opAnswerChallenge  = "answerAuthenticityChallenge"
	opResolveAuthentic = "resolveAuthenticityChallenge"
	opReportDefect     = "reportProcessingDefect"
	opResolveDefect    = "resolveProcessingDefect"
	uploadTimeout      = 15 * time.Minute
)

// registerEvidence adds the subdomain's routes.
func (h *handlers) registerEvidence(r gin.IRouter, k routeKit) {
	side := func(op string) gin.HandlerFunc { return k.command(op, anySide) }
	member := side
	upload := httpserver.StreamedBody(MaxUploadBytes, uploadTimeout)
	ok, created := http.StatusOK, http.StatusCreated

	disclose := h.exhibitSideAct(evidence.ActDisclose, ok, readDisclose)
	describe := h.exhibitSideAct(evidence.ActDescribe, ok, readDescribe)
	challenge := h.exhibitSideAct(evidence.ActChallenge, created, readAuthenticityChallenge)
	answer := h.exhibitSideAct(evidence.ActAnswerChallenge, ok, readChallengeAnswer)
	defect := h.exhibitSideAct(evidence.ActReportDefect, created, readDefect)
	resolveChallenge := h.exhibitMemberAct(evidence.ActResolveChallenge, readChallengeResolution)
	resolveDefect := h.exhibitMemberAct(evidence.ActResolveDefect, readDefectResolution)

	// A side's reads and acts take account tokens too (docs/accounts.md):
	// the reads with cases:read, every act of a side on its evidence with
	// evidence:file. The side is the one the account's membership names
	// (actor, standing.actsFor), so a token acts for its own side only.
	// The tribunal's resolutions take no account token: OAuth never grants
	// tribunal powers.
	r.GET("/api/cases/:id/evidence", k.withAccounts, k.reads, h.listEvidence)
	r.POST("/api/cases/:id/evidence", upload, k.withAccounts, k.filesEvidence, h.uploadExhibit)
	r.GET("/api/cases/:id/evidence/:evidenceId", k.withAccounts, k.reads, h.downloadExhibit)
	r.PATCH("/api/cases/:id/evidence/:evidenceId", k.withAccounts, k.filesEvidence, side(opDescribe), describe)
	r.POST("/api/cases/:id/evidence/:evidenceId/disclosure", k.withAccounts, k.filesEvidence, side(opDisclose), disclose)
	r.GET("/api/cases/:id/evidence/:evidenceId/authenticity-challenges", k.withAccounts, k.reads, h.listAuthenticityChallenges)
	r.POST("/api/cases/:id/evidence/:evidenceId/authenticity-challenges", k.withAccounts, k.filesEvidence, side(opChallengeExhibit), challenge)
	r.POST("/api/cases/:id/evidence/:evidenceId/authenticity-challenges/:challengeId/answer", k.withAccounts, k.filesEvidence, side(opAnswerChallenge), answer)
	r.GET("/api/cases/:id/evidence-processing", k.withAccounts, k.reads, h.listProcessing)
	r.POST("/api/cases/:id/evidence-processing/:sourceId/defects", k.withAccounts, k.filesEvidence, side(opReportDefect), defect)

	r.GET("/api/cases/:id/record-bundle", k.withAccounts, k.reads, h.recordBundle)
	r.GET("/api/v2/cases/:caseId/evidence-candidates", k.withAccounts, k.reads, h.listCandidates)
	r.GET("/api/v2/cases/:caseId/record-bundle", k.withAccounts, k.reads, h.recordBundle)
	r.GET("/api/v2/cases/:caseId/evidence/:evidenceId/authenticity-challenges", k.withAccounts, k.reads, h.listAuthenticityChallenges)
	r.POST("/api/v2/cases/:caseId/evidence/:evidenceId/authenticity-challenges", k.withAccounts, k.filesEvidence, side(opChallengeExhibit), challenge)

	w := func(path string) string { return "/api/disputes/:id/" + path }
	r.POST(w("evidence/file"), upload, k.website, k.websiteAccounts, k.filesEvidence, h.uploadExhibit)
	r.GET(w("evidence/:evidenceId/challenge"), k.website, k.websiteAccounts, k.reads, h.listAuthenticityChallenges)
	r.POST(w("evidence/:evidenceId/challenge"), k.website, k.websiteAccounts, k.filesEvidence, side(opChallengeExhibit), challenge)
	r.POST(w("evidence/:evidenceId/challenge/resolve"), k.website, k.authenticated, member(opResolveAuthentic), resolveChallenge)
	r.GET(w("evidence-processing"), k.website, k.websiteAccounts, k.reads, h.listProcessing)
	r.GET(w("record-bundle"), k.website, k.websiteAccounts, k.reads, h.recordBundle)
	r.POST(w("evidence-processing/:sourceId/defects"), k.website, k.websiteAccounts, k.filesEvidence, side(opReportDefect), defect)
	r.POST(w("evidence-processing/:sourceId/defects/:reportId/resolve"), k.website, k.authenticated, member(opResolveDefect), resolveDefect)

}
