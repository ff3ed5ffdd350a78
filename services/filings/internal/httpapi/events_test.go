package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/filings/internal/events"
)

// caseOpenedFacts reads every case-opened fact in the outbox, by case id.
func caseOpenedFacts(t *testing.T, s *stack) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, stream := range s.drafts.Sharding().Streams() {
		entries, err := s.rdb.XRange(context.Background(), stream, "-", "+").Result()
		require.NoError(t, err)
		for _, e := range entries {
			require.Equal(t, events.CaseOpenedTopic, e.Values["topic"])
			require.Equal(t, events.CaseOpenedSchema, e.Values["schema"])
			var head struct {
				CaseID string `json:"caseId"`
			}
			payload := []byte(e.Values["payload"].(string))
			require.NoError(t, json.Unmarshal(payload, &head))
			out[head.CaseID] = payload
		}
	}
	return out
}

// Every way a case opens (the last confirmation, a bundled consent, a paid
// fee) publishes one case-opened fact that matches its published schema
// and names who takes part, through which partner, and whom to tell.
func TestCaseOpenedFactsMatchTheirSchema(t *testing.T) {
	s := newStack(t)

	confirmed := s.prepare(t, twoParty())
	require.Equal(t, http.StatusAccepted, s.do(t, http.MethodPost, "/api/v2/case-drafts/"+confirmed.DraftID+"/confirmations", s.orchestrator, newKey(), confirmation(confirmed, "p-claimant", s.orchID, "org-acme")).status)
	respondent := respondentAgent(t, s, confirmed.DraftID)
	require.Equal(t, http.StatusCreated, s.do(t, http.MethodPost, "/api/v2/case-drafts/"+confirmed.DraftID+"/confirmations", respondent, newKey(), confirmation(confirmed, "p-respondent", "agent-bob-7", "agent-bob")).status)

	consented := s.prepare(t, bundledAcrossPartners())
	require.Equal(t, http.StatusAccepted, s.do(t, http.MethodPost, "/api/v2/case-drafts/"+consented.DraftID+"/confirmations", s.orchestrator, newKey(), confirmation(consented, "p-claimant", s.orchID, "org-acme")).status)
	partnerBOrch, _ := authtest.Mint(t, s.credentials, auth.RolePlatformOrchestrator, authtest.WithPartner(partnerB))
	consent := map[string]any{"draftId": consented.DraftID, "participantId": "p-respondent", "draftDigest": consented.DraftDigest, "consentReference": "signed-terms-2026-11-22"}
	require.Equal(t, http.StatusCreated, s.do(t, http.MethodPost, "/api/v2/authorizations/consents", partnerBOrch, newKey(), consent).status)

	paid := readyToOpen(t, s)
	offer := s.checkout(t, paid.FeeID)
	require.Equal(t, http.StatusCreated, s.do(t, http.MethodPost, "/api/fees/"+paid.FeeID+"/x402", s.orchestrator, "", nil, x402.HeaderPaymentSignature, s.payment(t, offer)).status)

	facts := caseOpenedFacts(t, s)
	require.Len(t, facts, 3, "one fact per opened case")
	for _, payload := range facts {
		apitest.Event(t, "filings-case-opened-v2.schema.json", payload)
		require.NotContains(t, string(payload), `"showOnce"`)
		require.NotContains(t, string(payload), "pc_login_", "secrets travel only as hashes")
	}

	var viaConsent events.CaseOpened
	require.NoError(t, json.Unmarshal(facts[consented.ReservedCaseID], &viaConsent))
	require.Equal(t, []events.Partner{{Tenant: viaConsent.Tenant, Environment: viaConsent.Environment, PartnerID: partnerB}}, viaConsent.Recipients.Respondent,
		"the respondent's partner is told, not the preparer")
	require.Equal(t, "partner-test", viaConsent.Recipients.Claimant[0].PartnerID)
	for _, p := range viaConsent.Participants {
		require.True(t, p.Joined, "%s consented or confirmed, so takes part from the opening", p.ParticipantID)
	}
	require.Empty(t, viaConsent.CapabilityHashes, "the respondent's partner opened it: no secret of the claimant's side, and its own respondent has joined")

	var viaFee events.CaseOpened
	require.NoError(t, json.Unmarshal(facts[paid.ReservedCaseID], &viaFee))
	require.Equal(t, "paid", viaFee.Fee.Status)
	require.Equal(t, "collect_before_opening", viaFee.Fee.Collection)
}

// The memberships held on a draft carry over to the case it opens: the
// respondent agent that confirmed acts on the case without a new grant.
func TestDraftMembershipsCarryOverToTheCase(t *testing.T) {
	s := newStack(t)
	d := s.prepare(t, twoParty())
	require.Equal(t, http.StatusAccepted, s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", s.orchestrator, newKey(), confirmation(d, "p-claimant", s.orchID, "org-acme")).status)
	respondent := respondentAgent(t, s, d.DraftID)
	require.Equal(t, http.StatusCreated, s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", respondent, newKey(), confirmation(d, "p-respondent", "agent-bob-7", "agent-bob")).status)

	onDraft, err := s.credentials.Memberships(context.Background(), "draft:"+d.DraftID)
	require.NoError(t, err)
	onCase, err := s.credentials.Memberships(context.Background(), "case:"+d.ReservedCaseID)
	require.NoError(t, err)
	require.NotEmpty(t, onDraft)
	sides := func(ms []auth.Membership) map[auth.Subject]auth.Side {
		out := map[auth.Subject]auth.Side{}
		for _, m := range ms {
			out[m.Subject] = m.Side
		}
		return out
	}
	require.Equal(t, sides(onDraft), sides(onCase))
}
