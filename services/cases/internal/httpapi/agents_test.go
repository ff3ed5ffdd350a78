package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
)

// An agent acts for its side as the participant's immutable agent (through
// that participant's partner), by a membership of the case, or with the
// case's current capability; nothing else makes it see the case.
func TestAgentsActByIdentityMembershipOrCapability(t *testing.T) {
	s := newStack(t)
	c := s.open(t, respondentAgentID("agent-bob-7"))

	bob, _ := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner(respondentPartner), authtest.WithAgent("agent-bob-7"))
	eve, _ := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner(respondentPartner), authtest.WithAgent("agent-eve"))
	bobAsClaimant, _ := authtest.Mint(t, s.credentials, auth.RoleClaimantAgent, authtest.WithPartner(respondentPartner), authtest.WithAgent("agent-bob-7"))
	// An agent id is its partner's: another partner cannot mint under it
	// (issue 21, item 2), so it never stands in for bob.
	_, _, err := s.credentials.Mint(context.Background(), auth.MintRequest{Tenant: "tenant-test", Environment: auth.Sandbox,
		Role: auth.RoleRespondentAgent, PartnerID: "partner-c", AgentID: "agent-bob-7"})
	require.ErrorIs(t, err, auth.ErrAgentIDTaken)
	for who, token := range map[string]string{
		"another agent of the respondent's partner":   eve,
		"the agent id with the claimant's agent role": bobAsClaimant,
	} {
		s.unchanged(t, func() {
			rep := s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", token, newKey(), nil)
			require.Equal(t, http.StatusNotFound, rep.status, "%s: %s", who, rep.body)
			require.Equal(t, "case_not_found_or_opening", rep.code, who)
		})
	}
	// The invitation does not let another agent act for a participant
	// bound to bob: it may act for no participant, so it does not see the
	// case.
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", eve, newKey(), nil, auth.CapabilityHeader, c.inviteToken)
		require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
		require.Equal(t, "case_not_found_or_opening", rep.code)
	})

	rep := s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", bob, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	rep = s.do(t, http.MethodPost, "/api/v2/cases/"+c.id+"/answer", bob, newKey(), map[string]any{"text": "Denied."})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))

	// A claimant agent with a membership of the case's claimant side
	// invites; once the membership is revoked it no longer sees the case,
	// and a retry of its invitation is not replayed to it.
	other := s.open(t)
	agent, cred := authtest.Mint(t, s.credentials, auth.RoleClaimantAgent)
	member := auth.CredentialSubject(cred.PublicID)
	require.NoError(t, s.credentials.Grant(context.Background(), auth.Membership{
		Resource: "case:" + other.id, Side: auth.Claimant, Subject: member, ExpiresAt: time.Now().Add(time.Hour),
	}))
	key := newKey()
	rep = s.do(t, http.MethodPost, "/api/cases/"+other.id+"/invitations", agent, key, nil)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	require.NoError(t, s.credentials.RevokeMembership(context.Background(), "case:"+other.id, member))
	rep = s.do(t, http.MethodPost, "/api/cases/"+other.id+"/invitations", agent, key, nil)
	require.Equal(t, http.StatusNotFound, rep.status, "authority is rechecked before a replay: %s", rep.body)
	require.Empty(t, rep.header.Get("Idempotent-Replayed"))
}
