package draft

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Participant is one party to a draft.
type Participant struct {
	// ID is the participant id, 1 to 64 characters of A-Z a-z 0-9 . _ : -,
	// unique in the draft.
	ID   string
	Side Side
	// PartnerID is the partner the participant acts through; empty means
	// the preparing partner.
	PartnerID     string
	PrincipalID   string
	PrincipalKind PrincipalKind
	// AgentID is the participant's immutable agent id, if it acts as one
	// registered agent.
	AgentID string
	// AccountID is the platform account (acct_…) that takes part as this
	// participant, if one does: a verified autonomous-agent account,
	// acting with its own OAuth tokens and through no partner. Only that
	// account's tokens confirm for it; no partner credential does.
	AccountID         string
	AuthorizationMode AuthorizationMode
	// Initiator marks the claimant who filed the draft; exactly one.
	Initiator bool
}

// Claim is what the claimant asks for.
type Claim struct {
	AmountInDisputeMinor int64 // USD cents, 0 to MaxAmountMinor
	Remedy               Remedy
	Summary              string
	// MicroTierConsent reports that the parties consent to the micro-claims
	// tier; it selects the micro fee for a monetary claim of at most
	// MicroCeilingMinor.
	MicroTierConsent bool
}

// Rules are the rules a draft is pinned to.
type Rules struct {
	Version string
	Hash    string // 64 lowercase hex characters
}

// IDs generates the random identifiers of a new draft: dr_…, cs_… and
// fee_…. Each must be 1 to 64 characters of A-Z a-z 0-9 . _ : -.
type IDs interface {
	DraftID() string
	CaseID() string
	FeeID() string
}

// PrepareInput is a preparation request after strict JSON decoding, with the
// authenticated credential's context. Both preparation families use it.
type PrepareInput struct {
	// Canonical is true for POST /api/filings and false for POST
	// /api/v2/case-drafts. It makes ClaimantAcceptanceIdentity required and
	// names the procedure plan "schedule" in field paths.
	Canonical bool
	// Legacy is true for POST /api/v2/filings/prepare; such a draft is
	// confirmed only on POST /api/v2/filings/{draftId}/confirm.
	Legacy bool

	ExternalCaseID   string
	CaseMode         CaseMode
	IntakeMode       IntakeMode
	ConfirmationMode ConfirmationMode
	// Procedure is the v2 "procedure" object or the canonical "schedule".
	Procedure Procedure
	// PlanSchemaVersion and PlanRecordConfirmationRequired are the plan's
	// constants as the caller sent them, nil when not sent. A plan copied
	// from a draft read carries both; they must state the constants.
	PlanSchemaVersion              *string
	PlanRecordConfirmationRequired *bool
	Participants                   []Participant
	Claim                          Claim
	// Evaluation is required when CaseMode is evaluation and forbidden
	// otherwise.
	Evaluation *Evaluation
	// ClaimantAcceptanceIdentity is the identity that accepts the claimant
	// packet. Optional on the v2 and legacy routes (omitted: partner consent
	// and hosted respondent acceptance, no claimant packet or link);
	// required on the canonical route.
	ClaimantAcceptanceIdentity string
	// ExpiresIn is how long the draft may collect confirmations; zero means
	// DefaultExpiresIn.
	ExpiresIn time.Duration
	// Origin is set when the draft comes from AP2 or UCP objects (a
	// resolution request); nil on the filing routes.
	Origin *Origin

	// From the credential: a partner credential gives PartnerID, an
	// account token AccountID (the preparing account); exactly one is set.
	TenantID, Environment, PartnerID, AccountID, CreatedBy string
}

// The limits of a preparation request.
const (
	DefaultExpiresIn  = 72 * time.Hour
	MinExpiresIn      = time.Hour
	MaxExpiresIn      = 30 * 24 * time.Hour
	MinParticipants   = 2
	MaxParticipants   = 16
	maxSummaryRunes   = 2000
	maxPrincipalRunes = 200
	maxIdentityRunes  = 320
)

// ErrInvalidContext means Prepare was called with a context the caller, not
// the requester, got wrong: unknown rules, a missing credential field, bad
// generated ids, or both Canonical and Legacy. The HTTP layer answers it
// with a 500.
var ErrInvalidContext = errors.New("invalid preparation context")

// confirmationModesByIntake is which confirmation policies each intake
// allows.
var confirmationModesByIntake = map[IntakeMode][]ConfirmationMode{
	IntakeClaimantInitiated: {ConfirmInitiatorOnly, ConfirmAllParticipants},
	IntakeClaimantProposed:  {ConfirmAllParticipants},
	IntakeBilateralAPI:      {ConfirmAllParticipants, ConfirmBundledAuthorizations},
	IntakeBundledBilateral:  {ConfirmBundledAuthorizations},
}

// Prepare validates in and returns the new draft, awaiting confirmations,
// with its fee quoted, its digest computed and one confirmation statement
// per participant. now is truncated to the millisecond and kept in UTC.
//
// A request that breaks a rule gets a *ValidationError naming the first
// offending field (rules and order in docs/filings-drafts.md); a bad context
// gets an error wrapping ErrInvalidContext.
func Prepare(in PrepareInput, rules Rules, now time.Time, ids IDs) (Draft, error) {
	route, err := checkContext(in, rules, ids)
	if err != nil {
		return Draft{}, err
	}
	plan, err := validateInput(in)
	if err != nil {
		return Draft{}, err
	}
	draftID, caseID, feeID := ids.DraftID(), ids.CaseID(), ids.FeeID()
	for _, id := range []string{draftID, caseID, feeID} {
		if token("id", id, 64) != nil {
			return Draft{}, fmt.Errorf("%w: generated id %q", ErrInvalidContext, id)
		}
	}
	expiresIn := in.ExpiresIn
	if expiresIn == 0 {
		expiresIn = DefaultExpiresIn
	}
	created := instant(now)
	d := Draft{
		id:                         draftID,
		reservedCaseID:             caseID,
		externalCaseID:             in.ExternalCaseID,
		route:                      route,
		status:                     StatusAwaitingConfirmations,
		createdAt:                  created,
		createdBy:                  in.CreatedBy,
		expiresAt:                  created.Add(expiresIn),
		rules:                      rules,
		fee:                        QuoteFee(feeID, in.Claim, in.IntakeMode),
		caseMode:                   in.CaseMode,
		intakeMode:                 in.IntakeMode,
		confirmationMode:           in.ConfirmationMode,
		procedure:                  plan,
		participants:               clone(in.Participants),
		claim:                      in.Claim,
		claimantAcceptanceIdentity: in.ClaimantAcceptanceIdentity,
		tenantID:                   in.TenantID,
		environment:                in.Environment,
		partnerID:                  in.PartnerID,
		origin:                     in.Origin.clone(),
	}
	if in.Evaluation != nil {
		e := in.Evaluation.clone()
		d.evaluation = &e
		d.evaluationDigest = e.Digest()
	}
	d.confirmations = make([]Confirmation, len(d.participants))
	for i, p := range d.participants {
		required := requiredFor(d.confirmationMode, p)
		status := ConfirmationPending
		if !required {
			status = ConfirmationNotRequired
		}
		d.confirmations[i] = Confirmation{
			ParticipantID:     p.ID,
			Side:              p.Side,
			PartnerID:         p.PartnerID,
			AuthorizationMode: p.AuthorizationMode,
			Required:          required,
			Status:            status,
		}
	}
	d.seal()
	return d, nil
}

// requiredFor says whether the policy requires p's confirmation:
// initiator_only requires the initiator alone; all_participants and
// bundled_authorizations require everyone (under bundled_authorizations a
// recorded consent can stand in for a bundled_authorization participant's
// confirmation, see Draft.WithConsent).
func requiredFor(mode ConfirmationMode, p Participant) bool {
	if mode == ConfirmInitiatorOnly {
		return p.Initiator
	}
	return true
}

// instant normalizes a time to what a draft stores: UTC, millisecond precision.
func instant(t time.Time) time.Time {
	return t.UTC().Truncate(time.Millisecond)
}

func checkContext(in PrepareInput, rules Rules, ids IDs) (Route, error) {
	bad := func(what string) (Route, error) { return "", fmt.Errorf("%w: %s", ErrInvalidContext, what) }
	switch {
	case in.Canonical && in.Legacy:
		return bad("a draft is prepared on the canonical route or the legacy pair, not both")
	case visible("rules.version", rules.Version, 64) != nil:
		return bad("rules version must be 1 to 64 visible ASCII characters")
	case !hex64Pattern.MatchString(rules.Hash):
		return bad("rules hash must be 64 lowercase hex characters")
	case visible("tenantId", in.TenantID, 200) != nil:
		return bad("tenant id missing or malformed")
	case !contains(in.Environment, environments):
		return bad("environment must be sandbox or live")
	case (in.PartnerID == "") == (in.AccountID == ""):
		return bad("exactly one of partner id and account id is the preparer")
	case in.PartnerID != "" && visible("partnerId", in.PartnerID, 200) != nil:
		return bad("partner id malformed")
	case in.AccountID != "" && token("accountId", in.AccountID, 160) != nil:
		return bad("account id malformed")
	case visible("createdBy", in.CreatedBy, 200) != nil:
		return bad("createdBy missing or malformed")
	case ids == nil:
		return bad("no id generator")
	case in.Legacy:
		return RouteLegacy, nil
	case in.Canonical:
		return RouteCanonical, nil
	default:
		return RouteV2, nil
	}
}

// validateInput applies the preparation rules in document order and returns
// the procedure plan the draft takes.
func validateInput(in PrepareInput) (Procedure, error) {
	if err := visible("externalCaseId", in.ExternalCaseID, 160); err != nil {
		return Procedure{}, err
	}
	if err := enum("caseMode", in.CaseMode, caseModes); err != nil {
		return Procedure{}, err
	}
	if err := enum("intakeMode", in.IntakeMode, intakeModes); err != nil {
		return Procedure{}, err
	}
	if err := enum("confirmationPolicy.mode", in.ConfirmationMode, confirmationModes); err != nil {
		return Procedure{}, err
	}
	if allowed := confirmationModesByIntake[in.IntakeMode]; !contains(in.ConfirmationMode, allowed) {
		return Procedure{}, invalid("confirmationPolicy.mode", "must be "+orList(allowed)+" when intakeMode is "+string(in.IntakeMode))
	}

	planField := "procedure"
	if in.Canonical {
		planField = "schedule"
	}
	// A plan echoed as a draft read returns it is welcome; only a
	// contradiction of its constants is refused, each with its own code.
	if v := in.PlanSchemaVersion; v != nil && *v != SchemaProcedurePlan {
		return Procedure{}, &ValidationError{Field: planField + ".schemaVersion", Code: CodeUnsupportedSchemaVersion,
			Reason: "must be " + SchemaProcedurePlan + ", the only plan version, or be omitted"}
	}
	if v := in.PlanRecordConfirmationRequired; v != nil && !*v {
		return Procedure{}, &ValidationError{Field: planField + ".recordConfirmationRequired", Code: CodeRecordConfirmationRequired,
			Reason: "must be true, or be omitted: every case's record is confirmed"}
	}
	plan, err := resolveProcedure(planField, in.Procedure)
	if err != nil {
		return Procedure{}, err
	}
	switch {
	case in.CaseMode == CaseModeEvaluation && plan.Profile != ProfileEvaluation:
		return Procedure{}, invalid(planField+".profile", "must be evaluation when caseMode is evaluation")
	case in.CaseMode == CaseModeProceeding && plan.Profile == ProfileEvaluation:
		return Procedure{}, invalid(planField+".profile", "may be evaluation only when caseMode is evaluation")
	}

	if err := validateParticipants(in); err != nil {
		return Procedure{}, err
	}
	if err := validateClaim(in); err != nil {
		return Procedure{}, err
	}

	switch {
	case in.CaseMode == CaseModeEvaluation && in.Evaluation == nil:
		return Procedure{}, invalid("evaluation", "is required when caseMode is evaluation")
	case in.CaseMode == CaseModeProceeding && in.Evaluation != nil:
		return Procedure{}, invalid("evaluation", "must be omitted when caseMode is proceeding")
	case in.Evaluation != nil:
		if err := in.Evaluation.validate(); err != nil {
			return Procedure{}, err
		}
	}

	switch {
	case in.ClaimantAcceptanceIdentity != "":
		if err := name("claimantAcceptanceIdentity", in.ClaimantAcceptanceIdentity, maxIdentityRunes); err != nil {
			return Procedure{}, err
		}
	case in.Canonical:
		return Procedure{}, invalid("claimantAcceptanceIdentity", "is required on POST /api/filings")
	}

	if in.ExpiresIn != 0 && (in.ExpiresIn < MinExpiresIn || in.ExpiresIn > MaxExpiresIn) {
		return Procedure{}, invalid("expiresIn", "must be 1 hour to 30 days")
	}
	if in.Origin != nil {
		if err := in.Origin.validate(); err != nil {
			return Procedure{}, err
		}
	}
	return plan, nil
}

func validateParticipants(in PrepareInput) error {
	ps := in.Participants
	if len(ps) < MinParticipants || len(ps) > MaxParticipants {
		return invalid("participants", "must have "+strconv.Itoa(MinParticipants)+" to "+strconv.Itoa(MaxParticipants)+" items")
	}
	ids, principals, agents, accounts := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	initiator := -1
	var claimants, respondents, bundled, agentPrincipals int
	for i, p := range ps {
		at := func(member string) string { return fmt.Sprintf("participants[%d].%s", i, member) }
		if err := token(at("participantId"), p.ID, 64); err != nil {
			return err
		}
		if j, dup := ids[p.ID]; dup {
			return invalid(at("participantId"), fmt.Sprintf("repeats participants[%d].participantId", j))
		}
		ids[p.ID] = i
		if err := enum(at("side"), p.Side, sides); err != nil {
			return err
		}
		if p.PartnerID != "" {
			if err := token(at("partnerId"), p.PartnerID, 160); err != nil {
				return err
			}
		}
		if err := name(at("principalId"), p.PrincipalID, maxPrincipalRunes); err != nil {
			return err
		}
		if j, dup := principals[p.PrincipalID]; dup {
			return invalid(at("principalId"), fmt.Sprintf("repeats participants[%d].principalId; a principal takes part once", j))
		}
		principals[p.PrincipalID] = i
		if err := enum(at("principalKind"), p.PrincipalKind, principalKinds); err != nil {
			return err
		}
		if p.AgentID != "" {
			if err := token(at("agentId"), p.AgentID, 160); err != nil {
				return err
			}
			if j, dup := agents[p.AgentID]; dup {
				return invalid(at("agentId"), fmt.Sprintf("repeats participants[%d].agentId; an agent acts for one participant", j))
			}
			agents[p.AgentID] = i
		}
		if err := enum(at("authorizationMode"), p.AuthorizationMode, authorizationModes); err != nil {
			return err
		}
		if err := validateAccountParticipant(in, p, at, accounts, i); err != nil {
			return err
		}
		switch {
		case p.AuthorizationMode == AuthAgentCredential && p.AgentID == "" && p.AccountID == "":
			return invalid(at("agentId"), "is required when authorizationMode is agent_credential")
		case p.PrincipalKind == PrincipalAutonomousAgent && p.AgentID == "" && p.AccountID == "":
			return invalid(at("agentId"), "is required when principalKind is autonomous_agent")
		case p.AuthorizationMode == AuthBundledAuthorization && in.ConfirmationMode != ConfirmBundledAuthorizations:
			return invalid(at("authorizationMode"), "may be bundled_authorization only when confirmationPolicy.mode is bundled_authorizations")
		}
		if p.Initiator {
			switch {
			case initiator >= 0:
				return invalid(at("initiator"), fmt.Sprintf("must be false: participants[%d] is the initiator", initiator))
			case p.Side != SideClaimant:
				return invalid(at("initiator"), "must be false for a respondent: the initiator is a claimant")
			case p.AccountID != in.AccountID && in.AccountID != "":
				return invalid(at("accountId"), "must be the preparing account for the initiator: an account files for itself")
			case p.AccountID != in.AccountID:
				return invalid(at("accountId"), "must be omitted for the initiator of a draft a partner prepares: the initiator is the preparing partner's participant")
			case p.PartnerID != "" && p.PartnerID != in.PartnerID:
				return invalid(at("partnerId"), "must be the preparing partner for the initiator")
			}
			initiator = i
		}
		if p.Side == SideClaimant {
			claimants++
		} else {
			respondents++
		}
		if p.AuthorizationMode == AuthBundledAuthorization {
			bundled++
		}
		if p.PrincipalKind == PrincipalAutonomousAgent {
			agentPrincipals++
		}
	}
	switch {
	case claimants == 0:
		return invalid("participants", "must include at least one claimant")
	case respondents == 0:
		return invalid("participants", "must include at least one respondent")
	case initiator < 0:
		return invalid("participants", "must mark exactly one claimant as the initiator")
	case in.ConfirmationMode == ConfirmBundledAuthorizations && bundled == 0:
		return invalid("participants", "must include a bundled_authorization participant when confirmationPolicy.mode is bundled_authorizations")
	}
	if agentPrincipals == len(ps) { // the agent_only procedure
		for i, p := range ps {
			if p.AuthorizationMode != AuthAgentCredential {
				return invalid(fmt.Sprintf("participants[%d].authorizationMode", i),
					"must be agent_credential: every participant is an autonomous_agent, and the agent_only procedure needs registered agent identities")
			}
		}
		if in.ConfirmationMode != ConfirmAllParticipants {
			return invalid("confirmationPolicy.mode",
				"must be all_participants: every participant is an autonomous_agent, and the agent_only procedure needs bilateral exact acceptance")
		}
	}
	return nil
}

// validateAccountParticipant checks a participant's accountId, and that
// every participant of a draft an account prepares has someone to act
// for it. accounts maps the accounts seen so far to their index.
//
// An account participant acts with its own tokens and through no partner,
// as a registered agent identity: it is an autonomous_agent confirming by
// agent_credential, naming no agentId and no partnerId. An account
// prepares through no partner, so on its draft each other participant
// names the partner it acts through, or its own account.
func validateAccountParticipant(in PrepareInput, p Participant, at func(string) string, accounts map[string]int, i int) error {
	if p.AccountID == "" {
		if in.AccountID != "" && p.PartnerID == "" {
			return invalid(at("partnerId"), "is required on a draft an account prepares, unless accountId names the participant's account: an account acts through no partner, so no one would act for this participant")
		}
		return nil
	}
	if !accountIDPattern.MatchString(p.AccountID) {
		return invalid(at("accountId"), "must be a platform account id: acct_ and 1 to 155 characters of A-Z a-z 0-9 . _ : -")
	}
	if j, dup := accounts[p.AccountID]; dup {
		return invalid(at("accountId"), fmt.Sprintf("repeats participants[%d].accountId; an account takes part once", j))
	}
	accounts[p.AccountID] = i
	switch {
	case p.PrincipalKind != PrincipalAutonomousAgent:
		return invalid(at("principalKind"), "must be autonomous_agent when accountId is given: only autonomous-agent accounts take part through their account")
	case p.AgentID != "":
		return invalid(at("agentId"), "must be omitted when accountId is given: the account is the participant's agent identity")
	case p.PartnerID != "":
		return invalid(at("partnerId"), "must be omitted when accountId is given: an account acts through no partner")
	case p.AuthorizationMode != AuthAgentCredential:
		return invalid(at("authorizationMode"), "must be agent_credential when accountId is given: the account confirms with its own token")
	}
	return nil
}

// accountIDPattern is an account's public id (services/accounts: acct_
// and random characters), within the platform's identifier alphabet.
var accountIDPattern = regexp.MustCompile(`^acct_[A-Za-z0-9._:-]{1,155}$`)

func validateClaim(in PrepareInput) error {
	c := in.Claim
	if c.AmountInDisputeMinor < 0 || c.AmountInDisputeMinor > MaxAmountMinor {
		return invalid("claim.amountInDisputeMinor", "must be 0 to "+strconv.FormatInt(MaxAmountMinor, 10)+" (USD minor units)")
	}
	if err := enum("claim.remedy", c.Remedy, remedies); err != nil {
		return err
	}
	switch {
	case c.Remedy.monetary() && c.AmountInDisputeMinor == 0:
		return invalid("claim.amountInDisputeMinor", "must be above 0 for a "+string(c.Remedy)+" claim")
	case in.CaseMode == CaseModeEvaluation && c.Remedy != RemedyDeclaratory:
		return invalid("claim.remedy", "must be declaratory when caseMode is evaluation")
	}
	return text("claim.summary", c.Summary, maxSummaryRunes, true)
}

func enum[E ~string](field string, v E, set []E) error {
	if v == "" {
		return invalid(field, "is required")
	}
	if !contains(v, set) {
		return invalid(field, "must be one of "+joinList(set))
	}
	return nil
}

func orList[E ~string](values []E) string {
	switch len(values) {
	case 1:
		return string(values[0])
	case 2:
		return string(values[0]) + " or " + string(values[1])
	}
	return joinList(values[:len(values)-1]) + " or " + string(values[len(values)-1])
}
