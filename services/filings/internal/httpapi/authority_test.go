package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/x402"
)

// bundledAcrossPartners is a bundled draft whose respondent, the one whose
// consent stands in for its confirmation, acts through partnerB.
func bundledAcrossPartners() map[string]any {
	body := bundled()
	body["participants"].([]map[string]any)[1]["partnerId"] = partnerB
	return body
}

// Recording a consent speaks for the participant: only its partner may. A
// forged consent by the claimant's partner would open the case and hand it
// the respondent's show-once invitation and login.
func TestConsentNeedsAuthorityOverTheParticipant(t *testing.T) {
	s := newStack(t)
	d := s.prepare(t, bundledAcrossPartners())
	rep := s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", s.orchestrator, newKey(), confirmation(d, "p-claimant", s.orchID, "org-acme"))
	require.Equal(t, http.StatusAccepted, rep.status, string(rep.body))
	consent := map[string]any{"draftId": d.DraftID, "participantId": "p-respondent", "draftDigest": d.DraftDigest, "consentReference": "signed-terms-2026-11-22"}

	for _, path := range []string{"/api/v2/authorizations/consents", "/api/authorizations/consents"} {
		for _, tc := range []struct {
			name   string
			token  string
			status int
			code   string
		}{
			{"the claimant's partner", s.orchestrator, http.StatusForbidden, "forbidden"},
			{"a partner with no participant", s.partnerC, http.StatusNotFound, "draft_not_found"},
			{"another tenant", s.otherTenant, http.StatusNotFound, "draft_not_found"},
			{"the other environment", s.live, http.StatusNotFound, "draft_not_found"},
		} {
			t.Run(path+" by "+tc.name, func(t *testing.T) {
				s.unchanged(t, func() {
					rep := s.do(t, http.MethodPost, path, tc.token, newKey(), consent)
					require.Equal(t, tc.status, rep.status, string(rep.body))
					require.Equal(t, tc.code, rep.code)
					require.NotContains(t, string(rep.body), "showOnce")
				})
			})
		}
	}

	rep = s.do(t, http.MethodPost, "/api/authorizations/consents", s.partnerB, newKey(), consent)
	require.Equal(t, http.StatusCreated, rep.status, "the respondent's partner records its consent: %s", rep.body)
	require.Contains(t, string(rep.body), `"showOnce":{}`, "no secret of a side another partner acts for (issue 21, item 1)")
}

// Within a tenant, a partner acts only on drafts in which it acts for a
// participant, and there only for its own sides: a partner with no
// participant sees nothing (404), the respondent's partner cannot pay, grant
// the claimant side or remove the preparer's membership.
func TestOrchestratorsActOnlyForTheirPartnersParticipants(t *testing.T) {
	s := newStack(t)
	preparer, preparerCred := authtest.Mint(t, s.credentials, auth.RoleClaimantAgent)
	rep := s.do(t, http.MethodPost, "/api/v2/case-drafts", preparer, newKey(), crossPartner())
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	var created struct {
		Data struct {
			draftData
			Fee struct {
				FeeID string `json:"feeId"`
			} `json:"fee"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rep.body, &created))
	d, feeID := created.Data.draftData, created.Data.Fee.FeeID
	grants := "/api/v2/authorizations/authority-grants"
	list := grants + "?resource=draft:" + d.DraftID
	revokePreparer := list + "&credentialId=" + preparerCred.PublicID
	_, agentC := authtest.Mint(t, s.credentials, auth.RoleClaimantAgent, authtest.WithPartner("partner-c"))
	_, agentB := authtest.Mint(t, s.credentials, auth.RoleClaimantAgent, authtest.WithPartner(partnerB))

	for _, tc := range []struct {
		name, token, method, path string
		body                      any
		status                    int
		code                      string
	}{
		{"C reads the v2 draft", s.partnerC, http.MethodGet, "/api/v2/case-drafts/" + d.DraftID, nil, 404, "draft_not_found"},
		{"C reads the canonical draft", s.partnerC, http.MethodGet, "/api/filings/" + d.DraftID, nil, 404, "draft_not_found"},
		{"C reads the fee", s.partnerC, http.MethodGet, "/api/fees/" + feeID, nil, 404, "fee_not_found"},
		{"C checks out the fee", s.partnerC, http.MethodPost, "/api/fees/" + feeID + "/checkout", map[string]any{}, 404, "fee_not_found"},
		{"C asks to pay the fee", s.partnerC, http.MethodPost, "/api/fees/" + feeID + "/x402", nil, 404, "fee_not_found"},
		{"C lists the grants", s.partnerC, http.MethodGet, list, nil, 404, "draft_not_found"},
		{"C grants its agent the claimant side", s.partnerC, http.MethodPost, grants, map[string]any{"resource": "draft:" + d.DraftID, "side": "claimant", "credentialId": agentC.PublicID}, 404, "draft_not_found"},
		{"C removes the preparer", s.partnerC, http.MethodDelete, revokePreparer, nil, 404, "draft_not_found"},
		{"C confirms for the claimant", s.partnerC, http.MethodPost, "/api/v2/case-drafts/" + d.DraftID + "/confirmations", confirmation(d, "p-claimant", s.orchID, "org-acme"), 404, "draft_not_found"},
		{"another tenant reads the draft", s.otherTenant, http.MethodGet, "/api/filings/" + d.DraftID, nil, 404, "draft_not_found"},
		{"the other environment reads the fee", s.live, http.MethodGet, "/api/fees/" + feeID, nil, 404, "fee_not_found"},
		{"B checks out the fee", s.partnerB, http.MethodPost, "/api/fees/" + feeID + "/checkout", map[string]any{}, 403, "forbidden"},
		{"B asks to pay the fee", s.partnerB, http.MethodPost, "/api/fees/" + feeID + "/x402", nil, 403, "forbidden"},
		{"B grants its agent the claimant side", s.partnerB, http.MethodPost, grants, map[string]any{"resource": "draft:" + d.DraftID, "side": "claimant", "credentialId": agentB.PublicID}, 403, "forbidden"},
		{"B removes the preparer", s.partnerB, http.MethodDelete, revokePreparer, nil, 404, "not_found"},
		{"B grants its side to C's agent", s.partnerB, http.MethodPost, grants, map[string]any{"resource": "draft:" + d.DraftID, "side": "respondent", "credentialId": agentC.PublicID}, 400, "invalid_grant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.unchanged(t, func() {
				key := ""
				if tc.method != http.MethodGet {
					key = newKey()
				}
				rep := s.do(t, tc.method, tc.path, tc.token, key, tc.body)
				require.Equal(t, tc.status, rep.status, string(rep.body))
				require.Equal(t, tc.code, rep.code)
			})
		})
	}

	// B reads the draft it takes part in, sees only its own side's grants,
	// and the preparer keeps its access.
	require.Equal(t, http.StatusOK, s.do(t, http.MethodGet, "/api/v2/case-drafts/"+d.DraftID, s.partnerB, "", nil).status)
	rep = s.do(t, http.MethodGet, list, s.partnerB, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.JSONEq(t, `[]`, string(dataOf(t, rep.body)), "the claimant side's grants are not B's to see")
	require.Equal(t, http.StatusOK, s.do(t, http.MethodGet, "/api/v2/case-drafts/"+d.DraftID, preparer, "", nil).status)
}

// A fee-gated draft whose respondent acts through partnerB: B may not pay
// the fee, and so may not receive the case's show-once capabilities.
func TestOnlyTheClaimantsPartnerPaysTheFee(t *testing.T) {
	s := newStack(t)
	body := crossPartner()
	body["intakeMode"] = "claimant_initiated"
	body["claim"] = feeGated()["claim"]
	rep := s.do(t, http.MethodPost, "/api/v2/case-drafts", s.orchestrator, newKey(), body)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	var created struct {
		Data struct {
			draftData
			Fee struct {
				FeeID string `json:"feeId"`
			} `json:"fee"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rep.body, &created))
	d, feeID := created.Data.draftData, created.Data.Fee.FeeID
	path := "/api/v2/case-drafts/" + d.DraftID + "/confirmations"
	require.Equal(t, http.StatusAccepted, s.do(t, http.MethodPost, path, s.orchestrator, newKey(), confirmation(d, "p-claimant", s.orchID, "org-acme")).status)
	rep = s.do(t, http.MethodPost, path, s.partnerB, newKey(), confirmation(d, "p-respondent", s.partnerBID, "org-beta"))
	require.Equal(t, http.StatusAccepted, rep.status, string(rep.body))
	require.Contains(t, string(rep.body), `"status":"ready_to_open"`)

	offer := s.checkout(t, feeID)
	balance := s.payerBalance(t)
	for _, tc := range []struct {
		name, token string
		status      int
		code        string
	}{
		{"the respondent's partner", s.partnerB, http.StatusForbidden, "forbidden"},
		{"a partner with no participant", s.partnerC, http.StatusNotFound, "fee_not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.unchanged(t, func() {
				rep := s.do(t, http.MethodPost, "/api/fees/"+feeID+"/x402", tc.token, "", nil, x402.HeaderPaymentSignature, s.payment(t, offer))
				require.Equal(t, tc.status, rep.status, string(rep.body))
				require.Equal(t, tc.code, rep.code)
			})
		})
	}
	require.Equal(t, balance, s.payerBalance(t), "nothing was charged")

	rep = s.do(t, http.MethodPost, "/api/fees/"+feeID+"/x402", s.orchestrator, "", nil, x402.HeaderPaymentSignature, s.payment(t, offer))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
}

// A principal membership admits only credentials bound to that agent
// identity; the principalId a request carries admits nobody.
func TestPrincipalMembershipBindsAnAgentIdentity(t *testing.T) {
	s := newStack(t)
	d := s.prepare(t, crossPartner())
	stranger, strangerCred := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner(partnerB))
	// A membership of the principal string, as an earlier grant stored it.
	require.NoError(t, s.credentials.Grant(context.Background(), auth.Membership{Resource: "draft:" + d.DraftID, Side: auth.Respondent, Subject: auth.PrincipalSubject(partnerB, "org-beta"), ExpiresAt: time.Now().Add(time.Hour)}))
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", stranger, newKey(), confirmation(d, "p-respondent", strangerCred.PublicID, "org-beta"))
		require.Equal(t, http.StatusForbidden, rep.status, "writing the principal into the body is no authority: %s", rep.body)
		require.Equal(t, "forbidden", rep.code)
	})
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, "/api/v2/authorizations/authority-grants", s.partnerB, newKey(),
			map[string]any{"resource": "draft:" + d.DraftID, "side": "respondent", "principalId": "org-beta"})
		require.Equal(t, http.StatusBadRequest, rep.status, string(rep.body))
		require.Equal(t, "invalid_grant", rep.code)
	})

	// A grant of a participant's agent identity admits the credentials
	// bound to that agent, and no other.
	body := crossPartner()
	respondent := body["participants"].([]map[string]any)[1]
	respondent["agentId"], respondent["authorizationMode"] = "agent-beta-1", "agent_credential"
	d = s.prepare(t, body)
	bound, _ := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner(partnerB), authtest.WithAgent("agent-beta-1"))
	other, _ := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithPartner(partnerB), authtest.WithAgent("agent-beta-2"))
	rep := s.do(t, http.MethodPost, "/api/v2/authorizations/authority-grants", s.partnerB, newKey(),
		map[string]any{"resource": "draft:" + d.DraftID, "side": "respondent", "principalId": "agent-beta-1"})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	require.Equal(t, http.StatusOK, s.do(t, http.MethodGet, "/api/v2/case-drafts/"+d.DraftID, bound, "", nil).status)
	require.Equal(t, http.StatusForbidden, s.do(t, http.MethodGet, "/api/v2/case-drafts/"+d.DraftID, other, "", nil).status)
}

func dataOf(t testing.TB, body []byte) json.RawMessage {
	t.Helper()
	var env struct{ Data json.RawMessage }
	require.NoError(t, json.Unmarshal(body, &env))
	return env.Data
}

// mintAgent mints a claimant agent of the orchestrator's partner and
// returns its token and public id.
func mintAgent(t testing.TB, s *stack) (string, string) {
	t.Helper()
	token, cred := authtest.Mint(t, s.credentials, auth.RoleClaimantAgent)
	return token, cred.PublicID
}
