package draft

import (
	"errors"
	"fmt"
	"time"

	"github.com/pcourt/pcourt/libs/refusal"
)

// RefusalCode is the stable code of a refused act on a draft. The HTTP
// status each maps to is in docs/filings-drafts.md.
type RefusalCode string

// The refusal codes.
const (
	CodeDraftNotFound       RefusalCode = "draft_not_found"      // 404
	CodeDraftExpired        RefusalCode = "draft_expired"        // 410
	CodeDigestMismatch      RefusalCode = "digest_mismatch"      // 409
	CodeStatementMismatch   RefusalCode = "statement_mismatch"   // 422
	CodeActorMismatch       RefusalCode = "actor_mismatch"       // 403
	CodePrincipalMismatch   RefusalCode = "principal_mismatch"   // 403
	CodeNotAParticipant     RefusalCode = "not_a_participant"    // 422
	CodeNotRequired         RefusalCode = "not_required"         // 409
	CodeAlreadyConfirmed    RefusalCode = "already_confirmed"    // 409
	CodeDraftAlreadyOpened  RefusalCode = "draft_already_opened" // 409
	CodeWrongRouteFamily    RefusalCode = "wrong_route_family"   // 409
	CodeForbidden           RefusalCode = "forbidden"            // 403
	CodeInvalidConfirmation RefusalCode = "invalid_confirmation" // 400
	CodeFeeAlreadyPaid      RefusalCode = "fee_already_paid"     // 409
)

// RefusalError is a refused act: the draft and the act are well formed but
// the act may not happen. Detail is safe to show the caller. It matches any
// refusal with the same code, so the sentinels below work:
// errors.Is(err, draft.ErrDigestMismatch).
type RefusalError = refusal.Error[RefusalCode]

// One sentinel per refusal code, for errors.Is.
var (
	ErrDraftNotFound       = &RefusalError{Code: CodeDraftNotFound}
	ErrDraftExpired        = &RefusalError{Code: CodeDraftExpired}
	ErrDigestMismatch      = &RefusalError{Code: CodeDigestMismatch}
	ErrStatementMismatch   = &RefusalError{Code: CodeStatementMismatch}
	ErrActorMismatch       = &RefusalError{Code: CodeActorMismatch}
	ErrPrincipalMismatch   = &RefusalError{Code: CodePrincipalMismatch}
	ErrNotAParticipant     = &RefusalError{Code: CodeNotAParticipant}
	ErrNotRequired         = &RefusalError{Code: CodeNotRequired}
	ErrAlreadyConfirmed    = &RefusalError{Code: CodeAlreadyConfirmed}
	ErrDraftAlreadyOpened  = &RefusalError{Code: CodeDraftAlreadyOpened}
	ErrWrongRouteFamily    = &RefusalError{Code: CodeWrongRouteFamily}
	ErrForbidden           = &RefusalError{Code: CodeForbidden}
	ErrInvalidConfirmation = &RefusalError{Code: CodeInvalidConfirmation}
	ErrFeeAlreadyPaid      = &RefusalError{Code: CodeFeeAlreadyPaid}
)

func refuse(code RefusalCode, format string, args ...any) *RefusalError {
	return &RefusalError{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// ConfirmRequest is the draft confirmation request body.
type ConfirmRequest struct {
	ParticipantID         string
	DraftDigest           string
	ConfirmationStatement string
	ActorID               string
	PrincipalID           string
	ConfirmationMethod    string
	ConfirmationReference string
}

// Actor is the authenticated credential an act comes with, and the route it
// came through.
type Actor struct {
	CredentialID string // the credential's public id
	Role         Role
	TenantID     string
	Environment  string
	PartnerID    string
	AgentID      string // the credential's immutable agent id, if any
	// AccountID is the account an account token acts for; Role,
	// PartnerID and AgentID are then empty.
	AccountID string
	Route     Route
}

// Outcome is the result of an accepted act.
type Outcome struct {
	// Draft is the draft after the act.
	Draft Draft
	// Opened reports that this act opened the case: answer 201 with
	// Opened(Draft, …) and publish the opening.
	Opened bool
	// Last reports that this act completed the required confirmations. The
	// draft is then opened, or ready_to_open while its fee is unpaid.
	Last bool
}

// ErrInvalidActor means the HTTP layer passed an Actor without a credential
// id or with an unknown route; it answers 500.
var ErrInvalidActor = errors.New("invalid actor")

// Confirm records one participant's confirmation of d, checking in this
// order (the first failure is returned, with d unchanged):
//
//  1. invalid_confirmation: confirmationMethod is not protocol_act, a field
//     is missing or too long, or draftDigest is not 64 lowercase hex;
//  2. draft_not_found: the actor's tenant or environment is not the
//     draft's (a draft of another tenant does not exist for the caller);
//  3. wrong_route_family: a legacy draft on the v2/canonical family or the
//     reverse;
//  4. not_a_participant: no participant has participantId;
//  5. forbidden: the actor's partner is not the participant's (its
//     partnerId, or the preparing partner), or its role is an agent role of
//     the other side;
//  6. actor_mismatch: actorId is not the participant's agent id (or, for a
//     participant without one, the credential's public id), or the
//     participant needs its agent's credential (agent_credential, or an
//     agent credential of another agent);
//  7. principal_mismatch: principalId is not the participant's;
//  8. draft_already_opened; 9. draft_expired (now is not before ExpiresAt);
//  10. not_required: the policy does not ask this participant to confirm;
//  11. already_confirmed;
//  12. digest_mismatch; 13. statement_mismatch (byte for byte).
//
// Membership grants and case capabilities are the HTTP layer's to check
// before calling Confirm.
func Confirm(d Draft, req ConfirmRequest, actor Actor, now time.Time) (Outcome, error) {
	unchanged := Outcome{Draft: d}
	if actor.CredentialID == "" || !actor.Route.Valid() {
		return unchanged, fmt.Errorf("%w: credential %q, route %q", ErrInvalidActor, actor.CredentialID, actor.Route)
	}
	if err := req.validate(); err != nil {
		return unchanged, err
	}
	if actor.TenantID != d.tenantID || actor.Environment != d.environment {
		return unchanged, refuse(CodeDraftNotFound, "no draft %s in this tenant and environment", d.id)
	}
	if actor.Route.Legacy() != d.route.Legacy() {
		return unchanged, refuse(CodeWrongRouteFamily, "draft %s was prepared on %s; confirm it on %s", d.id, preparedOn(d.route), confirmRoute(d))
	}
	i := d.participantIndex(req.ParticipantID)
	if i < 0 {
		return unchanged, refuse(CodeNotAParticipant, "draft %s has no participant %s", d.id, req.ParticipantID)
	}
	p, c := d.participants[i], d.confirmations[i]
	if err := d.authorize(p, actor, req.ActorID); err != nil {
		return unchanged, err
	}
	if req.PrincipalID != p.PrincipalID {
		return unchanged, refuse(CodePrincipalMismatch, "principalId is not the principal of participant %s", p.ID)
	}
	if err := d.acceptsConfirmation(c, now); err != nil {
		return unchanged, err
	}
	if req.DraftDigest != d.digest {
		return unchanged, refuse(CodeDigestMismatch, "draftDigest is not the digest of draft %s; read the draft again", d.id)
	}
	if req.ConfirmationStatement != c.Statement {
		return unchanged, refuse(CodeStatementMismatch, "confirmationStatement differs from the statement of participant %s; copy it exactly from the draft", p.ID)
	}
	next := d.clone()
	next.confirmations[i] = recorded(c, MethodProtocolAct, instant(now), req.ActorID, req.ConfirmationReference)
	return next.settle(instant(now)), nil
}

// WithConsent applies a bundled authorization recorded through the
// authorizations API: under the bundled_authorizations policy, it counts as
// the confirmation of a participant whose authorizationMode is
// bundled_authorization. actor is the credential that records it; at is
// when the consent is applied; reference names the consent.
//
// A consent speaks for the participant, so recording one needs the same
// authority over the participant as confirming for it: a credential of the
// participant's partner. Refusals, in this order, with d unchanged:
//
//  1. invalid_confirmation: reference not 1 to 200 visible ASCII characters;
//  2. draft_not_found: the actor's tenant or environment is not the draft's;
//  3. not_a_participant;
//  4. forbidden: the actor is not a platform orchestrator of the
//     participant's partner (its partnerId, or the preparing partner);
//  5. not_required: the policy is not bundled_authorizations or the
//     participant is not bundled_authorization;
//  6. draft_already_opened; 7. draft_expired; 8. already_confirmed.
func (d Draft) WithConsent(participantID string, actor Actor, at time.Time, reference string) (Outcome, error) {
	unchanged := Outcome{Draft: d}
	if err := visible("reference", reference, 200); err != nil {
		return unchanged, refuse(CodeInvalidConfirmation, "consent reference must be 1 to 200 visible ASCII characters")
	}
	if actor.TenantID != d.tenantID || actor.Environment != d.environment {
		return unchanged, refuse(CodeDraftNotFound, "no draft %s in this tenant and environment", d.id)
	}
	i := d.participantIndex(participantID)
	if i < 0 {
		return unchanged, refuse(CodeNotAParticipant, "draft %s has no participant %s", d.id, participantID)
	}
	p, c := d.participants[i], d.confirmations[i]
	if partner := d.effectivePartner(p); actor.PartnerID != partner || actor.Role != RolePlatformOrchestrator {
		return unchanged, refuse(CodeForbidden, "participant %s acts through partner %s; only that partner's orchestrator records its consent", p.ID, partner)
	}
	if d.confirmationMode != ConfirmBundledAuthorizations || p.AuthorizationMode != AuthBundledAuthorization {
		return unchanged, refuse(CodeNotRequired, "a recorded consent stands in only for a bundled_authorization participant under the bundled_authorizations policy")
	}
	if err := d.acceptsConfirmation(c, at); err != nil {
		return unchanged, err
	}
	next := d.clone()
	next.confirmations[i] = recorded(c, MethodRecordedConsent, instant(at), "", reference)
	return next.settle(instant(at)), nil
}

// WithFeePaid marks the draft's fee paid at the given instant. A draft
// waiting in ready_to_open opens (Outcome.Opened); otherwise only the fee
// changes. Refusals, with d unchanged: fee_already_paid, and draft_expired
// for a draft not yet opened whose expiry has passed.
func (d Draft) WithFeePaid(at time.Time) (Outcome, error) {
	unchanged := Outcome{Draft: d}
	if d.fee.Status == FeePaid {
		return unchanged, refuse(CodeFeeAlreadyPaid, "fee %s was paid at %s", d.fee.FeeID, formatTime(d.fee.PaidAt))
	}
	if d.status != StatusOpened && !at.Before(d.expiresAt) {
		return unchanged, refuse(CodeDraftExpired, "draft %s expired at %s", d.id, formatTime(d.expiresAt))
	}
	next := d.clone()
	next.fee.Status = FeePaid
	next.fee.PaidAt = instant(at)
	out := next.settle(instant(at))
	out.Last = false // the confirmations were already complete or still are not
	return out, nil
}

// acceptsConfirmation checks the draft's and the confirmation's state.
func (d Draft) acceptsConfirmation(c Confirmation, now time.Time) error {
	switch {
	case d.status == StatusOpened:
		return refuse(CodeDraftAlreadyOpened, "draft %s already opened case %s", d.id, d.reservedCaseID)
	case !now.Before(d.expiresAt):
		return refuse(CodeDraftExpired, "draft %s expired at %s", d.id, formatTime(d.expiresAt))
	case !c.Required:
		return refuse(CodeNotRequired, "the %s policy does not ask participant %s to confirm", d.confirmationMode, c.ParticipantID)
	case c.Status == ConfirmationConfirmed:
		return refuse(CodeAlreadyConfirmed, "participant %s confirmed at %s", c.ParticipantID, formatTime(c.ConfirmedAt))
	}
	return nil
}

// authorize checks that actor may confirm for p: partner, role and agent
// binding, then the declared actorId.
func (d Draft) authorize(p Participant, actor Actor, actorID string) error {
	if actor.AccountID != "" || p.AccountID != "" {
		return authorizeAccount(p, actor, actorID)
	}
	if partner := d.effectivePartner(p); actor.PartnerID != partner {
		return refuse(CodeForbidden, "participant %s acts through partner %s; this credential belongs to another partner", p.ID, partner)
	}
	switch actor.Role {
	case RolePlatformOrchestrator:
	case RoleClaimantAgent, RoleRespondentAgent:
		if (actor.Role == RoleClaimantAgent) != (p.Side == SideClaimant) {
			return refuse(CodeForbidden, "a %s credential may not confirm for the %s side", actor.Role, p.Side)
		}
	default:
		return refuse(CodeForbidden, "role %q may not confirm drafts", actor.Role)
	}
	switch {
	case p.AuthorizationMode == AuthAgentCredential && actor.AgentID != p.AgentID:
		return refuse(CodeActorMismatch, "participant %s is confirmed only with the credential of agent %s", p.ID, p.AgentID)
	case p.AgentID != "" && actor.AgentID != "" && actor.AgentID != p.AgentID:
		return refuse(CodeActorMismatch, "this credential belongs to another agent than participant %s's", p.ID)
	case actorID != expectedActorID(p, actor):
		if p.AgentID != "" {
			return refuse(CodeActorMismatch, "actorId must be the immutable agent id of participant %s", p.ID)
		}
		return refuse(CodeActorMismatch, "actorId must be the public id of the authenticated credential")
	}
	return nil
}

// authorizeAccount is the rule for accounts: a participant naming an
// account is confirmed by that account's own token alone, with the
// account id as actorId; an account token confirms for no other
// participant. No partner credential, orchestrator or agent, stands in.
func authorizeAccount(p Participant, actor Actor, actorID string) error {
	switch {
	case actor.AccountID == "":
		return refuse(CodeForbidden, "participant %s takes part as account %s; only that account's own token confirms for it", p.ID, p.AccountID)
	case actor.AccountID != p.AccountID:
		return refuse(CodeForbidden, "this token acts for account %s, which is not participant %s", actor.AccountID, p.ID)
	case actorID != p.AccountID:
		return refuse(CodeActorMismatch, "actorId must be the account id of participant %s", p.ID)
	}
	return nil
}

// expectedActorID is the actorId a confirmation for p by actor must carry.
func expectedActorID(p Participant, actor Actor) string {
	if p.AgentID != "" {
		return p.AgentID
	}
	return actor.CredentialID
}

func recorded(c Confirmation, method ConfirmationMethod, at time.Time, actorID, reference string) Confirmation {
	c.Status = ConfirmationConfirmed
	c.Method = method
	c.ConfirmedAt = at
	c.ActorID = actorID
	c.ConfirmationReference = reference
	return c
}

// validate checks the request body's own constraints.
func (r ConfirmRequest) validate() error {
	if r.ConfirmationMethod != string(MethodProtocolAct) {
		return refuse(CodeInvalidConfirmation, "confirmationMethod must be protocol_act")
	}
	fields := []struct {
		name, value string
		max         int
	}{
		{"participantId", r.ParticipantID, 64},
		{"draftDigest", r.DraftDigest, 64},
		{"confirmationStatement", r.ConfirmationStatement, 4096},
		{"actorId", r.ActorID, 200},
		{"principalId", r.PrincipalID, 4 * maxPrincipalRunes},
		{"confirmationReference", r.ConfirmationReference, 200},
	}
	for _, f := range fields {
		if f.value == "" {
			return refuse(CodeInvalidConfirmation, "%s is required", f.name)
		}
		if len(f.value) > f.max {
			return refuse(CodeInvalidConfirmation, "%s must be at most %d bytes", f.name, f.max)
		}
	}
	if !hex64Pattern.MatchString(r.DraftDigest) {
		return refuse(CodeInvalidConfirmation, "draftDigest must be 64 lowercase hex characters")
	}
	if visible("confirmationReference", r.ConfirmationReference, 200) != nil {
		return refuse(CodeInvalidConfirmation, "confirmationReference must be visible ASCII characters without spaces")
	}
	return nil
}

func preparedOn(r Route) string {
	switch r {
	case RouteLegacy:
		return "POST /api/v2/filings/prepare"
	case RouteCanonical:
		return "POST /api/filings"
	default:
		return "POST /api/v2/case-drafts"
	}
}

func confirmRoute(d Draft) string {
	if d.route == RouteLegacy {
		return "POST /api/v2/filings/" + d.id + "/confirm"
	}
	return "POST /api/v2/case-drafts/" + d.id + "/confirmations or POST /api/filings/" + d.id + "/confirmations"
}
