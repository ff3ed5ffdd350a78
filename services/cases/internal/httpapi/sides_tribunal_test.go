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

// claimantBoundTo binds the claimant participant to partner (and agent,
// when not ""), as a draft whose preparer named them would.
func claimantBoundTo(partner, agent string) func(map[string]any) {
	return func(payload map[string]any) {
		claimant := payload["participants"].([]map[string]any)[0]
		claimant["partnerId"] = partner
		if agent != "" {
			claimant["agentId"] = agent
		}
	}
}

// A tribunal member (adjudicator, reviewer) is never a party: it acts for
// no participant and sees no case as one, even a case whose draft bound a
// participant to its partner id and agent id, or where it holds a
// membership of a side. (Which cases it sees as a member of the tribunal
// is the tribunal's to decide, on assignment.)
func TestTribunalMembersAreNeverAParty(t *testing.T) {
	s := newStack(t)
	adjudicator, _ := authtest.Mint(t, s.credentials, auth.RoleAdjudicator, authtest.WithPartner("tribunal-ai-1"), authtest.WithAgent("adjudicator-1"))
	reviewer, reviewerCred := authtest.Mint(t, s.credentials, auth.RoleReviewer, authtest.WithPartner("tribunal-reviewer-1"))

	byAgentID := s.open(t, claimantBoundTo("tribunal-ai-1", "adjudicator-1"))
	byMembership := s.open(t, claimantBoundTo("tribunal-reviewer-1", ""))
	require.NoError(t, s.credentials.Grant(context.Background(), auth.Membership{Resource: "case:" + byMembership.id, Side: auth.Claimant,
		Subject: auth.CredentialSubject(reviewerCred.PublicID), ExpiresAt: time.Now().Add(time.Hour)}))

	for _, tc := range []struct {
		name, token, caseID string
	}{
		{"an adjudicator whose agent id a participant names", adjudicator, byAgentID.id},
		{"a reviewer with a membership of the side", reviewer, byMembership.id},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.unchanged(t, func() {
				for _, path := range []string{"/api/cases/" + tc.caseID, "/api/cases/" + tc.caseID + "/participants", "/api/v2/cases/" + tc.caseID} {
					rep := s.do(t, http.MethodGet, path, tc.token, "", nil)
					require.Equal(t, http.StatusNotFound, rep.status, "%s: %s", path, rep.body)
					require.Equal(t, "case_not_found_or_opening", rep.code)
				}
				rep := s.do(t, http.MethodPost, "/api/cases/"+tc.caseID+"/messages", tc.token, newKey(), map[string]any{"text": "As the claimant: settle now."})
				require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
			})
		})
	}
}
