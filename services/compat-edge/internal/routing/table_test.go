package routing_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

// Every route the spec names, earlier and canonical, and the platform's
// own beside them (the console's pages and links, the accounts service's
// API, people's account pages and the authorization server), reaches the service that owns its
// resource.
func TestEverySpecRouteHasItsOwner(t *testing.T) {
	table := routing.NewTable(routing.Families)
	tests := map[string]routing.Owner{
		"/api/x402/dispute-readiness": routing.Readiness,

		"/api/filings":                                        routing.Filings,
		"/api/filings/fl_1/confirmations":                     routing.Filings,
		"/api/fees/fee_1":                                     routing.Filings,
		"/api/fees/fee_1/checkout":                            routing.Filings,
		"/api/authorizations/authority-grants":                routing.Filings,
		"/api/authorizations/consents":                        routing.Filings,
		"/api/v2/case-drafts":                                 routing.Filings,
		"/api/v2/case-drafts/dr_1":                            routing.Filings,
		"/api/v2/case-drafts/dr_1/confirmations":              routing.Filings,
		"/api/v2/filings/prepare":                             routing.Filings,
		"/api/v2/filings/dr_1/confirm":                        routing.Filings,
		"/api/v2/fees/quote":                                  routing.Filings,
		"/api/v2/fees/processor/checkout":                     routing.Filings,
		"/api/v2/fee-referrals":                               routing.Filings,
		"/api/v2/sponsorship-referrals":                       routing.Filings,
		"/api/v2/authorizations/authority-grants":             routing.Filings,
		"/api/v2/authorizations/consents":                     routing.Filings,
		"/api/v2/integration":                                 routing.Filings,
		"/api/cases/cs_1":                                     routing.Cases,
		"/api/cases/cs_1/executions":                          routing.Cases,
		"/api/cases/cs_1/award":                               routing.Cases,
		"/api/cases/cs_1/award/artifacts/pdf":                 routing.Cases,
		"/api/cases/cs_1/award/artifacts/json/attestation":    routing.Cases,
		"/api/cases/cs_1/evaluation/accept":                   routing.Cases,
		"/api/cases/cs_1/ai-configuration-challenges":         routing.Cases,
		"/api/awards/keys":                                    routing.Cases,
		"/api/executions/ex_1":                                routing.Cases,
		"/api/rules/current":                                  routing.Cases,
		"/api/disputes":                                       routing.Cases,
		"/api/disputes/d_1/answer":                            routing.Cases,
		"/api/disputes/d_1/review-package":                    routing.Cases,
		"/api/disputes/d_1/runs":                              routing.Cases,
		"/api/disputes/d_1/adjudicate":                        routing.Cases,
		"/api/disputes/d_1/synthesize-opinion":                routing.Cases,
		"/api/disputes/d_1/human-attention/resume":            routing.Cases,
		"/api/disputes/d_1/reviewer-opinion":                  routing.Cases,
		"/api/disputes/d_1/reviewer-opinion/file":             routing.Cases,
		"/api/disputes/d_1/reviewer-objection":                routing.Cases,
		"/api/disputes/d_1/override":                          routing.Cases,
		"/api/disputes/d_1/reviewer-attestation":              routing.Cases,
		"/api/disputes/d_1/pre-award-review":                  routing.Cases,
		"/api/disputes/d_1/signoff":                           routing.Cases,
		"/api/disputes/d_1/recusal":                           routing.Cases,
		"/api/disputes/d_1/procedural-rulings":                routing.Cases,
		"/api/disputes/d_1/ai-configuration-challenges":       routing.Cases,
		"/api/disputes/d_1/decision":                          routing.Cases,
		"/api/partner-cases/cs_1/respondent":                  routing.Cases,
		"/api/v2/cases/cs_1/award/artifacts/json/attestation": routing.Cases,
		"/api/v2/cases/cs_1/award":                            routing.Cases,
		"/api/v2/cases/cs_1/award/artifacts/html":             routing.Cases,
		"/api/v2/cases/cs_1/evaluation":                       routing.Cases,
		"/api/v2/cases/cs_1/evaluation/accept":                routing.Cases,
		"/api/v2/cases/cs_1/decision-status":                  routing.Cases,
		"/api/v2/rules/current":                               routing.Cases,
		"/api/v2/ap2/resolution-requests":                     routing.Filings,
		"/api/v2/ucp/resolution-requests":                     routing.Filings,
		"/api/v2/ap2/resolution-results/cs_1":                 routing.Cases,
		"/api/v2/ucp/resolution-results/cs_1":                 routing.Cases,
		"/api/v2/evidence-exports/notifications":              routing.Cases,
		"/api/v2/evidence-exports/receipts/ev_1":              routing.Cases,
		"/respond/cs_1":                                       routing.Cases,
		"/api/webhooks/deliveries":                            routing.Webhooks,
		"/api/webhooks/deliveries/dl_1/replay":                routing.Webhooks,
		"/api/webhooks/endpoints":                             routing.Webhooks,
		"/api/webhooks/keys":                                  routing.Webhooks,
		"/api/v2/webhooks/deliveries/dl_1/replay":             routing.Webhooks,
		"/api/v2/webhooks/endpoints":                          routing.Webhooks,
		"/api/console/links":                                  routing.Console,
		"/api/console/links/cl_1":                             routing.Console,
		"/console":                                            routing.Console,
		"/console/":                                           routing.Console,
		"/console/deliveries/dl_1/replay":                     routing.Console,
		"/console/static/console.js":                          routing.Console,
		"/api/accounts":                                       routing.Accounts,
		"/api/accounts/acct_1/attestation":                    routing.Accounts,
		"/api/accounts/acct_1/clients/ocl_1":                  routing.Accounts,
		"/account":                                            routing.Accounts,
		"/account/":                                           routing.Accounts,
		"/account/signup/options":                             routing.Accounts,
		"/account/signin/code/verify":                         routing.Accounts,
		"/account/static/account.js":                          routing.Accounts,
		"/oauth/token":                                        routing.Accounts,
		"/oauth/revoke":                                       routing.Accounts,
		"/oauth/introspect":                                   routing.Accounts,
		"/oauth/authorize":                                    routing.Accounts,
		"/oauth/register":                                     routing.Accounts,
		"/account/consent":                                    routing.Accounts,
		"/.well-known/oauth-authorization-server":             routing.Accounts,
		"/mcp": routing.MCP,
		"/.well-known/oauth-protected-resource/mcp": routing.MCP,
	}
	for path, want := range tests {
		got, ok := table.Owner(path)
		require.True(t, ok, path)
		require.Equal(t, want, got, path)
	}
}

func TestUnknownPathsHaveNoOwner(t *testing.T) {
	table := routing.NewTable(routing.Families)
	for _, path := range []string{"/", "/api", "/api/filingsx", "/api/v2", "/api/v3/cases/1", "/apix/cases", "/api/awardsx/keys", "/api/x402x/dispute-readiness", "/consolex", "/api/consolex/links", "/api/accountsx", "/accounts", "/accountx/signin", "/oauthx/token", "/.well-known/oauth-authorization-serverx", "/.well-known/oauth-protected-resource", "/.well-known", "/mcpx", "/.well-known/oauth-protected-resource/mcpx"} {
		_, ok := table.Owner(path)
		require.False(t, ok, path)
	}
}
