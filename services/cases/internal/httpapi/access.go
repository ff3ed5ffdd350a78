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

// authority says how a credential may act for a participant.
type authority struct {
	// capability is the purpose of the case capability that proved it, ""
	// when the partner, an agent identity or a membership did.
	capability string
	// capabilityHash is the SHA-256 of the capability presented.
	capabilityHash string
	// bind is the partner a join binds an unbound (hosted) respondent to:
	// the partner of the agent that joins with the invitation.
	bind string
	// representative says the credential acts as one of the side's
	// representatives, not as the side's own party.
	representative bool
}

// party says the authority is the side's own: its partner's orchestrator,
// its immutable agent or a membership of the side, not a representative
// nor a capability. Only a party appoints, changes and removes its side's
// representatives.
func (a authority) party() bool { return !a.representative && a.capability == "" }

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
// whose partner filed the case or acts for a participant, or an agent that
// may act for a participant of its role's side.
func (h *handlers) visible(ctx context.Context, cred auth.Credential, cs procedure.Case, capToken string) (bool, error) {
	if cred.Tenant != cs.Tenant || string(cred.Environment) != cs.Environment {
		return false, nil
	}
	if tribunalCredential(cred) {
		// A tribunal member sees the cases it is assigned to (an
		// appellate reviewer the case of its appeal), and no other; it
		// never acts for a side (standing.actsFor).
		_, assigned := cs.Tribunal.Member(cred.PublicID)
		return assigned || cs.AfterAward.HearsAppeal(cred.PublicID), nil
	}
	if cred.ForAccount() {
		// An account token sees the case its account takes part in, and
		// a token bound to another case sees none.
		if !cred.MayTouch(resource(cs.ID)) {
			return false, nil
		}
		st, err := h.standing(ctx, cred, cs, "")
		if err != nil {
			return false, err
		}
		return st.actsForSide(cs, procedure.Claimant) || st.actsForSide(cs, procedure.Respondent), nil
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
	st, err := h.standing(ctx, cred, cs, capToken)
	if err != nil {
		return false, err
	}
	return st.actsForSide(cs, procedure.Side(roleSide(cred.Role))), nil
}

// tribunalCredential reports whether cred is a tribunal member's
// credential (adjudicator, reviewer), the one test of it in the service.
// An account token never is, whatever role its record might name: OAuth
// never grants tribunal powers (docs/accounts.md), and the tokens
// libs/auth issues carry no role, so this keeps an account out of every
// tribunal act and every tribunal view twice over, on the routes that
// take account tokens beside the tribunal's (the pre-award review).
func tribunalCredential(cred auth.Credential) bool {
	return cred.Role.Tribunal() && !cred.ForAccount()
}

// roleSide is the side an agent role acts for.
func roleSide(r auth.Role) auth.Side {
	if r == auth.RoleRespondentAgent {
		return auth.Respondent
	}
	return auth.Claimant
}

// standing is what the server knows of a credential's relation to one
// case, read once per request: the sides of case:<id> its memberships
// admit it to, the sides whose active representative it is, the current
// case capability it presents, and whether its partner acts for the
// claimant side. Nothing a request says is part of it but the capability,
// which is checked against the case's hashes.
type standing struct {
	cred    auth.Credential
	members map[procedure.Side]bool
	// represents are the sides an active representative of the case
	// record admits cred to (Subject.Admits, as a membership): a removed
	// one admits nobody from the next request on.
	represents map[procedure.Side]bool
	// capability, capabilityHash and capabilitySide describe the case's
	// current capability presented in X-PC-Case-Capability, if any (a
	// rotated invitation no longer counts).
	capability     string
	capabilityHash string
	capabilitySide procedure.Side
	// claimantPartner says cred's partner acts for a claimant participant:
	// such a credential never acts for a hosted respondent.
	claimantPartner bool
}

func (h *handlers) standing(ctx context.Context, cred auth.Credential, cs procedure.Case, capToken string) (standing, error) {
	st := standing{cred: cred, members: map[procedure.Side]bool{}, represents: map[procedure.Side]bool{}}
	for _, r := range cs.ActiveRepresentatives() {
		if auth.Subject(r.Subject).Admits(cred) {
			st.represents[r.Side] = true
		}
	}
	if cred.Role != auth.RolePlatformOrchestrator {
		members, err := h.credentials.Memberships(ctx, resource(cs.ID))
		if err != nil {
			return st, err
		}
		for _, m := range members {
			if m.Subject.Admits(cred) {
				st.members[procedure.Side(m.Side)] = true
			}
		}
	}
	if capToken != "" {
		hash := auth.HashToken(capToken)
		for purpose, side := range capabilitySides {
			if cs.Capabilities[purpose] == hash {
				st.capability, st.capabilityHash, st.capabilitySide = purpose, hash, side
			}
		}
	}
	for _, p := range cs.Participants {
		if p.Side == procedure.Claimant && cred.PartnerID != "" && p.PartnerID == cred.PartnerID {
			st.claimantPartner = true
		}
	}
	return st, nil
}

// actsFor decides whether the credential may act for participant p. A
// side's acts come only from that side's own authority
// (docs/security.md, "Sides"):
//   - a participant bound to a partner is acted for only by credentials of
//     that partner: its orchestrator; the participant's immutable agent
//     when it names one (no other agent); otherwise an agent of the side's
//     role with a membership of the side of case:<id> (its credential, or
//     its partner's agent identity), an active representative of the
//     side (a credential or agent identity of that partner the side
//     appointed: representatives.go), or presenting the case's current
//     capability of the side. Another partner's credentials never act for
//     it, with or without a capability;
//   - a hosted respondent that joined on the hosted page is acted for by
//     that page's session only, never by a credential;
//   - a hosted respondent that has not joined (unbound) is acted for only
//     by a respondent agent presenting the current invitation whose
//     partner acts for no claimant participant: the claimant's partner
//     delivers the invitation and can never use it. Its join binds the
//     participant to the agent's partner;
//   - a tribunal member (adjudicator, reviewer) acts for no participant;
//   - a participant an account takes part as is acted for by that
//     account's own token alone, through the membership of its side
//     that names the account; an account token acts for no other
//     participant, and no capability stands in for it.
func (st standing) actsFor(p procedure.Participant) (authority, bool) {
	cred := st.cred
	capability := authority{capability: st.capability, capabilityHash: st.capabilityHash}
	switch {
	case tribunalCredential(cred):
		// A tribunal member is never a party, even of a case whose
		// draft bound a participant to its partner id (a draft names
		// partner ids freely) or where a membership names it.
		return authority{}, false
	case cred.ForAccount():
		return authority{}, p.AccountID != "" && p.AccountID == cred.AccountID && st.members[p.Side]
	case p.AccountID != "":
		return authority{}, false
	case p.Hosted:
		return authority{}, false
	case p.Unbound():
		if cred.Role == auth.RoleRespondentAgent && !st.claimantPartner && st.capabilitySide == p.Side {
			capability.bind = cred.PartnerID
			return capability, true
		}
		return authority{}, false
	case p.PartnerID != cred.PartnerID:
		return authority{}, false
	case cred.Role == auth.RolePlatformOrchestrator:
		return authority{}, true
	case roleSide(cred.Role) != auth.Side(p.Side):
		return authority{}, false
	case p.AgentID != "":
		return authority{}, p.AgentID == cred.AgentID
	case st.members[p.Side]:
		return authority{}, true
	case st.represents[p.Side]:
		return authority{representative: true}, true
	case st.capabilitySide == p.Side:
		return capability, true
	}
	return authority{}, false
}

// actsForSide reports whether the credential may act for some participant
// of side.
func (st standing) actsForSide(cs procedure.Case, side procedure.Side) bool {
	for _, p := range cs.Participants {
		if _, ok := st.actsFor(p); ok && p.Side == side {
			return true
		}
	}
	return false
}

// anySide asks actor to find the side from the credential, for acts either
// side may take.
const anySide procedure.Side = ""

// sideOf is the side a credential acts for when the act does not fix one:
// an agent's role says it; an orchestrator's partner must act for
// participants of one side only, or the body must name the participant.
func sideOf(cred auth.Credential, cs procedure.Case) (procedure.Side, error) {
	if cred.ForAccount() {
		for _, p := range cs.Participants {
			if p.AccountID == cred.AccountID {
				return p.Side, nil
			}
		}
		return "", forbidden("Account %s takes part in case %s as no participant.", cred.AccountID, cs.ID)
	}
	if cred.Role != auth.RolePlatformOrchestrator {
		return procedure.Side(roleSide(cred.Role)), nil
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
// one participant of side the caller may act for, and the authority by
// which it does. An unknown participant id is left to the procedure
// (not_a_participant) once the caller has shown authority over side.
func (h *handlers) actor(c *gin.Context, cred auth.Credential, cs procedure.Case, side procedure.Side, participantID string) (string, authority, error) {
	st, err := h.standing(c.Request.Context(), cred, cs, c.GetHeader(auth.CapabilityHeader))
	if err != nil {
		return "", authority{}, err
	}
	if p, named := cs.Participant(participantID); named {
		by, ok := st.actsFor(p)
		if !ok {
			return "", authority{}, forbidden("This credential does not act for participant %s of case %s: a participant is acted for only by its own partner's credentials (its agent, a membership of its side, or its side's current capability with them), a hosted respondent by its hosted session or, before it joins, by the agent of another partner than the claimant's that presents its invitation.", p.ID, cs.ID)
		}
		return p.ID, by, nil
	}
	if side == anySide {
		if side, err = sideOf(cred, cs); err != nil {
			return "", authority{}, err
		}
	}
	var ids []string
	var by authority
	for _, p := range cs.Participants {
		if a, ok := st.actsFor(p); ok && p.Side == side {
			ids = append(ids, p.ID)
			by = a
		}
	}
	switch {
	case len(ids) == 0:
		return "", authority{}, forbidden("This credential may not act for the %s side of case %s: a participant is acted for only by its own partner's credentials (its agent, a membership of its side, or its side's current capability with them), a hosted respondent by its hosted session or, before it joins, by the agent of another partner than the claimant's that presents its invitation.", side, cs.ID)
	case participantID != "":
		return participantID, authority{}, nil // unknown: the procedure refuses it
	case len(ids) == 1:
		return ids[0], by, nil
	default:
		return "", authority{}, invalidAct(fmt.Sprintf("participantId is required: this credential acts for %d %s participants of case %s.", len(ids), side, cs.ID))
	}
}
