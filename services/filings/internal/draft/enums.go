package draft

import "strings"

// The schema version constants of the spec's Versioning section.
const (
	SchemaCaseDraft       = "case-draft-v2"
	SchemaProcedurePlan   = "case-procedure-plan-v2"
	SchemaEvaluation      = "narrow-evaluation-v2"
	SchemaConfirmedFiling = "confirmed-filing-v2"
)

// Side is the side of the dispute a participant stands on.
type Side string

// The two sides.
const (
	SideClaimant   Side = "claimant"
	SideRespondent Side = "respondent"
)

// PrincipalKind is what kind of principal a participant is, in the public
// (canonical) vocabulary.
type PrincipalKind string

// The public principal kinds.
const (
	PrincipalIndividual      PrincipalKind = "individual"
	PrincipalOrganization    PrincipalKind = "organization"
	PrincipalAutonomousAgent PrincipalKind = "autonomous_agent"
)

// ParsePrincipalKind reads a principal kind in the public vocabulary or in
// the earlier one the readiness API still uses (human for individual,
// ai_agent for autonomous_agent), so the v2 routes can accept both.
func ParsePrincipalKind(s string) (PrincipalKind, bool) {
	switch s {
	case "human":
		return PrincipalIndividual, true
	case "ai_agent":
		return PrincipalAutonomousAgent, true
	}
	k := PrincipalKind(s)
	return k, k.Valid()
}

// AuthorizationMode is how a participant's confirmation is authorized.
type AuthorizationMode string

// The authorization modes.
const (
	// AuthPartnerCredential: the participant acts through its partner's
	// credentials, an orchestrator of the partner or an agent credential
	// of the participant's side.
	AuthPartnerCredential AuthorizationMode = "partner_credential"
	// AuthAgentCredential: the participant has an immutable agent id and
	// only a credential bound to that agent id may confirm for it.
	AuthAgentCredential AuthorizationMode = "agent_credential"
	// AuthBundledAuthorization: a consent recorded in advance through the
	// authorizations API counts as the participant's confirmation; the
	// participant may still confirm itself like partner_credential.
	AuthBundledAuthorization AuthorizationMode = "bundled_authorization"
)

// CaseMode says whether the draft opens a proceeding or a narrow evaluation.
type CaseMode string

// The case modes.
const (
	CaseModeProceeding CaseMode = "proceeding"
	CaseModeEvaluation CaseMode = "evaluation"
)

// IntakeMode is how the draft came to be.
type IntakeMode string

// The intake modes.
const (
	// IntakeClaimantInitiated: the claimant files alone; respondents are
	// invited, through the API or the hosted respond page.
	IntakeClaimantInitiated IntakeMode = "claimant_initiated"
	// IntakeClaimantProposed: the claimant proposes terms that each
	// participant accepts before the case opens.
	IntakeClaimantProposed IntakeMode = "claimant_proposed"
	// IntakeBilateralAPI: both sides take part through the API.
	IntakeBilateralAPI IntakeMode = "bilateral_api"
	// IntakeBundledBilateral: both sides come bundled through partners that
	// recorded their authorizations in advance.
	IntakeBundledBilateral IntakeMode = "bundled_bilateral"
)

// ConfirmationMode is the confirmation policy: which participants must
// confirm before the case opens.
type ConfirmationMode string

// The confirmation policy modes.
const (
	ConfirmInitiatorOnly         ConfirmationMode = "initiator_only"
	ConfirmAllParticipants       ConfirmationMode = "all_participants"
	ConfirmBundledAuthorizations ConfirmationMode = "bundled_authorizations"
)

// Status is a draft's status.
type Status string

// The draft statuses.
const (
	StatusAwaitingConfirmations Status = "awaiting_confirmations"
	StatusReadyToOpen           Status = "ready_to_open"
	StatusOpened                Status = "opened"
)

// ConfirmationStatus is the status of one participant's confirmation.
type ConfirmationStatus string

// The confirmation statuses.
const (
	ConfirmationPending     ConfirmationStatus = "pending"
	ConfirmationConfirmed   ConfirmationStatus = "confirmed"
	ConfirmationNotRequired ConfirmationStatus = "not_required"
)

// ConfirmationMethod is how a confirmation was given.
type ConfirmationMethod string

// The confirmation methods.
const (
	// MethodProtocolAct is a confirmation POST: the participant copied the
	// statement and the digest.
	MethodProtocolAct ConfirmationMethod = "protocol_act"
	// MethodRecordedConsent is a bundled authorization recorded through
	// the authorizations API and applied with [Draft.WithConsent].
	MethodRecordedConsent ConfirmationMethod = "recorded_consent"
)

// Profile names a procedure plan.
type Profile string

// The procedure profiles.
const (
	ProfileStandard      Profile = "standard"
	ProfileFast          Profile = "fast"
	ProfileSingleRound   Profile = "single_round"
	ProfileJointRecord   Profile = "joint_record"
	ProfileEvaluation    Profile = "evaluation"
	ProfileCustomBounded Profile = "custom_bounded"
)

// ProcedureName is the procedure as the canonical view names it.
type ProcedureName string

// The canonical procedure names.
const (
	// ProcedureStandard is every draft with a human or organization
	// principal.
	ProcedureStandard ProcedureName = "standard"
	// ProcedureAgentOnly is a draft whose every participant is an
	// autonomous_agent principal.
	ProcedureAgentOnly ProcedureName = "agent_only"
)

// Remedy is the relief the claimant seeks.
type Remedy string

// The remedies.
const (
	RemedyCorpusAllocation Remedy = "corpus_allocation"
	RemedyMoneyObligation  Remedy = "money_obligation"
	RemedyDeclaratory      Remedy = "declaratory"
)

// monetary reports whether the remedy allocates or orders money, and so
// needs an amount in dispute.
func (r Remedy) monetary() bool { return r == RemedyCorpusAllocation || r == RemedyMoneyObligation }

// FeeTier is the fee schedule a draft's fee is computed from.
type FeeTier string

// The fee tiers.
const (
	TierMicro         FeeTier = "micro"
	TierSingleArbiter FeeTier = "single_arbiter"
	TierPanel         FeeTier = "panel"
	TierDeclaratory   FeeTier = "declaratory"
)

// FeeCollection is when the filing fee is collected.
type FeeCollection string

// The collection dispositions.
const (
	// CollectBeforeOpening: the fee must be paid before the case opens; a
	// fully confirmed draft waits in ready_to_open until it is.
	CollectBeforeOpening FeeCollection = "collect_before_opening"
	// InvoiceAfterOpening: the case opens on the last confirmation and the
	// fee is invoiced to the filing partner.
	InvoiceAfterOpening FeeCollection = "invoice_after_opening"
)

// FeeStatus is the state of a draft's fee.
type FeeStatus string

// The fee statuses.
const (
	FeeQuoted FeeStatus = "quoted"
	FeePaid   FeeStatus = "paid"
)

// EvidencePolicy says what an evaluation is decided on.
type EvidencePolicy string

// The evidence policies.
const (
	// EvidencePartySubmissions: each side files its own exhibits within
	// the procedure's rounds.
	EvidencePartySubmissions EvidencePolicy = "party_submissions"
	// EvidenceJointRecordOnly: only a record both sides confirmed.
	EvidenceJointRecordOnly EvidencePolicy = "joint_record_only"
)

// ReviewPolicy says whether a human reviews an evaluation's outcome.
type ReviewPolicy string

// The review policies.
const (
	// ReviewNone: the outcome is served as determined.
	ReviewNone ReviewPolicy = "no_review"
	// ReviewOnRequest: either side may ask for one human review.
	ReviewOnRequest ReviewPolicy = "human_review_on_request"
	// ReviewAlways: a human arbiter reviews every outcome before it is served.
	ReviewAlways ReviewPolicy = "human_review_always"
)

// Route is the route family member a draft was prepared on or an act
// arrives through.
type Route string

// The routes. RouteV2 and RouteCanonical are one family; RouteLegacy (the
// POST /api/v2/filings/prepare and /{draftId}/confirm pair) is another.
const (
	RouteLegacy    Route = "legacy"
	RouteV2        Route = "v2"
	RouteCanonical Route = "canonical"
)

// Legacy reports whether r belongs to the legacy prepare/confirm family.
func (r Route) Legacy() bool { return r == RouteLegacy }

// Role is the role of the credential an act comes with.
type Role string

// The credential roles.
const (
	RolePlatformOrchestrator Role = "platform_orchestrator"
	RoleClaimantAgent        Role = "claimant_agent"
	RoleRespondentAgent      Role = "respondent_agent"
)

// CaseStatus is the status of an opened case. Only the first is decided
// here; the cases service owns the moves after it.
type CaseStatus string

// CaseStatusOpen is the status a case has when its draft opens it.
const CaseStatusOpen CaseStatus = "open"

// The closed value sets in the order messages list them.
var (
	sides              = []Side{SideClaimant, SideRespondent}
	principalKinds     = []PrincipalKind{PrincipalIndividual, PrincipalOrganization, PrincipalAutonomousAgent}
	authorizationModes = []AuthorizationMode{AuthPartnerCredential, AuthAgentCredential, AuthBundledAuthorization}
	caseModes          = []CaseMode{CaseModeProceeding, CaseModeEvaluation}
	intakeModes        = []IntakeMode{IntakeClaimantInitiated, IntakeClaimantProposed, IntakeBilateralAPI, IntakeBundledBilateral}
	confirmationModes  = []ConfirmationMode{ConfirmInitiatorOnly, ConfirmAllParticipants, ConfirmBundledAuthorizations}
	statuses           = []Status{StatusAwaitingConfirmations, StatusReadyToOpen, StatusOpened}
	confirmStatuses    = []ConfirmationStatus{ConfirmationPending, ConfirmationConfirmed, ConfirmationNotRequired}
	confirmMethods     = []ConfirmationMethod{MethodProtocolAct, MethodRecordedConsent}
	profiles           = []Profile{ProfileStandard, ProfileFast, ProfileSingleRound, ProfileJointRecord, ProfileEvaluation, ProfileCustomBounded}
	remedies           = []Remedy{RemedyCorpusAllocation, RemedyMoneyObligation, RemedyDeclaratory}
	feeTiers           = []FeeTier{TierMicro, TierSingleArbiter, TierPanel, TierDeclaratory}
	feeCollections     = []FeeCollection{CollectBeforeOpening, InvoiceAfterOpening}
	feeStatuses        = []FeeStatus{FeeQuoted, FeePaid}
	evidencePolicies   = []EvidencePolicy{EvidencePartySubmissions, EvidenceJointRecordOnly}
	reviewPolicies     = []ReviewPolicy{ReviewNone, ReviewOnRequest, ReviewAlways}
	routes             = []Route{RouteLegacy, RouteV2, RouteCanonical}
	roles              = []Role{RolePlatformOrchestrator, RoleClaimantAgent, RoleRespondentAgent}
	environments       = []string{"sandbox", "live"}
)

// Valid reports whether s is a known side.
func (s Side) Valid() bool { return contains(s, sides) }

// Valid reports whether k is a public principal kind.
func (k PrincipalKind) Valid() bool { return contains(k, principalKinds) }

// Valid reports whether m is a known authorization mode.
func (m AuthorizationMode) Valid() bool { return contains(m, authorizationModes) }

// Valid reports whether m is a known case mode.
func (m CaseMode) Valid() bool { return contains(m, caseModes) }

// Valid reports whether m is a known intake mode.
func (m IntakeMode) Valid() bool { return contains(m, intakeModes) }

// Valid reports whether m is a known confirmation policy mode.
func (m ConfirmationMode) Valid() bool { return contains(m, confirmationModes) }

// Valid reports whether s is a known draft status.
func (s Status) Valid() bool { return contains(s, statuses) }

// Valid reports whether s is a known confirmation status.
func (s ConfirmationStatus) Valid() bool { return contains(s, confirmStatuses) }

// Valid reports whether m is a known confirmation method.
func (m ConfirmationMethod) Valid() bool { return contains(m, confirmMethods) }

// Valid reports whether p is a known procedure profile.
func (p Profile) Valid() bool { return contains(p, profiles) }

// Valid reports whether n is a canonical procedure name.
func (n ProcedureName) Valid() bool { return n == ProcedureStandard || n == ProcedureAgentOnly }

// Valid reports whether r is a known remedy.
func (r Remedy) Valid() bool { return contains(r, remedies) }

// Valid reports whether t is a known fee tier.
func (t FeeTier) Valid() bool { return contains(t, feeTiers) }

// Valid reports whether c is a known collection disposition.
func (c FeeCollection) Valid() bool { return contains(c, feeCollections) }

// Valid reports whether s is a known fee status.
func (s FeeStatus) Valid() bool { return contains(s, feeStatuses) }

// Valid reports whether p is a known evidence policy.
func (p EvidencePolicy) Valid() bool { return contains(p, evidencePolicies) }

// Valid reports whether p is a known review policy.
func (p ReviewPolicy) Valid() bool { return contains(p, reviewPolicies) }

// Valid reports whether r is a known route.
func (r Route) Valid() bool { return contains(r, routes) }

// Valid reports whether r is a known credential role.
func (r Role) Valid() bool { return contains(r, roles) }

// Valid reports whether s is a known case status.
func (s CaseStatus) Valid() bool { return s == CaseStatusOpen }

func contains[E comparable](v E, set []E) bool {
	for _, s := range set {
		if s == v {
			return true
		}
	}
	return false
}

func joinList[E ~string](values []E) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = string(v)
	}
	return strings.Join(parts, ", ")
}
