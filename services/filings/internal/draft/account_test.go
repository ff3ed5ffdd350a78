package draft_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

const (
	agentAccount = "acct_CLAIMSAGENT01"
	otherAccount = "acct_OTHERAGENT02"
)

// accountOf is an account token of accountID on the v2 routes: no role,
// no partner, no agent id.
func accountOf(accountID string) draft.Actor {
	return draft.Actor{CredentialID: "oat_" + accountID, TenantID: tenant, Environment: environment, AccountID: accountID, Route: draft.RouteV2}
}

// accountAgent is a participant that an autonomous-agent account takes
// part as.
func accountAgent(id string, side draft.Side, accountID string) draft.Participant {
	return draft.Participant{ID: id, Side: side, PrincipalID: "agent:" + accountID, PrincipalKind: draft.PrincipalAutonomousAgent,
		AccountID: accountID, AuthorizationMode: draft.AuthAgentCredential}
}

// byAccount is a draft a verified agent's account prepares for itself:
// it is the initiator, and the respondent acts through a partner.
func byAccount() draft.PrepareInput {
	in := twoParty()
	in.PartnerID, in.AccountID, in.CreatedBy = "", agentAccount, "oat_token01"
	claimant := accountAgent("p-claimant", draft.SideClaimant, agentAccount)
	claimant.Initiator = true
	respondent := in.Participants[1]
	respondent.PartnerID = otherPartner
	in.Participants = []draft.Participant{claimant, respondent}
	return in
}

func accountRequest(t *testing.T, d draft.Draft, participantID, accountID string) draft.ConfirmRequest {
	t.Helper()
	req := requestFor(t, d, participantID, accountOf(accountID))
	req.ActorID = accountID
	return req
}

func TestAnAccountPreparesForItselfAndItsTokenConfirms(t *testing.T) {
	d := mustPrepare(t, byAccount())
	require.Empty(t, d.PartnerID(), "an account prepares through no partner")
	p, ok := d.AccountOf(agentAccount)
	require.True(t, ok)
	require.Equal(t, "p-claimant", p.ID)
	require.False(t, d.Involves(""), "no partner stands for the account's participant")
	require.Equal(t, []draft.Side{draft.SideRespondent}, d.SidesOf(otherPartner))

	out, err := draft.Confirm(d, accountRequest(t, d, "p-claimant", agentAccount), accountOf(agentAccount), fixedNow)
	require.NoError(t, err)
	require.Equal(t, agentAccount, confirmationOf(t, out.Draft, "p-claimant").ActorID)

	// The respondent's partner confirms for its own participant, and that
	// opens the case.
	out = confirm(t, out.Draft, "p-respondent", fixedNow)
	require.True(t, out.Last, "the last required confirmation")
}

// A participant naming an account is the account's alone: the preparing
// partner's orchestrator, an agent of its partner and another account are
// all refused, and the account itself must declare its account id.
func TestOnlyTheAccountsOwnTokenConfirmsForIt(t *testing.T) {
	in := twoParty()
	in.Participants[1] = accountAgent("p-respondent", draft.SideRespondent, agentAccount)
	d := mustPrepare(t, in)

	for name, actor := range map[string]draft.Actor{
		"the preparing partner's orchestrator": orchestratorOf(partner),
		"an agent of the preparing partner":    agentOf(partner, draft.SideRespondent, agentAccount),
		"another account":                      accountOf(otherAccount),
	} {
		req := requestFor(t, d, "p-respondent", actor)
		req.ActorID = agentAccount
		out, err := draft.Confirm(d, req, actor, fixedNow)
		require.ErrorIs(t, err, draft.ErrForbidden, name)
		requireUnchanged(t, d, out.Draft)
	}

	// An account token confirms for no participant but its own.
	out, err := draft.Confirm(d, requestFor(t, d, "p-claimant", accountOf(agentAccount)), accountOf(agentAccount), fixedNow)
	require.ErrorIs(t, err, draft.ErrForbidden)
	requireUnchanged(t, d, out.Draft)

	req := accountRequest(t, d, "p-respondent", agentAccount)
	req.ActorID = "oat_" + agentAccount
	_, err = draft.Confirm(d, req, accountOf(agentAccount), fixedNow)
	require.ErrorIs(t, err, draft.ErrActorMismatch)

	_, err = draft.Confirm(d, accountRequest(t, d, "p-respondent", agentAccount), accountOf(agentAccount), fixedNow)
	require.NoError(t, err)
	require.False(t, d.Hosted(d.Participants()[1]), "an account participant is never a hosted respondent")
}

func TestPrepareRefusesABadAccountParticipant(t *testing.T) {
	for _, tt := range []struct {
		name, field string
		change      func(*draft.PrepareInput)
	}{
		{"an account id without the acct_ prefix", "participants[1].accountId", func(in *draft.PrepareInput) {
			in.Participants[1] = accountAgent("p-respondent", draft.SideRespondent, "agent-7")
		}},
		{"an account that is not an autonomous agent", "participants[1].principalKind", func(in *draft.PrepareInput) {
			in.Participants[1] = accountAgent("p-respondent", draft.SideRespondent, agentAccount)
			in.Participants[1].PrincipalKind = draft.PrincipalIndividual
		}},
		{"an account with an agent id", "participants[1].agentId", func(in *draft.PrepareInput) {
			in.Participants[1] = accountAgent("p-respondent", draft.SideRespondent, agentAccount)
			in.Participants[1].AgentID = "agt_7"
		}},
		{"an account acting through a partner", "participants[1].partnerId", func(in *draft.PrepareInput) {
			in.Participants[1] = accountAgent("p-respondent", draft.SideRespondent, agentAccount)
			in.Participants[1].PartnerID = otherPartner
		}},
		{"an account confirming by partner credential", "participants[1].authorizationMode", func(in *draft.PrepareInput) {
			in.Participants[1] = accountAgent("p-respondent", draft.SideRespondent, agentAccount)
			in.Participants[1].AuthorizationMode = draft.AuthPartnerCredential
		}},
		{"one account twice", "participants[2].accountId", func(in *draft.PrepareInput) {
			in.Participants[1] = accountAgent("p-respondent", draft.SideRespondent, agentAccount)
			second := accountAgent("p-second", draft.SideRespondent, agentAccount)
			second.PrincipalID = "agent:second"
			in.Participants = append(in.Participants, second)
		}},
		{"an account as the initiator of a partner's draft", "participants[0].accountId", func(in *draft.PrepareInput) {
			in.Participants[0] = accountAgent("p-claimant", draft.SideClaimant, agentAccount)
			in.Participants[0].Initiator = true
		}},
		{"another account as the initiator of an account's draft", "participants[0].accountId", func(in *draft.PrepareInput) {
			*in = byAccount()
			in.Participants[0].AccountID = otherAccount
		}},
		{"a participant no one acts for on an account's draft", "participants[1].partnerId", func(in *draft.PrepareInput) {
			*in = byAccount()
			in.Participants[1].PartnerID = ""
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := twoParty()
			tt.change(&in)
			_, err := draft.Prepare(in, testRules, fixedNow, testIDs)
			var invalid *draft.ValidationError
			require.ErrorAs(t, err, &invalid)
			require.Equal(t, tt.field, invalid.Field, invalid.Reason)
		})
	}
}

// Two agents' accounts, bilateral exact acceptance: the agent_only
// procedure, each account confirming its own participant.
func TestTwoAccountsMakeAnAgentOnlyDraft(t *testing.T) {
	in := byAccount()
	in.Participants[1] = accountAgent("p-respondent", draft.SideRespondent, otherAccount)
	d := mustPrepare(t, in)
	require.Equal(t, draft.ProcedureAgentOnly, d.ProcedureName())
	out, err := draft.Confirm(d, accountRequest(t, d, "p-claimant", agentAccount), accountOf(agentAccount), fixedNow)
	require.NoError(t, err)
	out, err = draft.Confirm(out.Draft, accountRequest(t, out.Draft, "p-respondent", otherAccount), accountOf(otherAccount), fixedNow)
	require.NoError(t, err)
	require.True(t, out.Last)
}
