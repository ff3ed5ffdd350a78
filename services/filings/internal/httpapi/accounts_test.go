package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/services/filings/internal/events"
)

// The draft routes with account tokens (docs/accounts.md): a verified
// agent's account, with a token services/accounts issued by client
// credentials, prepares a draft for itself, reads it and confirms its own
// participant; the last confirmation opens the case, and the account's
// membership goes with it. Nobody else acts for the account's participant.

const agentAccount = "acct_CLAIMSAGENT01"

var actAndRead = []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct}

// byAccount is a draft the agent's account files for itself against a
// respondent of partner-test; only the initiator's confirmation is
// required.
func byAccount() map[string]any {
	body := twoParty()
	body["intakeMode"] = "claimant_initiated"
	body["confirmationPolicy"] = map[string]any{"mode": "initiator_only"}
	body["participants"] = []map[string]any{
		{"participantId": "p-agent", "side": "claimant", "principalId": "agent:claims", "principalKind": "autonomous_agent",
			"accountId": agentAccount, "authorizationMode": "agent_credential", "initiator": true},
		{"participantId": "p-respondent", "side": "respondent", "partnerId": "partner-test", "principalId": "org-seller",
			"principalKind": "organization", "authorizationMode": "partner_credential"},
	}
	return body
}

func decodeDraft(t *testing.T, rep reply) draftData {
	t.Helper()
	var env struct{ Data draftData }
	require.NoError(t, json.Unmarshal(rep.body, &env))
	return env.Data
}

func TestAVerifiedAgentsAccountOpensACaseWithItsToken(t *testing.T) {
	s := newStack(t)
	token, _ := authtest.MintAccountToken(t, s.credentials, agentAccount, publicBase, actAndRead)

	rep := s.do(t, http.MethodPost, "/api/filings", token, newKey(), canonical(byAccount()))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	d := decodeDraft(t, rep)
	require.Contains(t, string(rep.body), `"accountId":"`+agentAccount+`"`)

	read := s.do(t, http.MethodGet, "/api/v2/case-drafts/"+d.DraftID, token, "", nil)
	require.Equal(t, http.StatusOK, read.status, string(read.body))
	// The respondent's partner reads the draft it takes part in.
	require.Equal(t, http.StatusOK, s.do(t, http.MethodGet, "/api/v2/case-drafts/"+d.DraftID, s.orchestrator, "", nil).status)

	last := s.do(t, http.MethodPost, "/api/filings/"+d.DraftID+"/confirmations", token, newKey(),
		confirmation(d, "p-agent", agentAccount, "agent:claims"))
	require.Equal(t, http.StatusCreated, last.status, string(last.body))
	var o opened
	require.NoError(t, json.Unmarshal(last.body, &o))
	require.Equal(t, d.ReservedCaseID, o.Data.CaseID)

	raw := caseOpenedFacts(t, s)[d.ReservedCaseID]
	apitest.Event(t, api.CaseOpenedSchema+".schema.json", raw)
	var fact events.CaseOpened
	require.NoError(t, json.Unmarshal(raw, &fact))
	require.Equal(t, agentAccount, fact.Participants[0].AccountID)
	require.Empty(t, fact.Participants[0].PartnerID, "an account acts through no partner")
	require.Empty(t, fact.Recipients.Claimant, "no partner is told about the account's side")
	require.Equal(t, "partner-test", fact.Recipients.Respondent[0].PartnerID)

	// The account's membership of its side went with the opening.
	members, err := s.credentials.Memberships(t.Context(), "case:"+d.ReservedCaseID)
	require.NoError(t, err)
	var sides []auth.Side
	for _, m := range members {
		if m.Subject == auth.AccountSubject(agentAccount) {
			sides = append(sides, m.Side)
		}
	}
	require.Equal(t, []auth.Side{auth.Claimant}, sides, "the account is a member of its own side of the case, and only of it")
}

// canonical is body as POST /api/filings takes it: with the claimant
// acceptance identity it requires, and the plan named schedule.
func canonical(body map[string]any) map[string]any {
	body["claimantAcceptanceIdentity"] = "agent-ops@example.com"
	body["schedule"] = body["procedure"]
	delete(body, "procedure")
	return body
}

// Every refusal is a problem and changes nothing.
func TestAccountTokensAreRefusedWhereTheyHaveNoAuthority(t *testing.T) {
	s := newStack(t)
	token, _ := authtest.MintAccountToken(t, s.credentials, agentAccount, publicBase, actAndRead)
	rep := s.do(t, http.MethodPost, "/api/v2/case-drafts", token, newKey(), byAccount())
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	d := decodeDraft(t, rep)
	draftPath := "/api/v2/case-drafts/" + d.DraftID
	confirm := confirmation(d, "p-agent", agentAccount, "agent:claims")

	readOnly, _ := authtest.MintAccountToken(t, s.credentials, agentAccount, publicBase, []auth.Scope{auth.ScopeCasesRead})
	actOnly, _ := authtest.MintAccountToken(t, s.credentials, agentAccount, publicBase, []auth.Scope{auth.ScopeCasesAct})
	otherAudience, _ := authtest.MintAccountToken(t, s.credentials, agentAccount, "https://mcp.pcourt.test", actAndRead)
	otherAccount, _ := authtest.MintAccountToken(t, s.credentials, "acct_OTHERAGENT02", publicBase, actAndRead)
	otherTenant, _ := authtest.MintAccountToken(t, s.credentials, agentAccount, publicBase, actAndRead,
		func(r *auth.AccountTokenRequest) { r.Tenant = "tenant-other" })
	caseBound, _ := authtest.MintAccountToken(t, s.credentials, agentAccount, publicBase, actAndRead,
		func(r *auth.AccountTokenRequest) { r.CaseID = "cs_another" })

	for _, tt := range []struct {
		name, method, path, token string
		body                      any
		status                    int
		code                      string
	}{
		{"preparing without cases:act", http.MethodPost, "/api/v2/case-drafts", readOnly, byAccount(), http.StatusForbidden, "forbidden"},
		{"preparing for another account", http.MethodPost, "/api/v2/case-drafts", otherAccount, byAccount(), http.StatusBadRequest, "invalid_draft"},
		{"preparing with a token bound to a case", http.MethodPost, "/api/v2/case-drafts", caseBound, byAccount(), http.StatusForbidden, "forbidden"},
		{"preparing on the legacy pair, which takes no account tokens", http.MethodPost, "/api/v2/filings/prepare", token, byAccount(), http.StatusForbidden, "forbidden"},
		{"a token for another resource", http.MethodGet, draftPath, otherAudience, nil, http.StatusUnauthorized, "invalid_credential"},
		{"reading without cases:read", http.MethodGet, draftPath, actOnly, nil, http.StatusForbidden, "forbidden"},
		{"another account reading", http.MethodGet, draftPath, otherAccount, nil, http.StatusNotFound, "draft_not_found"},
		{"another tenant's token of the same account id", http.MethodGet, draftPath, otherTenant, nil, http.StatusNotFound, "draft_not_found"},
		{"a token bound to another case", http.MethodGet, draftPath, caseBound, nil, http.StatusNotFound, "draft_not_found"},
		{"confirming without cases:act", http.MethodPost, draftPath + "/confirmations", readOnly, confirm, http.StatusForbidden, "forbidden"},
		{"another account confirming", http.MethodPost, draftPath + "/confirmations", otherAccount, confirm, http.StatusNotFound, "draft_not_found"},
		{"the respondent's partner confirming for the account", http.MethodPost, draftPath + "/confirmations", s.orchestrator,
			confirmation(d, "p-agent", agentAccount, "agent:claims"), http.StatusForbidden, "forbidden"},
		{"the account confirming for the respondent", http.MethodPost, draftPath + "/confirmations", token,
			confirmation(d, "p-respondent", agentAccount, "org-seller"), http.StatusForbidden, "forbidden"},
		{"the account declaring its token's id as the actor", http.MethodPost, draftPath + "/confirmations", token,
			confirmation(d, "p-agent", "oat_x", "agent:claims"), http.StatusForbidden, "actor_mismatch"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s.unchanged(t, func() {
				rep := s.do(t, tt.method, tt.path, tt.token, newKey(), tt.body)
				require.Equal(t, tt.status, rep.status, string(rep.body))
				require.Equal(t, tt.code, rep.code, string(rep.body))
			})
		})
	}

	// The insufficient_scope challenge of RFC 6750 names the scope.
	rep = s.do(t, http.MethodGet, draftPath, actOnly, "", nil)
	require.Equal(t, `Bearer realm="pcourt", error="insufficient_scope", scope="cases:read"`, rep.header.Get("WWW-Authenticate"))
}
