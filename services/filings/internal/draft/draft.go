package draft

import (
	"time"
)

// Draft is a case draft. Build it with [Prepare] (or load it with
// UnmarshalJSON); its terms cannot change afterwards, and [Confirm],
// [Draft.WithConsent] and [Draft.WithFeePaid] return a new Draft rather than
// change the one they are given.
type Draft struct {
	id, reservedCaseID, externalCaseID string
	route                              Route
	status                             Status
	digest                             string
	createdAt, expiresAt, openedAt     time.Time
	createdBy                          string
	rules                              Rules
	fee                                Fee
	caseMode                           CaseMode
	intakeMode                         IntakeMode
	confirmationMode                   ConfirmationMode
	procedure                          Procedure
	participants                       []Participant
	confirmations                      []Confirmation
	evaluation                         *Evaluation
	evaluationDigest                   string
	claim                              Claim
	claimantAcceptanceIdentity         string
	tenantID, environment, partnerID   string
	// origin is set for a draft prepared from AP2 or UCP objects.
	origin *Origin
}

// Confirmation is one participant's confirmation in a draft.
type Confirmation struct {
	ParticipantID     string
	Side              Side
	PartnerID         string
	AuthorizationMode AuthorizationMode
	// Required says whether the policy needs this confirmation.
	Required bool
	Status   ConfirmationStatus
	// Statement is the exact text the participant confirms.
	Statement string
	// The rest is set once the confirmation is recorded.
	Method                ConfirmationMethod
	ConfirmedAt           time.Time
	ActorID               string // empty for a recorded consent
	ConfirmationReference string
}

// ID returns the draft id.
func (d Draft) ID() string { return d.id }

// ReservedCaseID returns the id the case will have once opened.
func (d Draft) ReservedCaseID() string { return d.reservedCaseID }

// ExternalCaseID returns the partner's id for the case.
func (d Draft) ExternalCaseID() string { return d.externalCaseID }

// Status returns the draft status.
func (d Draft) Status() Status { return d.status }

// Digest returns the draft digest, 64 lowercase hex characters.
func (d Draft) Digest() string { return d.digest }

// CreatedAt returns when the draft was prepared.
func (d Draft) CreatedAt() time.Time { return d.createdAt }

// CreatedBy returns the public id of the credential that prepared the draft.
func (d Draft) CreatedBy() string { return d.createdBy }

// ExpiresAt returns the instant from which the draft takes no more acts.
func (d Draft) ExpiresAt() time.Time { return d.expiresAt }

// OpenedAt returns when the draft opened its case; zero until it did.
func (d Draft) OpenedAt() time.Time { return d.openedAt }

// Rules returns the rules the draft is pinned to.
func (d Draft) Rules() Rules { return d.rules }

// Fee returns the filing-fee projection.
func (d Draft) Fee() Fee { return d.fee }

// CaseMode returns the case mode.
func (d Draft) CaseMode() CaseMode { return d.caseMode }

// IntakeMode returns the intake mode.
func (d Draft) IntakeMode() IntakeMode { return d.intakeMode }

// ConfirmationMode returns the confirmation policy mode.
func (d Draft) ConfirmationMode() ConfirmationMode { return d.confirmationMode }

// Procedure returns the procedure plan (the canonical "schedule").
func (d Draft) Procedure() Procedure { return d.procedure }

// ProcedureName returns the procedure as the canonical view names it:
// agent_only when every participant is an autonomous_agent, standard
// otherwise.
func (d Draft) ProcedureName() ProcedureName {
	for _, p := range d.participants {
		if p.PrincipalKind != PrincipalAutonomousAgent {
			return ProcedureStandard
		}
	}
	return ProcedureAgentOnly
}

// Participants returns a copy of the participants, in request order.
func (d Draft) Participants() []Participant { return clone(d.participants) }

// Participant returns the participant with the given id.
func (d Draft) Participant(id string) (Participant, bool) {
	if i := d.participantIndex(id); i >= 0 {
		return d.participants[i], true
	}
	return Participant{}, false
}

// Confirmations returns a copy of the confirmations, one per participant in
// participant order.
func (d Draft) Confirmations() []Confirmation { return clone(d.confirmations) }

// Evaluation returns a copy of the evaluation definition and its digest, or
// nil and "" for a proceeding.
func (d Draft) Evaluation() (*Evaluation, string) {
	if d.evaluation == nil {
		return nil, ""
	}
	e := d.evaluation.clone()
	return &e, d.evaluationDigest
}

// Claim returns the claim.
func (d Draft) Claim() Claim { return d.claim }

// ClaimantAcceptanceIdentity returns the claimant acceptance identity, or ""
// when the draft has none.
func (d Draft) ClaimantAcceptanceIdentity() string { return d.claimantAcceptanceIdentity }

// TenantID returns the tenant of the preparing credential.
func (d Draft) TenantID() string { return d.tenantID }

// Environment returns sandbox or live.
func (d Draft) Environment() string { return d.environment }

// PartnerID returns the preparing partner.
func (d Draft) PartnerID() string { return d.partnerID }

// PreparedVia returns the route the draft was prepared on.
func (d Draft) PreparedVia() Route { return d.route }

// Canonical reports whether the draft was prepared on POST /api/filings.
func (d Draft) Canonical() bool { return d.route == RouteCanonical }

// Legacy reports whether the draft was prepared on the legacy pair and so
// must be confirmed on POST /api/v2/filings/{draftId}/confirm.
func (d Draft) Legacy() bool { return d.route == RouteLegacy }

// DigestPreimage returns the RFC 8785 canonical JSON the digest is the
// SHA-256 of.
func (d Draft) DigestPreimage() []byte { return mustCanonical(d.terms()) }

func (d Draft) participantIndex(id string) int {
	for i, p := range d.participants {
		if p.ID == id {
			return i
		}
	}
	return -1
}

// effectivePartner is the partner a participant acts through.
func (d Draft) effectivePartner(p Participant) string {
	if p.AccountID != "" {
		return "" // an account acts through no partner
	}
	if p.PartnerID != "" {
		return p.PartnerID
	}
	return d.partnerID
}

// clone returns a draft that shares no mutable memory with d.
func (d Draft) clone() Draft {
	d.participants = clone(d.participants)
	d.confirmations = clone(d.confirmations)
	if d.evaluation != nil {
		e := d.evaluation.clone()
		d.evaluation = &e
	}
	d.origin = d.origin.clone()
	return d
}

// seal computes the digest and, from it, every confirmation statement.
func (d *Draft) seal() {
	d.digest = sha256Hex(d.DigestPreimage())
	for i, p := range d.participants {
		d.confirmations[i].Statement = statement(d.digest, d.id, d.externalCaseID, d.rules.Version, p)
	}
}

// statement returns the confirmation statement of participant p in the
// draft with the given digest, id, external case id and rules version:
//
//	I, <principalId>, confirm as <side> participant <participantId> the case
//	draft <draftId> with digest <digest> under rules <version>, and agree to
//	arbitrate <externalCaseId> on these terms.
//
// on one line. The confirmation POST must carry it byte for byte.
func statement(digest, draftID, externalCaseID, rulesVersion string, p Participant) string {
	return "I, " + p.PrincipalID + ", confirm as " + string(p.Side) + " participant " + p.ID +
		" the case draft " + draftID + " with digest " + digest + " under rules " + rulesVersion +
		", and agree to arbitrate " + externalCaseID + " on these terms."
}

// derivedStatus is the status the confirmations and the fee imply.
func (d Draft) derivedStatus() Status {
	for _, c := range d.confirmations {
		if c.Required && c.Status != ConfirmationConfirmed {
			return StatusAwaitingConfirmations
		}
	}
	if d.fee.Collection == CollectBeforeOpening && d.fee.Status != FeePaid {
		return StatusReadyToOpen
	}
	return StatusOpened
}

// settle moves d to the status its confirmations and fee imply, opening it
// at now if that is opened, and reports what changed.
func (d *Draft) settle(now time.Time) Outcome {
	before := d.status
	d.status = d.derivedStatus()
	out := Outcome{
		Last:   before == StatusAwaitingConfirmations && d.status != StatusAwaitingConfirmations,
		Opened: before != StatusOpened && d.status == StatusOpened,
	}
	if out.Opened {
		d.openedAt = now
	}
	out.Draft = *d
	return out
}
