package draft_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

// fixedNow is the instant every test prepares at; its microseconds show that
// drafts keep milliseconds.
var fixedNow = time.Date(2026, 11, 2, 9, 30, 0, 123_456_000, time.UTC)

var testRules = draft.Rules{Version: "pcourt-rules-2026-10", Hash: sha256Text("pcourt arbitration rules 2026-10")}

func sha256Text(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// fixedIDs hands out the same ids every time, as the tests need.
type fixedIDs struct{ draftID, caseID, feeID string }

func (f fixedIDs) DraftID() string { return f.draftID }
func (f fixedIDs) CaseID() string  { return f.caseID }
func (f fixedIDs) FeeID() string   { return f.feeID }

var testIDs = fixedIDs{draftID: "dr_01JC4W8X2ZQ7", caseID: "cs_01JC4W8X30A1", feeID: "fee_01JC4W8X31B2"}

const (
	tenant       = "tn_acme"
	environment  = "sandbox"
	partner      = "pt_marketplace"
	otherPartner = "pt_seller_hub"
	orchestrator = "cred_orch_01"
)

// twoParty is the plainest valid draft request: one claimant (the
// initiator) and one respondent, both confirming, through the preparing
// partner's credentials.
func twoParty() draft.PrepareInput {
	return draft.PrepareInput{
		ExternalCaseID:   "ord-2026-000417",
		CaseMode:         draft.CaseModeProceeding,
		IntakeMode:       draft.IntakeClaimantInitiated,
		ConfirmationMode: draft.ConfirmAllParticipants,
		Procedure:        draft.Procedure{Profile: draft.ProfileStandard},
		Participants: []draft.Participant{
			{ID: "p-claimant", Side: draft.SideClaimant, PrincipalID: "acct:maria.lopez", PrincipalKind: draft.PrincipalIndividual, AuthorizationMode: draft.AuthPartnerCredential, Initiator: true},
			{ID: "p-respondent", Side: draft.SideRespondent, PrincipalID: "org:northwind-supplies", PrincipalKind: draft.PrincipalOrganization, AuthorizationMode: draft.AuthPartnerCredential},
		},
		Claim:       draft.Claim{AmountInDisputeMinor: 120_000, Remedy: draft.RemedyMoneyObligation, Summary: "Paid order 417 was never delivered."},
		TenantID:    tenant,
		Environment: environment,
		PartnerID:   partner,
		CreatedBy:   orchestrator,
	}
}

// threeParty adds a second respondent who acts through another partner, and
// makes the first respondent a registered agent.
func threeParty() draft.PrepareInput {
	in := twoParty()
	in.IntakeMode = draft.IntakeBilateralAPI
	in.Participants = []draft.Participant{
		in.Participants[0],
		{ID: "p-respondent", Side: draft.SideRespondent, PrincipalID: "org:northwind-supplies", PrincipalKind: draft.PrincipalOrganization, AgentID: "agt_northwind_7", AuthorizationMode: draft.AuthAgentCredential},
		{ID: "p-carrier", Side: draft.SideRespondent, PartnerID: otherPartner, PrincipalID: "org:fastship", PrincipalKind: draft.PrincipalOrganization, AuthorizationMode: draft.AuthPartnerCredential},
	}
	return in
}

// bundled is a bundled bilateral draft: the respondent's consent was
// recorded in advance.
func bundled() draft.PrepareInput {
	in := twoParty()
	in.IntakeMode = draft.IntakeBundledBilateral
	in.ConfirmationMode = draft.ConfirmBundledAuthorizations
	in.Participants[1].AuthorizationMode = draft.AuthBundledAuthorization
	in.Participants[1].PartnerID = otherPartner
	return in
}

func mustPrepare(t testing.TB, in draft.PrepareInput) draft.Draft {
	t.Helper()
	d, err := draft.Prepare(in, testRules, fixedNow, testIDs)
	require.NoError(t, err)
	return d
}

// orchestratorOf is a platform orchestrator credential of the partner on the v2 routes.
func orchestratorOf(partnerID string) draft.Actor {
	return draft.Actor{CredentialID: "cred_orch_" + partnerID, Role: draft.RolePlatformOrchestrator, TenantID: tenant, Environment: environment, PartnerID: partnerID, Route: draft.RouteV2}
}

// agentOf is an agent credential for a side, bound to agentID when not empty.
func agentOf(partnerID string, side draft.Side, agentID string) draft.Actor {
	role := draft.RoleClaimantAgent
	if side == draft.SideRespondent {
		role = draft.RoleRespondentAgent
	}
	return draft.Actor{CredentialID: "cred_agent_" + agentID + "_" + string(side), Role: role, TenantID: tenant, Environment: environment, PartnerID: partnerID, AgentID: agentID, Route: draft.RouteV2}
}

// actorFor is a credential that may confirm for the participant.
func actorFor(t testing.TB, d draft.Draft, participantID string) draft.Actor {
	t.Helper()
	p, ok := d.Participant(participantID)
	require.True(t, ok, participantID)
	partnerID := p.PartnerID
	if partnerID == "" {
		partnerID = d.PartnerID()
	}
	route := draft.RouteV2
	if d.Legacy() {
		route = draft.RouteLegacy
	}
	a := orchestratorOf(partnerID)
	if p.AgentID != "" {
		a = agentOf(partnerID, p.Side, p.AgentID)
	}
	a.Route = route
	a.TenantID, a.Environment = d.TenantID(), d.Environment()
	return a
}

// consenterFor is the orchestrator of the participant's partner, the
// credential that may record its consent (the preparing partner's for an
// unknown participant).
func consenterFor(t testing.TB, d draft.Draft, participantID string) draft.Actor {
	t.Helper()
	partnerID := d.PartnerID()
	if p, ok := d.Participant(participantID); ok {
		partnerID = d.EffectivePartner(p)
	}
	a := orchestratorOf(partnerID)
	a.TenantID, a.Environment = d.TenantID(), d.Environment()
	return a
}

// requestFor is the confirmation body a correct client sends for the
// participant as actor: the statement and digest copied from the draft.
func requestFor(t testing.TB, d draft.Draft, participantID string, actor draft.Actor) draft.ConfirmRequest {
	t.Helper()
	p, ok := d.Participant(participantID)
	require.True(t, ok, participantID)
	actorID := actor.CredentialID
	if p.AgentID != "" {
		actorID = p.AgentID
	}
	return draft.ConfirmRequest{
		ParticipantID:         participantID,
		DraftDigest:           d.Digest(),
		ConfirmationStatement: statementOf(t, d, participantID),
		ActorID:               actorID,
		PrincipalID:           p.PrincipalID,
		ConfirmationMethod:    "protocol_act",
		ConfirmationReference: "conf-ref-" + participantID,
	}
}

func statementOf(t testing.TB, d draft.Draft, participantID string) string {
	t.Helper()
	for _, c := range d.Confirmations() {
		if c.ParticipantID == participantID {
			return c.Statement
		}
	}
	t.Fatalf("no confirmation for %s", participantID)
	return ""
}

// confirm has participantID confirm d correctly at now and requires success.
func confirm(t testing.TB, d draft.Draft, participantID string, now time.Time) draft.Outcome {
	t.Helper()
	actor := actorFor(t, d, participantID)
	out, err := draft.Confirm(d, requestFor(t, d, participantID, actor), actor, now)
	require.NoError(t, err)
	return out
}

// requireUnchanged asserts that a refused act handed back its input.
func requireUnchanged(t testing.TB, want, got draft.Draft) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("a refused act changed the draft (-want +got):\n%s", diff)
	}
	a, err := want.MarshalJSON()
	require.NoError(t, err)
	b, err := got.MarshalJSON()
	require.NoError(t, err)
	require.JSONEq(t, string(a), string(b))
}

func confirmationOf(t testing.TB, d draft.Draft, participantID string) draft.Confirmation {
	t.Helper()
	for _, c := range d.Confirmations() {
		if c.ParticipantID == participantID {
			return c
		}
	}
	t.Fatalf("no confirmation for %s", participantID)
	return draft.Confirmation{}
}

// roundTrip stores and loads d as the store does.
func roundTrip(d draft.Draft) (draft.Draft, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return draft.Draft{}, err
	}
	var out draft.Draft
	err = json.Unmarshal(b, &out)
	return out, err
}
