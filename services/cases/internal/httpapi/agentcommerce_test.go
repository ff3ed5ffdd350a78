package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fromAP2 makes the case-opened fact one of a case opened from an AP2
// resolution request: the origin filings carries over from the draft.
func fromAP2(payload map[string]any) {
	payload["origin"] = map[string]any{
		"protocol": "ap2", "reference": "NivWhuqfzcvZNapvIEJ2-3tsdQLkiuIcye2g46WVgX8", "reason": "non_delivery",
		"merchant": "merchant_1", "paidMinor": 42000, "currency": "USD",
		"evidence": []map[string]any{
			{"kind": "payment_mandate", "mediaType": "application/sd-jwt", "digest": strings.Repeat("a", 64)},
			{"kind": "checkout_mandate", "mediaType": "application/sd-jwt", "digest": strings.Repeat("b", 64)},
		},
	}
}

type resolutionData struct {
	Protocol    string `json:"protocol"`
	Status      string `json:"status"`
	Resolved    bool   `json:"resolved"`
	Transaction struct {
		Reference string `json:"reference"`
	} `json:"transaction"`
	Award *struct {
		AwardHash   string `json:"awardHash"`
		Outcome     string `json:"outcome"`
		RefundMinor int64  `json:"refundMinor"`
	} `json:"award"`
	AP2 *struct {
		TransactionID        string `json:"transaction_id"`
		PaymentMandateDigest string `json:"payment_mandate_digest"`
		Decision             string `json:"decision"`
		RefundAmount         *struct {
			Amount   int64  `json:"amount"`
			Currency string `json:"currency"`
		} `json:"refund_amount"`
	} `json:"ap2"`
	UCP   *struct{} `json:"ucp"`
	Links map[string]string
}

// A case opened from an AP2 resolution request answers its outcome in
// AP2's terms: pending until the award, then the refund the award orders
// against the payment mandate, with the awardHash. Only its sides see it;
// the UCP route and a case from the filing routes have no such result.
func TestAnAP2CaseAnswersItsResolutionInAP2Terms(t *testing.T) {
	s := newStack(t)
	c := s.open(t, quickProceeding, fromAP2)
	results := "/api/v2/ap2/resolution-results/" + c.id

	rep := s.do(t, http.MethodGet, results, s.claimant, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	res := data[resolutionData](t, rep)
	require.Equal(t, "ap2", res.Protocol)
	require.Equal(t, "awaiting_respondent", res.Status)
	require.False(t, res.Resolved, "before the award nothing is resolved")
	require.Nil(t, res.Award)
	require.Equal(t, "pending", res.AP2.Decision)
	require.Nil(t, res.AP2.RefundAmount)
	require.Equal(t, "NivWhuqfzcvZNapvIEJ2-3tsdQLkiuIcye2g46WVgX8", res.AP2.TransactionID)
	require.Equal(t, strings.Repeat("a", 64), res.AP2.PaymentMandateDigest)

	// Refusals: another partner, another tenant, the other protocol's
	// route, a case from the filing routes.
	plain := s.open(t, quickProceeding)
	for _, tc := range []struct {
		name, path, token, code string
	}{
		{"a partner with no side in the case", results, s.stranger, "case_not_found_or_opening"},
		{"another tenant", results, s.otherTenant, "case_not_found_or_opening"},
		{"the UCP route for an AP2 case", "/api/v2/ucp/resolution-results/" + c.id, s.claimant, "resolution_not_found"},
		{"a case that did not come from AP2", "/api/v2/ap2/resolution-results/" + plain.id, s.claimant, "resolution_not_found"},
	} {
		rep := s.do(t, http.MethodGet, tc.path, tc.token, "", nil)
		require.Equal(t, http.StatusNotFound, rep.status, "%s: %s", tc.name, rep.body)
		require.Equal(t, tc.code, rep.code, tc.name)
	}

	hash := s.awardTheClaim(t, c.id)

	for _, token := range []string{s.claimant, s.respondent} {
		rep = s.do(t, http.MethodGet, results, token, "", nil)
		require.Equal(t, http.StatusOK, rep.status, string(rep.body))
		res = data[resolutionData](t, rep)
		require.True(t, res.Resolved)
		require.Equal(t, "awarded", res.Status)
		require.Equal(t, hash, res.Award.AwardHash)
		require.Equal(t, "claim_upheld", res.Award.Outcome)
		require.Equal(t, int64(42000), res.Award.RefundMinor)
		require.Equal(t, "refund", res.AP2.Decision)
		require.Equal(t, int64(42000), res.AP2.RefundAmount.Amount)
		require.Equal(t, "USD", res.AP2.RefundAmount.Currency)
		require.Equal(t, "/api/cases/"+c.id+"/award/artifacts/json", res.Links["awardJson"])
	}
}

// A UCP case's awarded refund is an order adjustment of type refund with a
// negative total, against the order id.
func TestAUCPCaseAnswersItsResolutionAsAnOrderAdjustment(t *testing.T) {
	s := newStack(t)
	c := s.open(t, quickProceeding, func(payload map[string]any) {
		payload["origin"] = map[string]any{
			"protocol": "ucp", "reference": "order_123", "reason": "not_as_described", "merchant": "shop.example",
			"paidMinor": 42000, "currency": "USD",
			"evidence": []map[string]any{{"kind": "order", "mediaType": "application/json", "digest": strings.Repeat("c", 64)}},
		}
	})
	results := "/api/v2/ucp/resolution-results/" + c.id
	type ucpData struct {
		UCP struct {
			OrderID    string `json:"order_id"`
			Adjustment *struct {
				Type   string `json:"type"`
				Status string `json:"status"`
				Totals []struct {
					Type   string `json:"type"`
					Amount int64  `json:"amount"`
				} `json:"totals"`
			} `json:"adjustment"`
		} `json:"ucp"`
	}
	rep := s.do(t, http.MethodGet, results, s.claimant, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	before := data[ucpData](t, rep)
	require.Equal(t, "order_123", before.UCP.OrderID)
	require.Nil(t, before.UCP.Adjustment, "no adjustment before the award")
	rep = s.do(t, http.MethodGet, "/api/v2/ap2/resolution-results/"+c.id, s.claimant, "", nil)
	require.Equal(t, "resolution_not_found", rep.code)

	hash := s.awardTheClaim(t, c.id)
	after := data[ucpData](t, s.do(t, http.MethodGet, results, s.respondent, "", nil))
	require.NotNil(t, after.UCP.Adjustment)
	require.Equal(t, "refund", after.UCP.Adjustment.Type)
	require.Equal(t, "pending", after.UCP.Adjustment.Status, "ordered, not yet executed")
	require.Equal(t, int64(-42000), after.UCP.Adjustment.Totals[0].Amount)

	// The award becomes final and its refund is executed over x402r: the
	// adjustment is completed.
	s.final(t, opened{id: c.id})
	rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/executions", s.claimant, newKey(), refundCommand(hash))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	done := data[ucpData](t, s.do(t, http.MethodGet, results, s.claimant, "", nil))
	require.Equal(t, "completed", done.UCP.Adjustment.Status)
}

// awardTheClaim walks case id (a quickProceeding) from its opening to an
// award that upholds the claim in full, and returns its awardHash.
func (s *stack) awardTheClaim(t *testing.T, id string) string {
	t.Helper()
	base := "/api/cases/" + id
	for _, st := range []struct {
		path, token string
		body        any
	}{
		{"/api/partner-cases/" + id + "/respondent", s.respondent, nil},
		{base + "/answer", s.respondent, map[string]any{"text": "Denied: the parcel was delivered."}},
		{base + "/submissions", s.claimant, map[string]any{"text": "The carrier's tracking shows the parcel returned to sender."}},
		{base + "/submissions", s.respondent, map[string]any{"text": "Dispatch note 4471."}},
		{base + "/record-summary/confirmations", s.claimant, nil},
		{base + "/record-summary/confirmations", s.respondent, nil},
	} {
		rep := s.do(t, http.MethodPost, st.path, st.token, newKey(), st.body)
		require.Less(t, rep.status, 300, "%s: %s", st.path, rep.body)
	}
	_, err := s.scheduler.RunOnce(context.Background())
	require.NoError(t, err)
	w := "/api/disputes/" + id + "/"
	rep := s.do(t, http.MethodGet, w+"review-package", s.adjudicator, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	pkg := data[reviewPackageData](t, rep)
	item := pkg.Record.Items[1]
	proposal := map[string]any{
		"outcome":   "claim_upheld",
		"remedies":  []map[string]any{{"kind": "payment", "payer": "respondent", "payee": "claimant", "amountMinor": 42000, "currency": "USD", "dueBy": time.Now().UTC().Add(14 * 24 * time.Hour).Format("2006-01-02T15:04:05.000Z")}},
		"reasons":   "The tracking shows the parcel never arrived.",
		"citations": []map[string]any{{"itemId": item.ItemID, "digest": item.Digest}},
	}
	rep = s.do(t, http.MethodPost, w+"synthesize-opinion", s.adjudicator, newKey(), map[string]any{"runId": pkg.Run.RunID, "inputDigest": pkg.Record.Digest, "proposal": proposal})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	for _, step := range []struct {
		path, token string
		body        any
	}{
		{"reviewer-opinion", s.reviewer, map[string]any{"opinion": "agree"}},
		{"reviewer-attestation", s.reviewer, map[string]any{"reviewedRecord": true, "noConflict": true}},
		{"pre-award-review", s.reviewer, nil},
		{"pre-award-review", s.claimant, map[string]any{"clericalErrors": []string{}}},
		{"pre-award-review", s.respondent, map[string]any{"clericalErrors": []string{}}},
		{"signoff", s.reviewer, nil},
	} {
		rep := s.do(t, http.MethodPost, w+step.path, step.token, newKey(), step.body)
		require.Equal(t, http.StatusOK, rep.status, "%s: %s", step.path, rep.body)
	}
	st := data[decisionData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+id+"/decision-status", s.claimant, "", nil))
	require.Equal(t, "awarded", st.Decision)
	return st.AwardHash
}
