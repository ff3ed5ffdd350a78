package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
	"github.com/pcourt/pcourt/services/filings/internal/events"
	"github.com/pcourt/pcourt/services/filings/internal/store"
)

// maxConfirmAttempts bounds the optimistic retries of one confirmation when
// other participants confirm the same draft at the same moment.
const maxConfirmAttempts = 16

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

// apply runs act on the draft's current state and saves the result only if
// nobody saved in between; otherwise it reads again and decides again, so
// concurrent acts on one draft serialize without locks. When act completes
// the draft, the same save opens the case. The answer is 201 with the
// opened case (and its show-once secrets, never journaled) or 202 with the
// draft.
func (h *handlers) apply(c *gin.Context, id string, cred auth.Credential, route draft.Route, act func(draft.Draft) (draft.Outcome, error)) {
	// A 201 carries showOnce secrets, and every answer is the result of a
	// mutation: no cache, shared or private, may keep it.
	c.Header("Cache-Control", "no-store")
	ctx := c.Request.Context()
	for range maxConfirmAttempts {
		loaded, d, err := h.load(ctx, id, cred)
		if err != nil {
			_ = c.Error(err)
			return
		}
		outcome, err := act(d)
		if err != nil {
			_ = c.Error(err)
			return
		}
		record, err := json.Marshal(outcome.Draft)
		if err != nil {
			_ = c.Error(err)
			return
		}
		if !outcome.Opened {
			err = h.drafts.Save(ctx, id, loaded.Version, record, string(outcome.Draft.Status()), nil)
			if errors.Is(err, store.ErrConflict) {
				continue // another act landed first: decide again on fresh state
			}
			if err != nil {
				_ = c.Error(err)
				return
			}
			journalDraft(c, record)
			c.JSON(http.StatusAccepted, gin.H{"data": h.draftView(outcome.Draft, route), "requestId": requestid.Get(c)})
			return
		}
		opened, secrets, opening, err := h.opening(outcome.Draft, true)
		if err != nil {
			_ = c.Error(err)
			return
		}
		err = h.drafts.Save(ctx, id, loaded.Version, record, string(outcome.Draft.Status()), opening)
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			_ = c.Error(err)
			return
		}
		h.registerCapabilities(ctx, outcome.Draft, secrets)
		journal, err := json.Marshal(gin.H{"data": opened, "requestId": requestid.Get(c)})
		if err != nil {
			_ = c.Error(err)
			return
		}
		// The replay of this answer is the same case without the secrets.
		idempotency.JournalBody(c, journal)
		c.JSON(http.StatusCreated, gin.H{"data": withShowOnce(opened, secrets), "requestId": requestid.Get(c)})
		return
	}
	_ = c.Error(errBusy)
}

// showOnce are the initial capabilities of an opened case. They are returned
// in the first 201 only; Redis keeps their SHA-256 hashes.
type showOnce struct {
	ClaimantPartyToken    string `json:"claimantPartyToken,omitempty"`
	RespondentInviteToken string `json:"respondentInviteToken,omitempty"`
	RespondentLoginPath   string `json:"respondentLoginPath,omitempty"`
	respondentLoginToken  string
}

// opening builds everything the last confirmation adds: the confirmed case,
// fresh secrets and their hashes, and the case-opened event.
// With withSecrets false (an opening nobody is waiting for, such as one the
// reconciler completes) no secrets are minted: they could never be shown.
func (h *handlers) opening(d draft.Draft, withSecrets bool) (caseView, showOnce, *store.Opening, error) {
	now := h.now().UTC().Truncate(time.Millisecond)
	confirmed := draft.Opened(d, now)
	view := toCaseView(confirmed)
	var secrets showOnce
	hashes := map[string]string{}
	if withSecrets {
		secrets.RespondentInviteToken = auth.NewToken("pc_inv_")
		secrets.respondentLoginToken = auth.NewToken("pc_login_")
		// The token rides in the fragment, which browsers never send to a
		// server, so no access log, proxy or Referer header carries it; the
		// hosted page reads it and exchanges it with a POST.
		secrets.RespondentLoginPath = "/respond/" + confirmed.CaseID + "#login=" + secrets.respondentLoginToken
		if d.ClaimantAcceptanceIdentity() != "" {
			// Without a claimant acceptance identity there is no claimant
			// packet or link: partner consent stands in for it.
			secrets.ClaimantPartyToken = auth.NewToken("pc_party_")
		}
		hashes["respondent_invite"] = auth.HashToken(secrets.RespondentInviteToken)
		hashes["respondent_login"] = auth.HashToken(secrets.respondentLoginToken)
		if secrets.ClaimantPartyToken != "" {
			hashes["claimant_party"] = auth.HashToken(secrets.ClaimantPartyToken)
		}
	}
	event, err := events.NewCaseOpened(d, confirmed, hashes).OutboxEvent()
	if err != nil {
		return caseView{}, showOnce{}, nil, err
	}
	caseJSON, err := json.Marshal(view)
	if err != nil {
		return caseView{}, showOnce{}, nil, err
	}
	return view, secrets, &store.Opening{CaseID: confirmed.CaseID, Case: caseJSON, CapabilityHashes: hashes, Event: event}, nil
}

// registerCapabilities makes the new secrets usable as X-PC-Case-Capability
// at once. The case-opened event carries their hashes too, so the cases
// service owns them from then on; a failure here only delays their use.
func (h *handlers) registerCapabilities(ctx context.Context, d draft.Draft, s showOnce) {
	caseID := d.ReservedCaseID()
	expires := h.now().Add(30 * 24 * time.Hour)
	for _, c := range []struct {
		token   string
		side    auth.Side
		purpose string
	}{
		{s.RespondentInviteToken, auth.Respondent, "respondent_invite"},
		{s.respondentLoginToken, auth.Respondent, "respondent_login"},
		{s.ClaimantPartyToken, auth.Claimant, "claimant_party"},
	} {
		if c.token == "" {
			continue
		}
		if err := h.credentials.RegisterCapability(context.WithoutCancel(ctx), c.token, auth.Capability{Resource: "case:" + caseID, Side: c.side, Purpose: c.purpose, ExpiresAt: expires}); err != nil {
			h.logger.ErrorContext(ctx, "registering case capability failed; the cases service registers it from the event", "case", caseID, "purpose", c.purpose, "err", err)
		}
	}
}

func withShowOnce(v caseView, s showOnce) caseView {
	v.ShowOnce = &s
	return v
}
