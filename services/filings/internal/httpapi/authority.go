package httpapi

import (
	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

// The authority checks of the draft, fee and grant routes, in one place.
// They run after load, which already answers draft_not_found for a draft
// of another tenant or environment, or one in which the caller's partner
// acts for no participant. The table of who may do what is in
// docs/security.md.

// authorizeReader lets a caller read a draft and its fee: an orchestrator of
// a partner acting for a participant, or an agent whose partner acts for
// the side of its role and which holds a membership (or the capability) of
// that side.
func (h *handlers) authorizeReader(c *gin.Context, cred auth.Credential, d draft.Draft) error {
	if cred.ForAccount() {
		// An account reads the draft it takes part in, for its side.
		p, _ := d.AccountOf(cred.AccountID)
		return h.authorizeSide(c, cred, d, auth.Side(p.Side))
	}
	if cred.Role == auth.RolePlatformOrchestrator {
		return nil
	}
	side := auth.Claimant
	if cred.Role == auth.RoleRespondentAgent {
		side = auth.Respondent
	}
	return h.authorizeSide(c, cred, d, side)
}

// authorizeParticipant checks the credential may act for the side of the
// named participant: its partner must act for that side, and an agent needs
// a membership of the side or the per-case capability. The domain then
// checks the participant's own partner and agent binding (draft.Confirm).
func (h *handlers) authorizeParticipant(c *gin.Context, cred auth.Credential, d draft.Draft, participantID string) error {
	p, ok := d.Participant(participantID)
	if !ok {
		return nil // the domain refuses it with not_a_participant
	}
	return h.authorizeSide(c, cred, d, auth.Side(p.Side))
}

// authorizePayer lets a partner acting for a claimant pay the fee: the
// claimant side files and pays, and a payment that opens the case receives
// its show-once capabilities. An agent also needs a claimant membership or
// capability.
func (h *handlers) authorizePayer(c *gin.Context, cred auth.Credential, d draft.Draft) error {
	return h.authorizeSide(c, cred, d, auth.Claimant)
}

// authorizeSide is the common rule: the caller's partner acts for side in
// d, and the credential may act for side (auth.AuthorizeSide: any
// orchestrator; an agent of the side's role with a membership that binds
// this credential or its agent identity, or the capability).
//
// An account token acts for side when its account is a participant of
// that side, and through the membership naming its account.
func (h *handlers) authorizeSide(c *gin.Context, cred auth.Credential, d draft.Draft, side auth.Side) error {
	if cred.ForAccount() {
		if p, ok := d.AccountOf(cred.AccountID); !ok || p.Side != draft.Side(side) {
			return &draft.RefusalError{Code: draft.CodeForbidden, Detail: "account " + cred.AccountID + " takes part in draft " + d.ID() + " for no " + string(side) + " participant"}
		}
		return h.credentials.AuthorizeSide(c.Request.Context(), cred, resource(d.ID()), side, "")
	}
	if !d.ActsFor(cred.PartnerID, draft.Side(side)) {
		return &draft.RefusalError{Code: draft.CodeForbidden, Detail: "partner " + cred.PartnerID + " acts for no " + string(side) + " participant of draft " + d.ID()}
	}
	return h.credentials.AuthorizeSide(c.Request.Context(), cred, resource(d.ID()), side, c.GetHeader(auth.CapabilityHeader))
}
