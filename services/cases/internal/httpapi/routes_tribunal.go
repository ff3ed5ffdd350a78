package httpapi

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// Tribunal and award (internal/tribunal, acted on through tribunalflow):
// the tribunal's work on the website routes the inventory names for it,
// the sides' challenges, pre-award answers and evaluation acceptance, the
// decision's reads, the award and its artifacts, and the award keys.
// docs/tribunal.md describes each route.

// The idempotency operations of the decision's commands.
const (
	opAdjudicate        = "requestAdjudication"
	opSynthesize        = "fileProposal"
	opResume            = "resumeAfterHumanAttention"
	opReviewerOpinion   = "fileReviewerOpinion"
	opReviewerObjection = "fileReviewerObjection"
	opOverride          = "overrideOutcome"
	opAttest            = "fileReviewerAttestation"
	opPreAwardReview    = "preAwardReview"
	opSignOff           = "signOff"
	opRecusal           = "recuse"
	opRuling            = "issueProceduralRuling"
	opChallenge         = "challengeConfiguration"
	opResolveChallenge  = "resolveConfigurationChallenge"
	opAcceptEvaluation  = "acceptEvaluation"
)

// registerTribunal adds the subdomain's routes.
func (h *handlers) registerTribunal(r gin.IRouter, k routeKit) {
	// Every decision command is journaled under its operation and case; a
	// replay is answered only to a credential that still sees the case: a
	// member still assigned (a recused one sees it no more), a side's
	// credential still acting for it.
	member := func(op string) gin.HandlerFunc { return k.command(op, anySide) }
	side := member
	ok, created := http.StatusOK, http.StatusCreated

	r.GET("/api/awards/keys", h.awardKeys)

	// The tribunal's routes (website family, the tribunal only).
	w := func(path string) string { return "/api/disputes/:id/" + path }
	r.GET(w("review-package"), k.website, k.authenticated, h.reviewPackage)
	r.GET(w("runs"), k.website, k.authenticated, h.runs)
	r.POST(w("adjudicate"), k.website, k.authenticated, member(opAdjudicate), h.memberAct(tribunal.ActRequestRun, created, readInstructions))
	r.POST(w("synthesize-opinion"), k.website, k.authenticated, member(opSynthesize), h.memberAct(tribunal.ActFileProposal, created, readProposal))
	r.POST(w("human-attention/resume"), k.website, k.authenticated, member(opResume), h.memberAct(tribunal.ActResume, ok, readInstructions))
	r.POST(w("reviewer-opinion"), k.website, k.authenticated, member(opReviewerOpinion), h.memberAct(tribunal.ActGiveOpinion, ok, readOpinion))
	r.POST(w("reviewer-opinion/file"), k.website, k.authenticated, member(opReviewerOpinion), h.memberAct(tribunal.ActGiveOpinion, ok, readOpinionFile))
	r.POST(w("reviewer-objection"), k.website, k.authenticated, member(opReviewerObjection), h.memberAct(tribunal.ActObject, ok, readInstructions))
	r.POST(w("override"), k.website, k.authenticated, member(opOverride), h.memberAct(tribunal.ActOverride, ok, readOverride))
	r.POST(w("reviewer-attestation"), k.website, k.authenticated, member(opAttest), h.memberAct(tribunal.ActAttest, ok, readAttestation))
	// The pre-award review is the tribunal's and the sides': an account
	// token reads it and answers for its side, and opens nothing
	// (preAwardReview).
	r.GET(w("pre-award-review"), k.website, k.websiteAccounts, k.reads, h.getPreAwardReview)
	r.POST(w("pre-award-review"), k.website, k.websiteAccounts, k.acts, member(opPreAwardReview), h.preAwardReview)
	r.POST(w("signoff"), k.website, k.authenticated, member(opSignOff), h.memberAct(tribunal.ActSignOff, ok, readNothing))
	r.POST(w("recusal"), k.website, k.authenticated, member(opRecusal), h.memberAct(tribunal.ActRecuse, ok, readReason))
	r.GET(w("procedural-rulings"), k.website, k.authenticated, h.listRulings)
	r.POST(w("procedural-rulings"), k.website, k.authenticated, member(opRuling), h.memberAct(tribunal.ActIssueRuling, created, readRuling))

	// AI-configuration challenges: a side files, the reviewer resolves.
	for _, route := range []struct {
		path    string
		website bool
	}{{"/api/cases/:id/ai-configuration-challenges", false}, {"/api/disputes/:id/ai-configuration-challenges", true}} {
		pre := []gin.HandlerFunc{k.authenticated}
		if route.website {
			pre = append([]gin.HandlerFunc{k.website}, pre...)
		}
		r.GET(route.path, append(pre, h.listChallenges)...)
		r.POST(route.path, append(pre, side(opChallenge), h.sideDecisionAct(tribunal.ActChallenge, created, readChallenge))...)
		r.PATCH(route.path, append(pre, member(opResolveChallenge), h.memberAct(tribunal.ActResolveChallenge, ok, readResolution))...)
	}

	// Evaluation, the award and its artifacts: an account reads its
	// case's with cases:read and accepts an evaluation for its side with
	// cases:act.
	for _, base := range []string{"/api/cases/:id", "/api/v2/cases/:caseId"} {
		r.GET(base+"/evaluation", k.withAccounts, k.reads, h.getEvaluation)
		r.POST(base+"/evaluation/accept", k.withAccounts, k.acts, side(opAcceptEvaluation), h.acceptEvaluation)
		r.GET(base+"/award", k.withAccounts, k.reads, h.getAward)
		r.GET(base+"/award/artifacts/json/attestation", k.withAccounts, k.reads, h.getAttestation)
		r.GET(base+"/award/artifacts/:kind", k.withAccounts, k.reads, h.getArtifact)
	}
	r.GET("/api/disputes/:id/decision", k.website, k.websiteAccounts, k.reads, h.getAward)

}
