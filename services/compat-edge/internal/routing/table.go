// Package routing decides which service owns a public path. The table is
// data: one row per path family, matched by whole path segments, longest
// prefix first, so "/api/filings" never captures "/api/filingsx".
package routing

import (
	"sort"
	"strings"
)

// Owner is a service behind the edge.
type Owner string

// The services the edge routes to.
const (
	Readiness Owner = "readiness"
	Filings   Owner = "filings"
	Cases     Owner = "cases"
	Webhooks  Owner = "webhooks"
	Console   Owner = "console"
	Accounts  Owner = "accounts"
	MCP       Owner = "mcp"
)

// Owners lists every owner, for configuration checks.
var Owners = []Owner{Readiness, Filings, Cases, Webhooks, Console, Accounts, MCP}

// Family is one row of the table: every path at or below Prefix belongs to Owner.
type Family struct {
	Prefix string
	Owner  Owner
}

// Families is the routing table for every path family of the spec: the
// canonical routes, the partner /api/v2 routes and the website /api/disputes
// routes; the hosted pages: the respondent's (/respond) and the partner
// console's (/console, with its links API); and the accounts service's
// (docs/accounts.md), which are the platform's, not the spec's: the
// agent accounts API (/api/accounts), people's sign-up, sign-in and
// account pages (/account) and the OAuth 2.1 authorization
// server (/oauth/ and its RFC 8414 metadata, which lives at the root's
// /.well-known/ because the issuer is the public URL itself); and the MCP
// server's (docs/mcp.md): its streamable HTTP endpoint /mcp and its
// protected resource metadata, RFC 9728's well-known path with /mcp
// appended (the API's own, the bare well-known path, the edge serves).
var Families = []Family{
	{"/api/x402", Readiness},

	{"/api/filings", Filings},
	{"/api/fees", Filings},
	{"/api/authorizations", Filings},
	{"/api/v2/case-drafts", Filings},
	{"/api/v2/filings", Filings},
	{"/api/v2/fees", Filings},
	{"/api/v2/fee-referrals", Filings},
	{"/api/v2/sponsorship-referrals", Filings},
	{"/api/v2/authorizations", Filings},
	{"/api/v2/integration", Filings},
	// An agent-commerce resolution request prepares a draft; its results
	// are the case's (/api/v2/ap2 and /api/v2/ucp below).
	{"/api/v2/ap2/resolution-requests", Filings},
	{"/api/v2/ucp/resolution-requests", Filings},

	{"/api/cases", Cases},
	{"/api/awards", Cases},
	{"/api/executions", Cases},
	{"/api/rules", Cases},
	{"/api/disputes", Cases},
	{"/api/partner-cases", Cases},
	{"/api/v2/cases", Cases},
	{"/api/v2/rules", Cases},
	{"/api/v2/ap2", Cases},
	{"/api/v2/ucp", Cases},
	{"/api/v2/evidence-exports", Cases},
	{"/respond", Cases},

	{"/api/webhooks", Webhooks},
	{"/api/v2/webhooks", Webhooks},

	{"/api/console", Console},
	{"/console", Console},

	{"/api/accounts", Accounts},
	{"/account", Accounts},
	{"/oauth", Accounts},
	{"/.well-known/oauth-authorization-server", Accounts},

	{"/mcp", MCP},
	{"/.well-known/oauth-protected-resource/mcp", MCP},
}

// Table resolves paths to owners.
type Table struct {
	families []Family // longest prefix first
}

// NewTable returns a table over families.
func NewTable(families []Family) *Table {
	sorted := append([]Family(nil), families...)
	sort.SliceStable(sorted, func(i, j int) bool { return len(sorted[i].Prefix) > len(sorted[j].Prefix) })
	return &Table{families: sorted}
}

// Owner returns the service that owns path, or false when no family matches.
func (t *Table) Owner(path string) (Owner, bool) {
	for _, f := range t.families {
		if path == f.Prefix || strings.HasPrefix(path, f.Prefix+"/") {
			return f.Owner, true
		}
	}
	return "", false
}
