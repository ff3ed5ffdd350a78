package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
)

type representativesData struct {
	CaseID          string `json:"caseId"`
	Representatives []struct {
		RepresentativeID string `json:"representativeId"`
		Side             string `json:"side"`
		Subject          string `json:"subject"`
		Label            string `json:"label"`
		Active           bool   `json:"active"`
		AppointedBy      string `json:"appointedBy"`
		RemovedAt        string `json:"removedAt"`
	} `json:"representatives"`
}

// joined opens a case whose respondent joined through its partner.
func (s *stack) joined(t testing.TB) opened {
	t.Helper()
	c := s.open(t)
	rep := s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", s.respondent, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	return c
}

// appoint appoints subject for the caller's side and returns the
// representative's id.
func (s *stack) appoint(t testing.TB, caseID, token, subject string) string {
	t.Helper()
	rep := s.do(t, http.MethodPost, "/api/cases/"+caseID+"/representatives", token, newKey(), map[string]any{"subject": subject, "label": "Counsel"})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	id := data[struct {
		RepresentativeID string `json:"representativeId"`
	}](t, rep).RepresentativeID
	require.NotEmpty(t, id)
	return id
}

// Issue 24: the respondent's party appoints a representative; from the
// next request on it sees the case and acts for the respondent, never for
// the claimant, and never appoints others; its label changes; once
// removed it no longer sees the case. Both sides see who represents whom,
// and every change is on the docket.
func TestARepresentativeActsForItsSideUntilRemoved(t *testing.T) {
	s := newStack(t)
	c := s.joined(t)
	counsel, counselCred := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner(respondentPartner))
	answer := map[string]any{"text": "Denied, by counsel."}

	rep := s.do(t, http.MethodGet, "/api/cases/"+c.id, counsel, "", nil)
	require.Equal(t, http.StatusNotFound, rep.status, "not yet appointed: %s", rep.body)

	rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/representatives", s.respondent, newKey(),
		map[string]any{"subject": "credential:" + counselCred.PublicID, "label": "Beta's counsel"})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	appointed := data[actData](t, rep)
	require.Len(t, appointed.Events, 1)
	require.Equal(t, "representative_appointed", appointed.Events[0].Type)
	repID := data[struct {
		RepresentativeID string `json:"representativeId"`
	}](t, rep).RepresentativeID
	require.Regexp(t, `^rep_[0-9a-f]{24}$`, repID)

	// Both sides, on both route families, see who represents whom.
	for _, token := range []string{s.claimant, s.respondent, counsel} {
		rep = s.do(t, http.MethodGet, "/api/cases/"+c.id+"/representatives", token, "", nil)
		require.Equal(t, http.StatusOK, rep.status, string(rep.body))
		require.Equal(t, "private, no-store", rep.header.Get("Cache-Control"))
		list := data[representativesData](t, rep).Representatives
		require.Len(t, list, 1)
		require.Equal(t, repID, list[0].RepresentativeID)
		require.Equal(t, "respondent", list[0].Side)
		require.Equal(t, "credential:"+counselCred.PublicID, list[0].Subject)
		require.Equal(t, "p-respondent", list[0].AppointedBy)
		require.True(t, list[0].Active)
	}
	rep = s.do(t, http.MethodGet, "/api/disputes/"+c.id+"/representatives", s.claimant, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Len(t, data[representativesData](t, rep).Representatives, 1)

	// It acts for the respondent.
	rep = s.do(t, http.MethodGet, "/api/cases/"+c.id, counsel, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/answer", counsel, newKey(), answer)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	require.Equal(t, "p-respondent", data[actData](t, rep).Case.Answer.ParticipantID)

	// Never for the claimant, and it never appoints, changes or removes.
	otherCounsel, otherCred := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner(respondentPartner))
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/messages", counsel, newKey(), map[string]any{"participantId": "p-claimant", "text": "As the claimant."})
		require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		require.Equal(t, "forbidden", rep.code)
		rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/representatives", counsel, newKey(), map[string]any{"subject": "credential:" + otherCred.PublicID, "label": "Junior"})
		require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		require.Equal(t, "forbidden", rep.code)
		rep = s.do(t, http.MethodPatch, "/api/cases/"+c.id+"/representatives", counsel, newKey(), map[string]any{"representativeId": repID, "action": "remove"})
		require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
	})
	rep = s.do(t, http.MethodGet, "/api/cases/"+c.id, otherCounsel, "", nil)
	require.Equal(t, http.StatusNotFound, rep.status, "an agent nobody appointed: %s", rep.body)

	// The side changes its label, on the website alias.
	rep = s.do(t, http.MethodPatch, "/api/disputes/"+c.id+"/representatives", s.respondent, newKey(),
		map[string]any{"representativeId": repID, "action": "change", "label": "Beta's lead counsel"})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Equal(t, "representative_changed", data[actData](t, rep).Events[0].Type)

	// Removed: the case is gone for it at once.
	rep = s.do(t, http.MethodPatch, "/api/cases/"+c.id+"/representatives", s.respondent, newKey(), map[string]any{"representativeId": repID, "action": "remove"})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Equal(t, "representative_removed", data[actData](t, rep).Events[0].Type)
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodGet, "/api/cases/"+c.id, counsel, "", nil)
		require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
		require.Equal(t, "case_not_found_or_opening", rep.code)
		rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/messages", counsel, newKey(), map[string]any{"text": "Still here?"})
		require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
	})
	rep = s.do(t, http.MethodGet, "/api/cases/"+c.id+"/representatives", s.claimant, "", nil)
	list := data[representativesData](t, rep).Representatives
	require.Len(t, list, 1, "a removal is kept")
	require.False(t, list[0].Active)
	require.NotEmpty(t, list[0].RemovedAt)
	require.Equal(t, "Beta's lead counsel", list[0].Label)

	require.Subset(t, s.docketTypes(t, c.id), []string{"representative_appointed", "representative_changed", "representative_removed"})
}

// A partner's agent identity is appointed by its principal subject: a
// credential of that agent acts for the side, another agent of the same
// partner does not.
func TestARepresentativeByAgentIdentity(t *testing.T) {
	s := newStack(t)
	c := s.joined(t)
	agent, _ := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner(respondentPartner), authtest.WithAgent("beta-counsel-7"))
	s.appoint(t, c.id, s.respondent, "principal:"+respondentPartner+"/beta-counsel-7")
	rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/answer", agent, newKey(), map[string]any{"text": "Denied."})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	// Another agent identity of the same partner was not appointed.
	unappointed, _ := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner(respondentPartner), authtest.WithAgent("beta-counsel-8"))
	rep = s.do(t, http.MethodGet, "/api/cases/"+c.id, unappointed, "", nil)
	require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
}

// Every appointment of someone who could not act for the side, every
// appointment by someone who is not the side's party, and every bad
// change is refused with a clear problem, leaving the case, its docket
// and the outbox as they were.
func TestRepresentativeRefusalsChangeNothing(t *testing.T) {
	s := newStack(t)
	c := s.joined(t)
	ctx := context.Background()
	_, strangerAgent := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner("partner-c"))
	_, otherTenantAgent := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner(respondentPartner), authtest.WithTenant("tenant-other"))
	_, liveAgent := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner(respondentPartner), authtest.WithEnvironment(auth.Live))
	_, wrongRole := authtest.Mint(t, s.credentials, auth.RoleClaimantAgent, authtest.WithPartner(respondentPartner))
	_, orchestrator := authtest.Mint(t, s.credentials, auth.RolePlatformOrchestrator, authtest.WithPartner(respondentPartner))
	_, revoked := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner(respondentPartner))
	require.NoError(t, s.credentials.Revoke(ctx, revoked.PublicID))
	authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner("partner-c"), authtest.WithAgent("c-agent"))
	// A claimant agent with a membership of the claimant side sees the
	// case and acts for the claimant.
	claimantMember, claimantMemberCred := authtest.Mint(t, s.credentials, auth.RoleClaimantAgent)
	require.NoError(t, s.credentials.Grant(ctx, auth.Membership{Resource: "case:" + c.id, Side: auth.Claimant,
		Subject: auth.CredentialSubject(claimantMemberCred.PublicID), ExpiresAt: time.Now().Add(time.Hour)}))
	_, counselCred := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner(respondentPartner))
	repID := s.appoint(t, c.id, s.respondent, "credential:"+counselCred.PublicID)
	path := "/api/cases/" + c.id + "/representatives"

	for _, tc := range []struct {
		name   string
		method string
		token  string
		body   map[string]any
		status int
		code   string
	}{
		{"another partner's credential", http.MethodPost, s.respondent, map[string]any{"subject": "credential:" + strangerAgent.PublicID, "label": "x"}, 422, "representative_not_eligible"},
		{"another tenant's credential", http.MethodPost, s.respondent, map[string]any{"subject": "credential:" + otherTenantAgent.PublicID, "label": "x"}, 422, "representative_not_eligible"},
		{"a live credential on a sandbox case", http.MethodPost, s.respondent, map[string]any{"subject": "credential:" + liveAgent.PublicID, "label": "x"}, 422, "representative_not_eligible"},
		{"the other side's role", http.MethodPost, s.respondent, map[string]any{"subject": "credential:" + wrongRole.PublicID, "label": "x"}, 422, "representative_not_eligible"},
		{"an orchestrator", http.MethodPost, s.respondent, map[string]any{"subject": "credential:" + orchestrator.PublicID, "label": "x"}, 422, "representative_not_eligible"},
		{"a revoked credential", http.MethodPost, s.respondent, map[string]any{"subject": "credential:" + revoked.PublicID, "label": "x"}, 422, "representative_not_eligible"},
		{"a credential nobody minted", http.MethodPost, s.respondent, map[string]any{"subject": "credential:cred_made_up", "label": "x"}, 422, "representative_not_eligible"},
		{"a principal string the caller made up", http.MethodPost, s.respondent, map[string]any{"subject": "principal:" + respondentPartner + "/agent-nobody-minted", "label": "x"}, 422, "representative_not_eligible"},
		{"another partner's agent identity", http.MethodPost, s.respondent, map[string]any{"subject": "principal:partner-c/c-agent", "label": "x"}, 422, "representative_not_eligible"},
		{"that agent id claimed under the side's partner", http.MethodPost, s.respondent, map[string]any{"subject": "principal:" + respondentPartner + "/c-agent", "label": "x"}, 422, "representative_not_eligible"},
		{"a claimant agent naming itself representative of the respondent", http.MethodPost, claimantMember,
			map[string]any{"participantId": "p-respondent", "subject": "credential:" + claimantMemberCred.PublicID, "label": "x"}, 403, "forbidden"},
		{"the claimant's partner appointing for the respondent", http.MethodPost, s.claimant,
			map[string]any{"participantId": "p-respondent", "subject": "credential:" + counselCred.PublicID, "label": "x"}, 403, "forbidden"},
		{"a stranger", http.MethodPost, s.stranger, map[string]any{"subject": "credential:" + strangerAgent.PublicID, "label": "x"}, 404, "case_not_found_or_opening"},
		{"a subject that is a principal id, not a subject", http.MethodPost, s.respondent, map[string]any{"subject": "org-beta", "label": "x"}, 400, "invalid_act"},
		{"a label too long", http.MethodPost, s.respondent, map[string]any{"subject": "credential:" + counselCred.PublicID, "label": strings.Repeat("a", 121)}, 400, "invalid_act"},
		{"an unknown field", http.MethodPost, s.respondent, map[string]any{"subject": "credential:" + counselCred.PublicID, "label": "x", "side": "claimant"}, 400, ""},
		{"the same subject again", http.MethodPost, s.respondent, map[string]any{"subject": "credential:" + counselCred.PublicID, "label": "Again"}, 409, "representative_exists"},
		{"the claimant removing the respondent's representative", http.MethodPatch, s.claimant, map[string]any{"representativeId": repID, "action": "remove"}, 403, "wrong_side"},
		{"an unknown representative", http.MethodPatch, s.respondent, map[string]any{"representativeId": "rep_unknown", "action": "remove"}, 404, "representative_not_found"},
		{"an unknown action", http.MethodPatch, s.respondent, map[string]any{"representativeId": repID, "action": "replace"}, 400, "invalid_act"},
		{"a change without a label", http.MethodPatch, s.respondent, map[string]any{"representativeId": repID, "action": "change"}, 400, "invalid_act"},
		{"a removal with a label", http.MethodPatch, s.respondent, map[string]any{"representativeId": repID, "action": "remove", "label": "x"}, 400, "invalid_act"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.unchanged(t, func() {
				rep := s.do(t, tc.method, path, tc.token, newKey(), tc.body)
				require.Equal(t, tc.status, rep.status, string(rep.body))
				if tc.code != "" {
					require.Equal(t, tc.code, rep.code, string(rep.body))
				}
			})
		})
	}
	rep := s.do(t, http.MethodGet, path, s.respondent, "", nil)
	require.Len(t, data[representativesData](t, rep).Representatives, 1, "only the one appointment")
	require.Equal(t, []string{"opened", "respondent_joined", "stage_opened", "representative_appointed"}, s.docketTypes(t, c.id))
}
