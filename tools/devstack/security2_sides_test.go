package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/redistest"
)

// TestSidesThroughTheEdge replays items 1 and 2 of issue 21 against the
// running stack, through the edge: the partner whose act opens a case can
// no longer act for the other side (with the other side's secrets, its own
// agents of the other role, or an agent id another partner also uses), and
// each refusal leaves drafts, cases, dockets, memberships and capabilities
// as they were.
func TestSidesThroughTheEdge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every service; skipped with -short")
	}
	st := startStack(t)
	p := newProbe(t, st)

	a := p.mint(t, "tenant-dev", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-a", "")
	aRespondentAgent := p.mint(t, "tenant-dev", auth.Sandbox, auth.RoleRespondentAgent, "partner-a", "")
	b := p.mint(t, "tenant-dev", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-b", "")
	bRespondentAgent := p.mint(t, "tenant-dev", auth.Sandbox, auth.RoleRespondentAgent, "partner-b", "")
	bClaimantAgent := p.mint(t, "tenant-dev", auth.Sandbox, auth.RoleClaimantAgent, "partner-b", "")
	cRespondentAgent := p.mint(t, "tenant-dev", auth.Sandbox, auth.RoleRespondentAgent, "partner-c", "")
	strangers := map[string]minted{
		"partner-a in another tenant":   p.mint(t, "tenant-two", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-a", ""),
		"partner-a in live":             p.mint(t, "tenant-dev", auth.Live, auth.RolePlatformOrchestrator, "partner-a", ""),
		"partner-b's agent in live":     p.mint(t, "tenant-dev", auth.Live, auth.RoleRespondentAgent, "partner-b", ""),
		"partner-b's agent, tenant two": p.mint(t, "tenant-two", auth.Sandbox, auth.RoleRespondentAgent, "partner-b", ""),
	}
	answer := map[string]any{"text": "The goods were shipped; the tracking record is attached."}
	capability := func(token string) []string { return []string{auth.CapabilityHeader, token} }

	t.Run("1: the opener's partner never acts for a respondent another partner acts for", func(t *testing.T) {
		body := claimantInitiated()
		body["participants"].([]map[string]any)[1]["partnerId"] = "partner-b"
		d := p.prepare(t, a, body)
		o := p.openCase(t, a, d.DraftID, d.confirmation("p-claimant", a.cred.PublicID, "org-acme"))
		require.Empty(t, o.ShowOnce.RespondentInviteToken, "no secret of partner-b's side for partner-a")
		require.Empty(t, o.ShowOnce.RespondentLoginPath)
		id := o.CaseID
		// The claimant's partner hands an invitation off, as the route's name says.
		invite := p.invitation(t, a, id)

		p.unchangedCase(t, func() {
			for path, body := range map[string]any{"/api/partner-cases/" + id + "/respondent": nil, "/api/cases/" + id + "/answer": answer} {
				r := p.do(t, "POST", path, aRespondentAgent, p.key(), body, capability(invite)...)
				require.Equal(t, http.StatusNotFound, r.status, "%s: %s", path, r.body)
				require.Equal(t, "case_not_found_or_opening", r.code)
			}
			r := p.do(t, "POST", "/api/partner-cases/"+id+"/respondent", a, p.key(), map[string]any{"participantId": "p-respondent"}, capability(invite)...)
			require.Equal(t, http.StatusForbidden, r.status, string(r.body))
			require.Equal(t, "forbidden", r.code)
			for who, cred := range strangers {
				r := p.do(t, "POST", "/api/partner-cases/"+id+"/respondent", cred, p.key(), nil, capability(invite)...)
				require.Equal(t, http.StatusNotFound, r.status, "%s: %s", who, r.body)
			}
		})

		// partner-b's own agent joins with the invitation, and answers.
		r := p.do(t, "POST", "/api/partner-cases/"+id+"/respondent", bRespondentAgent, p.key(), nil, capability(invite)...)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		r = p.do(t, "POST", "/api/cases/"+id+"/answer", b, p.key(), answer)
		require.Equal(t, http.StatusCreated, r.status, string(r.body))

		// Termination by agreement needs partner-b's own act.
		r = p.do(t, "POST", "/api/cases/"+id+"/termination-requests", a, p.key(), nil)
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
		var req struct {
			Data struct {
				TerminationID string `json:"terminationId"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(r.body, &req))
		confirm := "/api/cases/" + id + "/termination-requests/" + req.Data.TerminationID + "/confirmations"
		p.unchangedCase(t, func() {
			r := p.do(t, "POST", confirm, aRespondentAgent, p.key(), nil, capability(invite)...)
			require.Equal(t, http.StatusNotFound, r.status, string(r.body))
			r = p.do(t, "POST", confirm, a, p.key(), map[string]any{"participantId": "p-respondent"}, capability(invite)...)
			require.Equal(t, http.StatusForbidden, r.status, string(r.body))
		})
		r = p.do(t, "POST", confirm, b, p.key(), nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Contains(t, string(r.body), `"status":"terminated"`)
	})

	t.Run("1: the mirror: the respondent's partner gets no claimant secret and never acts as the claimant", func(t *testing.T) {
		body := twoPartyDraft() // bilateral, with a claimant acceptance identity
		body["participants"] = []map[string]any{
			{"participantId": "p-claimant", "side": "claimant", "principalId": "org-acme", "principalKind": "organization", "authorizationMode": "partner_credential", "initiator": true},
			{"participantId": "p-respondent", "side": "respondent", "principalId": "org-beta", "principalKind": "organization", "authorizationMode": "partner_credential", "partnerId": "partner-b"},
		}
		d := p.prepare(t, a, body)
		require.Equal(t, http.StatusAccepted, p.do(t, "POST", "/api/v2/case-drafts/"+d.DraftID+"/confirmations", a, p.key(), d.confirmation("p-claimant", a.cred.PublicID, "org-acme")).status)
		o := p.openCase(t, b, d.DraftID, d.confirmation("p-respondent", b.cred.PublicID, "org-beta"))
		require.Empty(t, o.ShowOnce.ClaimantPartyToken, "no claimant packet for partner-b")
		id := o.CaseID
		p.unchangedCase(t, func() {
			r := p.do(t, "POST", "/api/cases/"+id+"/messages", b, p.key(), map[string]any{"participantId": "p-claimant", "text": "As the claimant, we withdraw."})
			require.Equal(t, http.StatusForbidden, r.status, string(r.body))
			r = p.do(t, "POST", "/api/cases/"+id+"/messages", bClaimantAgent, p.key(), map[string]any{"text": "As the claimant, we withdraw."})
			require.Equal(t, http.StatusNotFound, r.status, string(r.body))
			r = p.do(t, "POST", "/api/cases/"+id+"/termination-requests", bClaimantAgent, p.key(), nil)
			require.Equal(t, http.StatusNotFound, r.status, string(r.body))
		})
	})

	t.Run("1: a hosted respondent: the claimant's partner delivers its invitation and never uses it", func(t *testing.T) {
		d := p.prepare(t, a, claimantInitiated())
		o := p.openCase(t, a, d.DraftID, d.confirmation("p-claimant", a.cred.PublicID, "org-acme"))
		invite := o.ShowOnce.RespondentInviteToken
		require.NotEmpty(t, invite, "the claimant's partner delivers a hosted respondent's invitation")
		require.Regexp(t, `^/respond/`+o.CaseID+`#login=`, o.ShowOnce.RespondentLoginPath)
		id := o.CaseID
		p.unchangedCase(t, func() {
			r := p.do(t, "POST", "/api/partner-cases/"+id+"/respondent", aRespondentAgent, p.key(), nil, capability(invite)...)
			require.Equal(t, http.StatusNotFound, r.status, string(r.body))
			r = p.do(t, "POST", "/api/partner-cases/"+id+"/respondent", a, p.key(), map[string]any{"participantId": "p-respondent"}, capability(invite)...)
			require.Equal(t, http.StatusForbidden, r.status, string(r.body))
			r = p.do(t, "POST", "/api/cases/"+id+"/answer", a, p.key(), map[string]any{"participantId": "p-respondent", "text": "Denied."})
			require.Equal(t, http.StatusForbidden, r.status, string(r.body))
		})
		// The respondent's own platform joins with the invitation; the join
		// binds the respondent to it, and nobody else acts for it after.
		r := p.do(t, "POST", "/api/partner-cases/"+id+"/respondent", cRespondentAgent, p.key(), nil, capability(invite)...)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Contains(t, string(r.body), `"partnerId":"partner-c"`)
		p.unchangedCase(t, func() {
			r := p.do(t, "POST", "/api/cases/"+id+"/answer", bRespondentAgent, p.key(), answer, capability(invite)...)
			require.Equal(t, http.StatusNotFound, r.status, string(r.body))
		})
		r = p.do(t, "POST", "/api/cases/"+id+"/answer", cRespondentAgent, p.key(), answer, capability(invite)...)
		require.Equal(t, http.StatusCreated, r.status, string(r.body))
	})

	t.Run("2: an agent id is one partner's: another partner cannot mint under it", func(t *testing.T) {
		d := p.prepare(t, a, claimantInitiated())
		agentX := p.mint(t, "tenant-dev", auth.Sandbox, auth.RoleRespondentAgent, "partner-a", "agent-x-21")
		_, _, err := p.creds.Mint(context.Background(), auth.MintRequest{Tenant: "tenant-dev", Environment: auth.Sandbox,
			Role: auth.RoleRespondentAgent, PartnerID: "partner-b", AgentID: "agent-x-21", Label: "security probe"})
		require.ErrorIs(t, err, auth.ErrAgentIDTaken)
		// A grant to the agent identity names its partner, and admits
		// partner-a's agent. (That a principal membership never admits
		// another partner's credential with the same agent id is held by
		// libs/auth's TestAuthorizeSide: through the edge, such a
		// credential can no longer be minted.)
		require.NoError(t, p.creds.Grant(context.Background(), auth.Membership{Resource: "draft:" + d.DraftID, Side: auth.Respondent,
			Subject: auth.PrincipalSubject("partner-a", "agent-x-21"), ExpiresAt: time.Now().Add(time.Hour)}))
		r := p.do(t, "GET", "/api/v2/case-drafts/"+d.DraftID, agentX, "", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
	})
}

// claimantInitiated is a draft the claimant's confirmation alone opens,
// whose respondent names no partner or agent: a hosted respondent.
func claimantInitiated() map[string]any {
	body := twoPartyDraft()
	body["intakeMode"] = "claimant_initiated"
	body["confirmationPolicy"] = map[string]any{"mode": "initiator_only"}
	delete(body, "claimantAcceptanceIdentity")
	body["participants"] = []map[string]any{
		{"participantId": "p-claimant", "side": "claimant", "principalId": "org-acme", "principalKind": "organization", "authorizationMode": "partner_credential", "initiator": true},
		{"participantId": "p-respondent", "side": "respondent", "principalId": "org-beta", "principalKind": "organization", "authorizationMode": "partner_credential"},
	}
	return body
}

// openedCase is the part of a 201 opening the probe reads.
type openedCase struct {
	CaseID   string `json:"caseId"`
	ShowOnce struct {
		ClaimantPartyToken    string `json:"claimantPartyToken"`
		RespondentInviteToken string `json:"respondentInviteToken"`
		RespondentLoginPath   string `json:"respondentLoginPath"`
	} `json:"showOnce"`
}

// openCase sends the confirmation that opens draftID and waits until the
// cases service has applied the opening (it learns of it through Kafka).
func (p *probe) openCase(t *testing.T, who minted, draftID string, confirmation map[string]any) openedCase {
	t.Helper()
	r := p.do(t, "POST", "/api/v2/case-drafts/"+draftID+"/confirmations", who, p.key(), confirmation)
	require.Equal(t, http.StatusCreated, r.status, string(r.body))
	var env struct {
		Data openedCase `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.body, &env))
	require.Eventually(t, func() bool {
		return p.do(t, "GET", "/api/cases/"+env.Data.CaseID, who, "", nil).status == http.StatusOK
	}, 30*time.Second, 100*time.Millisecond, "case %s never opened on the cases service", env.Data.CaseID)
	return env.Data
}

// invitation asks for a new respondent invitation as who.
func (p *probe) invitation(t *testing.T, who minted, caseID string) string {
	t.Helper()
	r := p.do(t, "POST", "/api/cases/"+caseID+"/invitations", who, p.key(), nil)
	require.Equal(t, http.StatusCreated, r.status, string(r.body))
	var env struct {
		Data struct {
			Invitation struct {
				RespondentInviteToken string `json:"respondentInviteToken"`
			} `json:"invitation"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.body, &env))
	require.NotEmpty(t, env.Data.Invitation.RespondentInviteToken)
	return env.Data.Invitation.RespondentInviteToken
}

// unchangedCase is unchanged for acts on opened cases: the cases
// service's records, dockets and documents too.
func (p *probe) unchangedCase(t *testing.T, act func()) {
	t.Helper()
	redistest.Unchanged(t, p.rdb, bookkeeping, act, "pc:filings:*", "pc:cases:*", "pc:auth:members:*", "pc:auth:cap:*")
}
