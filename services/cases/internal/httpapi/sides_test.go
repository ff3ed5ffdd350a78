package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// hostedRespondent makes the case's respondent a hosted one, as filings
// opens it when the respondent named no partner or agent and did not
// confirm: the claimant's partner delivers its invitation and never acts
// for it.
func hostedRespondent(payload map[string]any) {
	respondent := payload["participants"].([]map[string]any)[1]
	respondent["partnerId"], respondent["hosted"] = claimantPartner, true
}

// withClaimantParty gives the case a claimant_party capability.
func withClaimantParty(token string) func(map[string]any) {
	return func(payload map[string]any) {
		payload["capabilityHashes"].(map[string]any)["claimant_party"] = auth.HashToken(token)
	}
}

// participantPartner reads the partner a participant of the case is bound
// to, as its partner's orchestrator sees the case (nil: none).
func (s *stack) participantPartner(t testing.TB, caseID, participantID string) *string {
	t.Helper()
	rep := s.do(t, http.MethodGet, "/api/cases/"+caseID+"/participants", s.claimant, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	for _, p := range data[struct {
		Participants []struct {
			ParticipantID string  `json:"participantId"`
			PartnerID     *string `json:"partnerId"`
		} `json:"participants"`
	}](t, rep).Participants {
		if p.ParticipantID == participantID {
			return p.PartnerID
		}
	}
	t.Fatalf("no participant %s in case %s", participantID, caseID)
	return nil
}

// Issue 21, item 1: a side's acts come only from that side's own
// authority. The claimant's partner holds the respondent's invitation (it
// delivers it), and may have agents of the respondent role, yet never acts
// for the respondent; the mirror holds for the claimant's secret; a mutual
// act needs each side's own act. Every refusal changes nothing.
func TestASideIsActedForOnlyByItsOwnAuthority(t *testing.T) {
	s := newStack(t)
	// The claimant's partner's own respondent agent, and a respondent
	// agent of a partner that takes no part.
	claimantsRespondentAgent, _ := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent)
	thirdPartyAgent, _ := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner("partner-c"))
	answer := map[string]any{"text": "Denied."}

	t.Run("a respondent bound to another partner: the claimant's partner never acts for it, invitation or not", func(t *testing.T) {
		c := s.open(t)
		s.unchanged(t, func() {
			for _, token := range []string{claimantsRespondentAgent, thirdPartyAgent} {
				rep := s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", token, newKey(), nil, auth.CapabilityHeader, c.inviteToken)
				require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
				require.Equal(t, "case_not_found_or_opening", rep.code)
				rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/answer", token, newKey(), answer, auth.CapabilityHeader, c.inviteToken)
				require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
			}
			rep := s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", s.claimant, newKey(),
				map[string]any{"participantId": "p-respondent"}, auth.CapabilityHeader, c.inviteToken)
			require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
			require.Equal(t, "forbidden", rep.code)
		})
		// The respondent's own partner joins and answers.
		rep := s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", s.respondentAgent, newKey(), nil, auth.CapabilityHeader, c.inviteToken)
		require.Equal(t, http.StatusOK, rep.status, string(rep.body))
		rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/answer", s.respondent, newKey(), answer)
		require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	})

	t.Run("termination by agreement needs the other side's own act", func(t *testing.T) {
		c := s.open(t)
		require.Equal(t, http.StatusOK, s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", s.respondent, newKey(), nil).status)
		rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/termination-requests", s.claimant, newKey(), nil)
		require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
		confirm := "/api/cases/" + c.id + "/termination-requests/" + data[actData](t, rep).TerminationID + "/confirmations"
		s.unchanged(t, func() {
			rep := s.do(t, http.MethodPost, confirm, claimantsRespondentAgent, newKey(), nil, auth.CapabilityHeader, c.inviteToken)
			require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
			rep = s.do(t, http.MethodPost, confirm, s.claimant, newKey(), map[string]any{"participantId": "p-respondent"}, auth.CapabilityHeader, c.inviteToken)
			require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
			require.Equal(t, "forbidden", rep.code)
		})
		rep = s.do(t, http.MethodPost, confirm, s.respondent, newKey(), nil)
		require.Equal(t, http.StatusOK, rep.status, string(rep.body))
		require.Equal(t, "terminated", data[actData](t, rep).Case.Status)
	})

	t.Run("the claimant's secret works for the claimant's partner only", func(t *testing.T) {
		party := auth.NewToken("pc_party_")
		c := s.open(t, withClaimantParty(party))
		respondentsClaimantAgent, _ := authtest.Mint(t, s.credentials, auth.RoleClaimantAgent, authtest.WithPartner(respondentPartner))
		message := map[string]any{"text": "As the claimant, I withdraw."}
		s.unchanged(t, func() {
			rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/messages", respondentsClaimantAgent, newKey(), message, auth.CapabilityHeader, party)
			require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
			rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/termination-requests", respondentsClaimantAgent, newKey(), nil, auth.CapabilityHeader, party)
			require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
			rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/messages", s.respondent, newKey(),
				map[string]any{"participantId": "p-claimant", "text": "As the claimant, I withdraw."}, auth.CapabilityHeader, party)
			require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		})
		rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/messages", s.claimantAgent, newKey(), map[string]any{"text": "Ours."}, auth.CapabilityHeader, party)
		require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	})

	t.Run("a hosted respondent: the claimant's partner delivers its invitation and never uses it; the join binds it", func(t *testing.T) {
		c := s.open(t, hostedRespondent)
		require.Nil(t, s.participantPartner(t, c.id, "p-respondent"), "no partner acts for a hosted respondent")
		s.unchanged(t, func() {
			rep := s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", claimantsRespondentAgent, newKey(), nil, auth.CapabilityHeader, c.inviteToken)
			require.Equal(t, http.StatusNotFound, rep.status, "the claimant's partner's agent, with the invitation: %s", rep.body)
			rep = s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", s.claimant, newKey(), map[string]any{"participantId": "p-respondent"})
			require.Equal(t, http.StatusForbidden, rep.status, "the claimant's partner's orchestrator: %s", rep.body)
			rep = s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", thirdPartyAgent, newKey(), nil)
			require.Equal(t, http.StatusNotFound, rep.status, "another partner without the invitation: %s", rep.body)
		})
		rep := s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", thirdPartyAgent, newKey(), nil, auth.CapabilityHeader, c.inviteToken)
		require.Equal(t, http.StatusOK, rep.status, string(rep.body))
		bound := s.participantPartner(t, c.id, "p-respondent")
		require.NotNil(t, bound)
		require.Equal(t, "partner-c", *bound, "the join binds the respondent to the partner whose agent joined")

		// From now on partner-c's credentials act for it, and nobody else's.
		lateAgent, _ := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner("partner-d"))
		s.unchanged(t, func() {
			rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/answer", lateAgent, newKey(), answer, auth.CapabilityHeader, c.inviteToken)
			require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
			rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/answer", claimantsRespondentAgent, newKey(), answer, auth.CapabilityHeader, c.inviteToken)
			require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
		})
		rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/answer", thirdPartyAgent, newKey(), answer, auth.CapabilityHeader, c.inviteToken)
		require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	})

	t.Run("a hosted respondent that joined on the page is acted for by no credential", func(t *testing.T) {
		c := s.open(t, hostedRespondent)
		// The hosted page joins through caseflow, as the API does.
		_, err := caseflow.New(s.cases, nil).Act(context.Background(), c.id, procedure.Act{Kind: procedure.ActJoin, ParticipantID: "p-respondent"})
		require.NoError(t, err)
		require.Nil(t, s.participantPartner(t, c.id, "p-respondent"))
		s.unchanged(t, func() {
			for _, token := range []string{thirdPartyAgent, claimantsRespondentAgent} {
				rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/answer", token, newKey(), answer, auth.CapabilityHeader, c.inviteToken)
				require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
			}
			rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/answer", s.claimant, newKey(), map[string]any{"participantId": "p-respondent", "text": "Denied."})
			require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		})
	})
}
