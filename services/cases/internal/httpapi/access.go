package httpapi

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// Who may see and act on a case, in one place (docs/cases-routes.md,
// "Access"). A case is invisible — 404 case_not_found_or_opening, exactly
// as for a case that does not exist — to a credential of another tenant or
// environment, and to one with no authority over any side of it.

// capabilitySides are the case capabilities that work as
// X-PC-Case-Capability, with the side each proves. respondent_login is the
// hosted page's one-time login token and is not a bearer capability.
var capabilitySides = map[string]procedure.Side{
	procedure.CapabilityRespondentInvite: procedure.Respondent,
	"claimant_party":                     procedure.Claimant,
}

// authority says how a credential may act for a side.
type authority struct {
	// capability is the purpose of the case capability that proved it, ""
	// when a role or a membership did.
	capability string
	// capabilityHash is the SHA-256 of the capability presented.
	capabilityHash string
}

func resource(caseID string) string { return "case:" + caseID }

func notVisible(caseID string) *problem.Error {
	return problem.Newf(CaseNotFoundOrOpening,
		"No case %s is visible to this credential. A case opened moments ago may still be opening: retry after Retry-After; a case that stays unknown for a minute does not exist for this credential.",
		problem.Clip(caseID)).WithHeader("Retry-After", "1")
}

func forbidden(format string, args ...any) *problem.Error {
	return problem.Newf(problem.Forbidden, format, args...)
}

// load reads the case named in the path and checks that the caller may see
// it.
func (h *handlers) load(c *gin.Context, caseID string) (auth.Credential, store.Loaded, error) {
	cred, ok := auth.CredentialFrom(c.Request.Context())
	if !ok {
		return auth.Credential{}, store.Loaded{}, problem.New(problem.Unauthenticated, "Send a bearer credential in the Authorization header.")
	}
	l, err := h.cases.Load(c.Request.Context(), caseID)
	if errors.Is(err, store.ErrNotFound) {
		return cred, store.Loaded{}, notVisible(caseID)
	}
	if err != nil {
		return cred, store.Loaded{}, err
	}
	visible, err := h.visible(c.Request.Context(), cred, l.Case, c.GetHeader(auth.CapabilityHeader))
	if err != nil {
		return cred, store.Loaded{}, err
	}
	if !visible {
		return cred, store.Loaded{}, notVisible(caseID)
	}
	return cred, l, nil
}

// visible: same tenant and environment, and then a platform orchestrator
// whose partner acts for a participant (or filed the case), or an agent
// with authority over the side of its role.
func (h *handlers) visible(ctx context.Context, cred auth.Credential, cs procedure.Case, capToken string) (bool, error) {
	if cred.Tenant != cs.Tenant || string(cred.Environment) != cs.Environment {
		return false, nil
	}
	if cred.Role == auth.RolePlatformOrchestrator {
		if cs.PartnerID == cred.PartnerID {
			return true, nil
		}
		for _, p := range cs.Participants {
			if p.PartnerID == cred.PartnerID {
				return true, nil
			}
		}
		return false, nil
	}
	side := procedure.Claimant
	if cred.Role == auth.RoleRespondentAgent {
		side = procedure.Respondent
	}
	_, err := h.authorizeSide(ctx, cred, cs, side, capToken)
	if errors.Is(err, auth.ErrForbidden) {
		return false, nil
	}
	return err == nil, err
}

// authorizeSide decides whether cred may act for side of cs:
//   - a platform orchestrator when its partner acts for a participant of
//     that side (a participant named no partner acts through the filing
//     partner);
//   - an agent of the side's role that is the immutable agent of a
//     participant of that side, through that participant's partner (filings
//     checked that identity when the participant confirmed the draft);
//   - an agent of the side's role with an active membership of the side
//     of "case:<id>" bound to its credential or agent identity, or with the
//     case's current capability of that side in X-PC-Case-Capability (a
//     rotated invitation no longer counts).
//
// A side named in a request is never proof of authority.
func (h *handlers) authorizeSide(ctx context.Context, cred auth.Credential, cs procedure.Case, side procedure.Side, capToken string) (authority, error) {
	if cred.Role == auth.RolePlatformOrchestrator {
		for _, p := range cs.Participants {
			if p.Side == side && p.PartnerID == cred.PartnerID {
				return authority{}, nil
			}
		}
		return authority{}, fmt.Errorf("partner %s acts for no %s participant of case %s: %w", cred.PartnerID, side, cs.ID, auth.ErrForbidden)
	}
	if cred.Role == auth.SideRole(auth.Side(side)) && cred.AgentID != "" {
		for _, p := range cs.Participants {
			if p.Side == side && p.AgentID == cred.AgentID && p.PartnerID == cred.PartnerID {
				return authority{}, nil
			}
		}
	}
	err := h.credentials.AuthorizeSide(ctx, cred, resource(cs.ID), auth.Side(side), "")
	if err == nil || !errors.Is(err, auth.ErrForbidden) || cred.Role != auth.SideRole(auth.Side(side)) {
		return authority{}, err
	}
	if capToken != "" {
		hash := auth.HashToken(capToken)
		for purpose, s := range capabilitySides {
			if s == side && cs.Capabilities[purpose] == hash {
				return authority{capability: purpose, capabilityHash: hash}, nil
			}
		}
		return authority{}, fmt.Errorf("the case capability is not a current %s capability of case %s: %w", side, cs.ID, auth.ErrForbidden)
	}
	return authority{}, err
}

// anySide asks actor to find the side from the credential, for acts either
// side may take.
const anySide procedure.Side = ""

// sideOf is the side a credential acts for when the act does not fix one:
// an agent's role says it; an orchestrator's partner must act for
// participants of one side only, or the body must name the participant.
func sideOf(cred auth.Credential, cs procedure.Case) (procedure.Side, error) {
	switch cred.Role {
	case auth.RoleClaimantAgent:
		return procedure.Claimant, nil
	case auth.RoleRespondentAgent:
		return procedure.Respondent, nil
	}
	var sides []procedure.Side
	for _, p := range cs.Participants {
		if p.PartnerID == cred.PartnerID && !slices.Contains(sides, p.Side) {
			sides = append(sides, p.Side)
		}
	}
	switch len(sides) {
	case 1:
		return sides[0], nil
	case 0:
		return "", forbidden("Partner %s acts for no participant of case %s.", cred.PartnerID, cs.ID)
	default:
		return "", invalidAct(fmt.Sprintf("participantId is required: partner %s acts for both sides of case %s.", cred.PartnerID, cs.ID))
	}
}

// actor resolves who acts: the participant named in the body, or else the
// one participant of side the caller may act for, and checks the caller's
// authority over that participant's side. An unknown participant id is
// left to the procedure (not_a_participant) once the caller has shown
// authority over side.
func (h *handlers) actor(c *gin.Context, cred auth.Credential, cs procedure.Case, side procedure.Side, participantID string) (string, authority, error) {
	p, named := cs.Participant(participantID)
	switch {
	case named:
		side = p.Side
	case side == anySide:
		var err error
		if side, err = sideOf(cred, cs); err != nil {
			return "", authority{}, err
		}
	}
	by, err := h.authorizeSide(c.Request.Context(), cred, cs, side, c.GetHeader(auth.CapabilityHeader))
	if errors.Is(err, auth.ErrForbidden) {
		return "", authority{}, forbidden("This credential may not act for the %s side of case %s: a platform orchestrator needs its partner to act for a %s participant; an agent needs a membership of that side or the case's current capability in X-PC-Case-Capability.", side, cs.ID, side)
	}
	if err != nil {
		return "", authority{}, err
	}
	// An orchestrator acts for its partner's participants; a participant
	// bound to an immutable agent is acted for by that agent only.
	mine := func(p procedure.Participant) bool {
		if cred.Role == auth.RolePlatformOrchestrator {
			return p.PartnerID == cred.PartnerID
		}
		return p.AgentID == "" || p.AgentID == cred.AgentID
	}
	if participantID != "" {
		if named && !mine(p) {
			return "", authority{}, forbidden("This credential does not act for participant %s of case %s.", p.ID, cs.ID)
		}
		return participantID, by, nil
	}
	var ids []string
	for _, p := range cs.Participants {
		if p.Side == side && mine(p) {
			ids = append(ids, p.ID)
		}
	}
	switch len(ids) {
	case 1:
		return ids[0], by, nil
	case 0:
		return "", authority{}, forbidden("This credential acts for no %s participant of case %s.", side, cs.ID)
	default:
		return "", authority{}, invalidAct(fmt.Sprintf("participantId is required: this credential acts for %d %s participants of case %s.", len(ids), side, cs.ID))
	}
}
