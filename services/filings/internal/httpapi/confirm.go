package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
	"github.com/pcourt/pcourt/services/filings/internal/filing"
)

// confirm records one participant's confirmation; the last required one
// opens the case in the same Redis step. route says which family the
// request came through, so a legacy draft is refused on the new routes.
func (h *handlers) confirm(route draft.Route) gin.HandlerFunc {
	return func(c *gin.Context) {
		var body confirmBody
		if err := httpserver.DecodeJSON(c, &body); err != nil {
			_ = c.Error(err)
			return
		}
		cred, _ := auth.CredentialFrom(c.Request.Context())
		h.apply(c, c.Param("id"), cred, route, func(d draft.Draft) (draft.Outcome, error) {
			if err := h.authorizeParticipant(c, cred, d, body.ParticipantID); err != nil {
				return draft.Outcome{}, err
			}
			return draft.Confirm(d, draft.ConfirmRequest{
				ParticipantID: body.ParticipantID, DraftDigest: body.DraftDigest,
				ConfirmationStatement: body.ConfirmationStatement, ActorID: body.ActorID,
				PrincipalID: body.PrincipalID, ConfirmationMethod: body.ConfirmationMethod,
				ConfirmationReference: body.ConfirmationReference,
			}, actorOf(cred, route), h.now())
		})
	}
}

// apply runs act on the draft through the application layer, as the
// caller cred on route, and answers: 201 with the opened case (and its
// show-once secrets, never journaled) or 202 with the draft.
func (h *handlers) apply(c *gin.Context, id string, cred auth.Credential, route draft.Route, act filing.Act) {
	// A 201 carries showOnce secrets, and every answer is the result of a
	// mutation: no cache, shared or private, may keep it.
	c.Header("Cache-Control", "no-store")
	applied, err := h.filings.Apply(c.Request.Context(), id, h.access(cred), act, cred.PartnerID)
	if err != nil {
		_ = c.Error(err)
		return
	}
	h.renderApplied(c, applied, route)
}

// renderApplied answers an applied act: 202 with the draft while
// confirmations are pending, 201 with the opened case and its secrets,
// shown this once (the journal keeps the answer without them).
func (h *handlers) renderApplied(c *gin.Context, applied filing.Applied, route draft.Route) {
	if applied.Opened == nil {
		journalDraft(c, applied.Draft)
		c.JSON(http.StatusAccepted, gin.H{"data": h.draftView(applied.Draft, route), "requestId": requestid.Get(c)})
		return
	}
	opened := toCaseView(applied.Opened.Case)
	journal, err := json.Marshal(gin.H{"data": opened, "requestId": requestid.Get(c)})
	if err != nil {
		_ = c.Error(err)
		return
	}
	// The replay of this answer is the same case without the secrets.
	idempotency.JournalBody(c, journal)
	c.JSON(http.StatusCreated, gin.H{"data": withShowOnce(opened, toShowOnce(applied.Opened)), "requestId": requestid.Get(c)})
}

// showOnce are the initial capabilities of an opened case. They are returned
// in the first 201 only; Redis keeps their SHA-256 hashes.
type showOnce struct {
	ClaimantPartyToken    string `json:"claimantPartyToken,omitempty"`
	RespondentInviteToken string `json:"respondentInviteToken,omitempty"`
	RespondentLoginPath   string `json:"respondentLoginPath,omitempty"`
}

func toShowOnce(o *filing.Opened) showOnce {
	if o.Secrets == nil {
		return showOnce{}
	}
	s := showOnce{
		ClaimantPartyToken:    o.Secrets.ClaimantPartyToken,
		RespondentInviteToken: o.Secrets.RespondentInviteToken,
	}
	if o.Secrets.RespondentLoginToken != "" {
		// The token rides in the fragment, which browsers never send to a
		// server, so no access log, proxy or Referer header carries it; the
		// hosted page reads it and exchanges it with a POST.
		s.RespondentLoginPath = "/respond/" + o.Case.CaseID + "#login=" + o.Secrets.RespondentLoginToken
	}
	return s
}

func withShowOnce(v caseView, s showOnce) caseView {
	v.ShowOnce = &s
	return v
}
