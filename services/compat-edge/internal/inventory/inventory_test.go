package inventory_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

func index(t *testing.T) *inventory.Index {
	t.Helper()
	idx, err := inventory.NewIndex(inventory.Routes)
	require.NoError(t, err)
	return idx
}

func TestLookup(t *testing.T) {
	idx := index(t)
	tests := []struct {
		name, method, path string
		pattern            string // "" when nothing matches
		successor          string // "" when none can be filled
	}{
		{"a case read", "GET", "/api/v2/cases/cs_1", "/api/v2/cases/{caseId}", "/api/cases/cs_1"},
		{"the website read", "GET", "/api/disputes/d_9", "/api/disputes/{id}", "/api/cases/d_9"},
		{"a literal before a parameter", "GET", "/api/v2/cases/cs_1/award/artifacts/json/attestation",
			"/api/v2/cases/{caseId}/award/artifacts/json/attestation", "/api/cases/cs_1/award/artifacts/json/attestation"},
		{"the parameter when the literal does not continue", "GET", "/api/v2/cases/cs_1/award/artifacts/pdf",
			"/api/v2/cases/{caseId}/award/artifacts/{kind}", "/api/cases/cs_1/award/artifacts/pdf"},
		{"two parameters", "POST", "/api/v2/cases/cs_1/termination-requests/tr_2/confirmations",
			"/api/v2/cases/{caseId}/termination-requests/{requestId}/confirmations", "/api/cases/cs_1/termination-requests/tr_2/confirmations"},
		{"the delivery id becomes id", "POST", "/api/v2/webhooks/deliveries/dl_3/replay",
			"/api/v2/webhooks/deliveries/{deliveryId}/replay", "/api/webhooks/deliveries/dl_3/replay"},
		{"the draft id becomes id", "GET", "/api/v2/case-drafts/dr_4", "/api/v2/case-drafts/{draftId}", "/api/filings/dr_4"},
		{"escaped segments stay escaped", "GET", "/api/v2/cases/cs%2F1", "/api/v2/cases/{caseId}", "/api/cases/cs%2F1"},
		{"the method chooses the row", "GET", "/api/v2/cases/cs_1/record-confirmations",
			"/api/v2/cases/{caseId}/record-confirmations", "/api/cases/cs_1/record-summary"},
		{"the method chooses the row (POST)", "POST", "/api/v2/cases/cs_1/record-confirmations",
			"/api/v2/cases/{caseId}/record-confirmations", "/api/cases/cs_1/record-summary/confirmations"},
		{"a successor the path cannot fill", "POST", "/api/disputes/d_1/appeal/answer", "/api/disputes/{id}/appeal/answer", ""},
		{"no successor", "POST", "/api/disputes/d_1/restatement", "/api/disputes/{id}/restatement", ""},
		{"a route without equivalent, any method", "PUT", "/api/v2/filings/dr_1/confirm", "/api/v2/filings/{draftId}/confirm", ""},
		{"an unsupported method", "DELETE", "/api/v2/cases/cs_1", "", ""},
		{"HEAD is not GET", "HEAD", "/api/v2/cases/cs_1", "", ""},
		{"a canonical route", "GET", "/api/cases/cs_1", "", ""},
		{"a trailing slash", "GET", "/api/v2/cases/cs_1/", "", ""},
		{"an empty parameter", "GET", "/api/v2/cases//answer", "", ""},
		{"a longer path", "GET", "/api/v2/cases/cs_1/participants/p_1", "", ""},
		{"a parameter past the bound", "GET", "/api/v2/cases/" + strings.Repeat("c", inventory.MaxParamBytes+1), "", ""},
		{"a parameter at the bound", "GET", "/api/v2/cases/" + strings.Repeat("c", inventory.MaxParamBytes),
			"/api/v2/cases/{caseId}", "/api/cases/" + strings.Repeat("c", inventory.MaxParamBytes)},
		{"not a path", "GET", "api/v2/cases/cs_1", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := idx.Lookup(tc.method, tc.path)
			if tc.pattern == "" {
				require.False(t, ok)
				return
			}
			require.True(t, ok)
			require.Equal(t, tc.pattern, m.Route.Pattern)
			require.True(t, m.Route.Listed(tc.method))
			s, ok := m.Successor()
			require.Equal(t, tc.successor != "", ok)
			require.Equal(t, tc.successor, s)
		})
	}
}

// Every row is found by its own pattern, for each of its methods, with the
// parameters in the order of the pattern.
func TestEveryRowIsFound(t *testing.T) {
	idx := index(t)
	for _, r := range inventory.Routes {
		methods := r.Methods
		if len(methods) == 0 {
			methods = []string{"GET", "POST", "OPTIONS"}
		}
		for _, method := range methods {
			m, ok := idx.Lookup(method, r.Pattern)
			require.True(t, ok, "%s %s", method, r.Pattern)
			require.Equal(t, r.Pattern, m.Route.Pattern)
			require.Equal(t, r.Methods, m.Route.Methods)
			if r.Eligible {
				s, ok := m.Successor()
				require.True(t, ok)
				require.Equal(t, r.Successor, strings.NewReplacer(
					"{caseId}", "{id}", "{draftId}", "{id}", "{deliveryId}", "{id}").Replace(s),
					"filled with its own names, the successor is the canonical pattern: %s", r.Pattern)
			}
		}
	}
}

func TestNewIndexRefusesBadRows(t *testing.T) {
	for name, rows := range map[string][]inventory.Route{
		"not under /api":    {{Pattern: "/v2/cases", Family: inventory.V2Cases, Owner: routing.Cases}},
		"a trailing slash":  {{Pattern: "/api/v2/cases/", Family: inventory.V2Cases, Owner: routing.Cases}},
		"an unknown family": {{Pattern: "/api/v2/cases", Family: "v3", Owner: routing.Cases}},
		"eligible without a fillable successor": {{Pattern: "/api/v2/fees/processor/checkout", Methods: []string{"POST"},
			Family: inventory.V2Filings, Successor: "/api/fees/{feeId}/checkout", Eligible: true, Owner: routing.Filings}},
		"a since that is no day": {{Pattern: "/api/v2/cases/{caseId}/timeline", Methods: []string{"GET"},
			Family: inventory.V2Cases, Successor: "/api/cases/{id}/events", Eligible: true, Owner: routing.Cases, Since: "2026-02-30"}},
		"a since not in YYYY-MM-DD": {{Pattern: "/api/v2/cases/{caseId}/timeline", Methods: []string{"GET"},
			Family: inventory.V2Cases, Successor: "/api/cases/{id}/events", Eligible: true, Owner: routing.Cases, Since: "2026-5-1"}},
		"one method twice": {
			{Pattern: "/api/v2/cases/{caseId}", Methods: []string{"GET"}, Family: inventory.V2Cases, Owner: routing.Cases},
			{Pattern: "/api/v2/cases/{id}", Methods: []string{"GET", "POST"}, Family: inventory.V2Cases, Owner: routing.Cases},
		},
		"any method beside a method": {
			{Pattern: "/api/v2/cases/{caseId}", Methods: []string{"GET"}, Family: inventory.V2Cases, Owner: routing.Cases},
			{Pattern: "/api/v2/cases/{caseId}", Family: inventory.V2Cases, Owner: routing.Cases},
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := inventory.NewIndex(rows)
			require.Error(t, err)
		})
	}
}
