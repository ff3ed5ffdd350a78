package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
)

func bundled() map[string]any {
	body := twoParty()
	body["intakeMode"] = "bundled_bilateral"
	body["confirmationPolicy"] = map[string]any{"mode": "bundled_authorizations"}
	body["participants"] = []map[string]any{
		{"participantId": "p-claimant", "side": "claimant", "principalId": "org-acme", "principalKind": "organization", "authorizationMode": "partner_credential", "initiator": true},
		{"participantId": "p-respondent", "side": "respondent", "principalId": "org-beta", "principalKind": "organization", "authorizationMode": "bundled_authorization"},
	}
	return body
}

func TestBundledConsentStandsInForAConfirmationAndMayOpenTheCase(t *testing.T) {
	s := newStack(t)
	d := s.prepare(t, bundled())
	consent := map[string]any{"draftId": d.DraftID, "participantId": "p-respondent", "draftDigest": d.DraftDigest, "consentReference": "signed-terms-2026-11-22"}

	stale := map[string]any{"draftId": d.DraftID, "participantId": "p-respondent", "draftDigest": d.DraftDigest[:63] + "0", "consentReference": "x"}
	if d.DraftDigest[63] == '0' {
		stale["draftDigest"] = d.DraftDigest[:63] + "1"
	}
	rep := s.do(t, http.MethodPost, "/api/v2/authorizations/consents", s.orchestrator, newKey(), stale)
	require.Equal(t, http.StatusConflict, rep.status)
	require.Equal(t, "digest_mismatch", rep.code)

	notBundled := map[string]any{"draftId": d.DraftID, "participantId": "p-claimant", "draftDigest": d.DraftDigest, "consentReference": "x"}
	rep = s.do(t, http.MethodPost, "/api/authorizations/consents", s.orchestrator, newKey(), notBundled)
	require.Equal(t, http.StatusConflict, rep.status, "a consent stands in only for a bundled_authorization participant")
	require.Equal(t, "not_required", rep.code)

	agent, _ := authtest.Mint(t, s.credentials, auth.RoleClaimantAgent)
	rep = s.do(t, http.MethodPost, "/api/v2/authorizations/consents", agent, newKey(), consent)
	require.Equal(t, http.StatusForbidden, rep.status, "only the partner's orchestrator records consents")

	rep = s.do(t, http.MethodPost, "/api/v2/authorizations/consents", s.orchestrator, newKey(), consent)
	require.Equal(t, http.StatusAccepted, rep.status, string(rep.body))
	require.Contains(t, string(rep.body), `"status":"confirmed"`)

	last := s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", s.orchestrator, newKey(),
		confirmation(d, "p-claimant", s.orchID, "org-acme"))
	require.Equal(t, http.StatusCreated, last.status, string(last.body))
	require.Equal(t, int64(1), outboxLength(t, s))
}

func TestAuthorityGrantsLetAnAgentActForItsSide(t *testing.T) {
	s := newStack(t)
	d := s.prepare(t, twoParty())
	token, cred := authtest.Mint(t, s.credentials, auth.RoleRespondentAgent, authtest.WithAgent("agent-bob-7"))
	readPath := "/api/v2/case-drafts/" + d.DraftID

	require.Equal(t, http.StatusForbidden, s.do(t, http.MethodGet, readPath, token, "", nil).status, "no membership yet")

	grant := map[string]any{"resource": "draft:" + d.DraftID, "side": "respondent", "credentialId": cred.PublicID}
	rep := s.do(t, http.MethodPost, "/api/v2/authorizations/authority-grants", s.orchestrator, newKey(), grant)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	require.Equal(t, http.StatusOK, s.do(t, http.MethodGet, readPath, token, "", nil).status)

	rep = s.do(t, http.MethodGet, "/api/authorizations/authority-grants?resource=draft:"+d.DraftID, s.orchestrator, "", nil)
	require.Equal(t, http.StatusOK, rep.status)
	var list struct {
		Data []map[string]string `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rep.body, &list))
	require.Contains(t, list.Data, map[string]string{"resource": "draft:" + d.DraftID, "side": "respondent", "credentialId": cred.PublicID})

	for _, bad := range []map[string]any{
		{"resource": "case:" + d.DraftID, "side": "respondent", "credentialId": cred.PublicID},
		{"resource": "draft:" + d.DraftID, "side": "plaintiff", "principalId": "org"},
		{"resource": "draft:" + d.DraftID, "side": "respondent"},
		{"resource": "draft:" + d.DraftID, "side": "respondent", "credentialId": "cred_unknown"},
	} {
		rep := s.do(t, http.MethodPost, "/api/v2/authorizations/authority-grants", s.orchestrator, newKey(), bad)
		require.Equal(t, http.StatusBadRequest, rep.status, "%v", bad)
		require.Equal(t, "invalid_grant", rep.code)
	}
	otherTenant, _ := authtest.Mint(t, s.credentials, auth.RolePlatformOrchestrator, authtest.WithTenant("tenant-other"))
	rep = s.do(t, http.MethodPost, "/api/v2/authorizations/authority-grants", otherTenant, newKey(), grant)
	require.Equal(t, http.StatusNotFound, rep.status, "another tenant's draft does not exist for it")

	rep = s.do(t, http.MethodDelete, "/api/v2/authorizations/authority-grants?resource=draft:"+d.DraftID+"&credentialId="+cred.PublicID, s.orchestrator, newKey(), nil)
	require.Equal(t, http.StatusNoContent, rep.status, string(rep.body))
	require.Equal(t, http.StatusForbidden, s.do(t, http.MethodGet, readPath, token, "", nil).status, "revoked")
}

func TestFeesCanBeReadAndQuoted(t *testing.T) {
	s := newStack(t)
	rep := s.do(t, http.MethodPost, "/api/v2/case-drafts", s.orchestrator, newKey(), twoParty())
	require.Equal(t, http.StatusCreated, rep.status)
	var created struct {
		Data struct {
			DraftID        string `json:"draftId"`
			ReservedCaseID string `json:"reservedCaseId"`
			Fee            struct {
				FeeID       string `json:"feeId"`
				AmountMinor int64  `json:"amountMinor"`
			} `json:"fee"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rep.body, &created))

	fee := s.do(t, http.MethodGet, "/api/fees/"+created.Data.Fee.FeeID, s.orchestrator, "", nil)
	require.Equal(t, http.StatusOK, fee.status, string(fee.body))
	var rec struct {
		Data map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal(fee.body, &rec))
	require.Equal(t, created.Data.ReservedCaseID, rec.Data["caseId"])
	require.Equal(t, created.Data.DraftID, rec.Data["draftId"])
	require.EqualValues(t, created.Data.Fee.AmountMinor, rec.Data["amountMinor"])
	require.Equal(t, "quoted", rec.Data["status"])
	require.NotEmpty(t, rec.Data["expiresAt"])

	otherTenant, _ := authtest.Mint(t, s.credentials, auth.RolePlatformOrchestrator, authtest.WithTenant("tenant-other"))
	require.Equal(t, http.StatusNotFound, s.do(t, http.MethodGet, "/api/fees/"+created.Data.Fee.FeeID, otherTenant, "", nil).status)
	require.Equal(t, http.StatusNotFound, s.do(t, http.MethodGet, "/api/fees/fee_nope", s.orchestrator, "", nil).status)

	q := s.do(t, http.MethodPost, "/api/v2/fees/quote", s.orchestrator, "", map[string]any{"amountInDisputeMinor": 125000, "remedy": "money_obligation", "intakeMode": "bilateral_api"})
	require.Equal(t, http.StatusOK, q.status, string(q.body))
	var quote struct {
		Data struct {
			AmountMinor int64 `json:"amountMinor"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(q.body, &quote))
	require.Equal(t, created.Data.Fee.AmountMinor, quote.Data.AmountMinor, "a quote and the draft from the same facts agree")

	bad := s.do(t, http.MethodPost, "/api/v2/fees/quote", s.orchestrator, "", map[string]any{"amountInDisputeMinor": -1, "remedy": "money_obligation", "intakeMode": "bilateral_api"})
	require.Equal(t, http.StatusBadRequest, bad.status)
	require.Equal(t, "invalid_draft", bad.code)
}
