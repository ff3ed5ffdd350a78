// Package inventory is the spec's route inventory as data: every earlier
// route the edge still serves, the canonical route that replaces it (if
// any), the compatibility family whose window governs it, whether the edge
// may announce its retirement on its own, and the service that owns it.
//
// One table, read by the edge's policy, by the migration guide it serves and
// by the tests that hold it to the spec's lists row by row.
package inventory

import (
	"fmt"
	"strings"
	"time"

	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

// Family is a compatibility family: the aliases whose window shares one
// general availability date.
type Family string

// The spec's three families. The rule that puts an alias in one: website
// routes (/api/disputes/…) are website-cases; partner /api/v2 routes owned
// by filings (drafts, the prepare/confirm pair, fees, referrals,
// authorizations, integration, and the AP2 and UCP resolution requests,
// which prepare drafts) are v2-filings; every other partner route
// (/api/v2/cases, rules, webhooks, the AP2 and UCP resolution results,
// evidence exports, and /api/partner-cases) is v2-cases.
const (
	V2Filings    Family = "v2-filings"
	V2Cases      Family = "v2-cases"
	WebsiteCases Family = "website-cases"
)

// Families lists every family, in the order the docs show them.
var Families = []Family{V2Filings, V2Cases, WebsiteCases}

// GuidePath is where the edge serves the migration guide: every
// announcement links to it, and every milestone notice.
const GuidePath = "/docs/migration"

// Valid reports whether f is one of the three families.
func (f Family) Valid() bool { return f == V2Filings || f == V2Cases || f == WebsiteCases }

// Route is one row: an earlier route, for the listed methods.
type Route struct {
	// Pattern is the earlier path with {name} for each path parameter.
	Pattern string
	// Methods the row covers; empty means every method (rows that never
	// announce, so no method needs telling apart).
	Methods []string
	Family  Family
	// Successor is the canonical path that replaces the route, with the
	// canonical parameter names; empty when the route has no canonical
	// equivalent or its successor depends on the body.
	Successor string
	// Eligible says the edge may announce the route's retirement on its
	// own: only when the successor is chosen from the path alone and the
	// spec starts a window for it.
	Eligible bool
	Owner    routing.Owner
	// Why explains a row that is not eligible although it has a successor.
	Why string
	// Since is the day (YYYY-MM-DD, UTC) the route joined its family, when
	// that was after the family's general availability: the route's window
	// then starts on that day, not at GA, so a capability added later gets
	// a whole window of its own instead of inheriting what has elapsed of
	// its family's. "" (every row so far) means since the family's GA.
	Since string
}

// Listed reports whether the row covers method.
func (r *Route) Listed(method string) bool {
	if len(r.Methods) == 0 {
		return true
	}
	for _, m := range r.Methods {
		if m == method {
			return true
		}
	}
	return false
}

// Reasons a row with a canonical successor is not eligible.
const (
	whyBodyAction   = "the successor depends on the body's action: a correction goes to POST /api/cases/{id}/record-summary/corrections, an exact-digest confirmation to POST /api/cases/{id}/record-summary/confirmations"
	whyFeeID        = "the successor needs the fee id, which is in the body, not the path"
	whyAppealID     = "the successor needs the appeal id, which the path does not carry (read GET /api/cases/{id}/appeals first)"
	whySubmissionID = "the successor needs the submission id, which the path does not carry"
	whyExecutions   = "the /settlement-executions alias keeps its historical input and response; no window starts for it"
)

// No canonical equivalent (spec: "Existing routes with no canonical
// equivalent"); the prepare/confirm pair is among them: drafts prepared
// there finish there.
const whyNone = ""

var (
	get       = []string{"GET"}
	post      = []string{"POST"}
	patch     = []string{"PATCH"}
	getPost   = []string{"GET", "POST"}
	messaging = []string{"GET", "POST", "PATCH"}
	grants    = []string{"GET", "POST", "DELETE"}
)

// Routes is the inventory. The first part is the spec's "Route inventory
// (existing route to canonical replacement)", one row per earlier path and
// method set; the second its "Existing routes with no canonical
// equivalent". The columns are Route's fields in order; the last, Since,
// is "" for every route present at its family's general availability.
var Routes = []Route{
	{"/api/disputes/{id}", get, WebsiteCases, "/api/cases/{id}", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}", get, V2Cases, "/api/cases/{id}", true, routing.Cases, "", ""},
	{"/api/disputes/{id}/ai-configuration-challenges", post, WebsiteCases, "/api/cases/{id}/ai-configuration-challenges", true, routing.Cases, "", ""},
	{"/api/disputes/{id}/answer", post, WebsiteCases, "/api/cases/{id}/answer", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/answer", post, V2Cases, "/api/cases/{id}/answer", true, routing.Cases, "", ""},
	{"/api/disputes/{id}/appeal", getPost, WebsiteCases, "/api/cases/{id}/appeals", true, routing.Cases, "", ""},
	{"/api/disputes/{id}/appeal/answer", post, WebsiteCases, "/api/cases/{id}/appeals/{appealId}/answers", false, routing.Cases, whyAppealID, ""},
	{"/api/disputes/{id}/decision", get, WebsiteCases, "/api/cases/{id}/award", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/award", get, V2Cases, "/api/cases/{id}/award", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/award/artifacts/json/attestation", get, V2Cases, "/api/cases/{id}/award/artifacts/json/attestation", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/award/artifacts/{kind}", get, V2Cases, "/api/cases/{id}/award/artifacts/{kind}", true, routing.Cases, "", ""},
	{"/api/disputes/{id}/evidence-processing", get, WebsiteCases, "/api/cases/{id}/evidence-processing", true, routing.Cases, "", ""},
	{"/api/disputes/{id}/evidence-processing/{sourceId}/defects", post, WebsiteCases, "/api/cases/{id}/evidence-processing/{sourceId}/defects", true, routing.Cases, "", ""},
	{"/api/disputes/{id}/evidence/{evidenceId}/challenge", getPost, WebsiteCases, "/api/cases/{id}/evidence/{evidenceId}/authenticity-challenges", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/evidence/{evidenceId}/authenticity-challenges", getPost, V2Cases, "/api/cases/{id}/evidence/{evidenceId}/authenticity-challenges", true, routing.Cases, "", ""},
	{"/api/disputes/{id}/invite", post, WebsiteCases, "/api/cases/{id}/invitations", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/respondent-handoff", post, V2Cases, "/api/cases/{id}/invitations", true, routing.Cases, "", ""},
	{"/api/disputes/{id}/messages", messaging, WebsiteCases, "/api/cases/{id}/messages", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/messages", messaging, V2Cases, "/api/cases/{id}/messages", true, routing.Cases, "", ""},
	{"/api/disputes/{id}/post-award-request", post, WebsiteCases, "/api/cases/{id}/post-award-requests", true, routing.Cases, "", ""},
	{"/api/disputes/{id}/record-bundle", get, WebsiteCases, "/api/cases/{id}/record-bundle", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/record-bundle", get, V2Cases, "/api/cases/{id}/record-bundle", true, routing.Cases, "", ""},
	{"/api/disputes/{id}/representatives", messaging, WebsiteCases, "/api/cases/{id}/representatives", true, routing.Cases, "", ""},
	{"/api/disputes/{id}/restatement", get, WebsiteCases, "/api/cases/{id}/record-summary", true, routing.Cases, "", ""},
	{"/api/disputes/{id}/restatement", post, WebsiteCases, "", false, routing.Cases, whyBodyAction, ""},
	{"/api/disputes/{id}/submissions", getPost, WebsiteCases, "/api/cases/{id}/submissions", true, routing.Cases, "", ""},
	{"/api/disputes/{id}/submissions", patch, WebsiteCases, "/api/cases/{id}/submissions/{submissionId}", false, routing.Cases, whySubmissionID, ""},
	{"/api/v2/cases/{caseId}/submissions", getPost, V2Cases, "/api/cases/{id}/submissions", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/submissions", patch, V2Cases, "/api/cases/{id}/submissions/{submissionId}", false, routing.Cases, whySubmissionID, ""},
	{"/api/v2/authorizations/authority-grants", grants, V2Filings, "/api/authorizations/authority-grants", true, routing.Filings, "", ""},
	{"/api/v2/authorizations/consents", post, V2Filings, "/api/authorizations/consents", true, routing.Filings, "", ""},
	{"/api/v2/case-drafts", post, V2Filings, "/api/filings", true, routing.Filings, "", ""},
	{"/api/v2/case-drafts/{draftId}", get, V2Filings, "/api/filings/{id}", true, routing.Filings, "", ""},
	{"/api/v2/case-drafts/{draftId}/confirmations", post, V2Filings, "/api/filings/{id}/confirmations", true, routing.Filings, "", ""},
	{"/api/v2/cases/{caseId}/docket", get, V2Cases, "/api/cases/{id}/events", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/evaluation", get, V2Cases, "/api/cases/{id}/evaluation", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/evaluation/accept", post, V2Cases, "/api/cases/{id}/evaluation/accept", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/evidence-candidates", get, V2Cases, "/api/cases/{id}/evidence", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/participants", get, V2Cases, "/api/cases/{id}/participants", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/record-confirmations", post, V2Cases, "/api/cases/{id}/record-summary/confirmations", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/record-confirmations", get, V2Cases, "/api/cases/{id}/record-summary", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/settlement-binding", getPost, V2Cases, "/api/cases/{id}/settlement-binding", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/settlement-executions", nil, V2Cases, "/api/cases/{id}/settlement-executions", false, routing.Cases, whyExecutions, ""},
	// The spec names the website one only as "/api/disputes settlement
	// executions"; the website's routes hang off the dispute id.
	{"/api/disputes/{id}/settlement-executions", nil, WebsiteCases, "/api/cases/{id}/settlement-executions", false, routing.Cases, whyExecutions, ""},
	{"/api/v2/cases/{caseId}/termination-requests", post, V2Cases, "/api/cases/{id}/termination-requests", true, routing.Cases, "", ""},
	{"/api/v2/cases/{caseId}/termination-requests/{requestId}/confirmations", post, V2Cases, "/api/cases/{id}/termination-requests/{requestId}/confirmations", true, routing.Cases, "", ""},
	{"/api/v2/rules/current", get, V2Cases, "/api/rules/current", true, routing.Cases, "", ""},
	{"/api/v2/webhooks/deliveries", get, V2Cases, "/api/webhooks/deliveries", true, routing.Webhooks, "", ""},
	{"/api/v2/webhooks/deliveries/{deliveryId}", get, V2Cases, "/api/webhooks/deliveries/{id}", true, routing.Webhooks, "", ""},
	{"/api/v2/webhooks/deliveries/{deliveryId}/replay", post, V2Cases, "/api/webhooks/deliveries/{id}/replay", true, routing.Webhooks, "", ""},
	{"/api/v2/webhooks/endpoints", getPost, V2Cases, "/api/webhooks/endpoints", true, routing.Webhooks, "", ""},
	{"/api/v2/fees/processor/checkout", post, V2Filings, "/api/fees/{feeId}/checkout", false, routing.Filings, whyFeeID, ""},

	// Existing routes with no canonical equivalent: they stay on their
	// URLs, never announced.
	{"/api/disputes", nil, WebsiteCases, "", false, routing.Cases, whyNone, ""},
	website("additional-award"),
	website("adjudicate"),
	website("appeal/close-briefing"),
	website("appeal/confirm-fee"),
	website("appeal/decide"),
	website("audit"),
	website("consent"),
	website("correct"),
	website("docket"),
	website("evidence-processing/{sourceId}/defects/{reportId}/resolve"),
	website("evidence/file"),
	website("evidence/{evidenceId}/challenge/resolve"),
	website("exchange"),
	website("funding"),
	website("human-attention/resume"),
	website("join"),
	website("override"),
	website("pre-award-review"),
	website("procedural-rulings"),
	website("publication-consent"),
	website("recusal"),
	website("refiling"),
	website("release"),
	website("reopen"),
	website("restatement/generate"),
	website("review-package"),
	website("reviewer-attestation"),
	website("reviewer-objection"),
	website("reviewer-opinion"),
	website("reviewer-opinion/file"),
	website("rules"),
	website("runs"),
	website("sanctions"),
	website("service"),
	website("settle"),
	website("signoff"),
	website("synthesize-opinion"),
	website("termination"),
	website("testimony-session"),
	{"/api/partner-cases/{caseId}/respondent", nil, V2Cases, "", false, routing.Cases, whyNone, ""},
	{"/api/v2/ap2/resolution-requests", nil, V2Filings, "", false, routing.Filings, whyNone, ""},
	{"/api/v2/ap2/resolution-results/{caseId}", nil, V2Cases, "", false, routing.Cases, whyNone, ""},
	{"/api/v2/ucp/resolution-requests", nil, V2Filings, "", false, routing.Filings, whyNone, ""},
	{"/api/v2/ucp/resolution-results/{caseId}", nil, V2Cases, "", false, routing.Cases, whyNone, ""},
	{"/api/v2/cases/{caseId}/decision-status", nil, V2Cases, "", false, routing.Cases, whyNone, ""},
	{"/api/v2/cases/{caseId}/restatement", nil, V2Cases, "", false, routing.Cases, whyNone, ""},
	{"/api/v2/evidence-exports/notifications", nil, V2Cases, "", false, routing.Cases, whyNone, ""},
	{"/api/v2/evidence-exports/receipts/{eventId}", nil, V2Cases, "", false, routing.Cases, whyNone, ""},
	{"/api/v2/fee-referrals", nil, V2Filings, "", false, routing.Filings, whyNone, ""},
	{"/api/v2/fees/quote", nil, V2Filings, "", false, routing.Filings, whyNone, ""},
	{"/api/v2/filings/prepare", nil, V2Filings, "", false, routing.Filings, whyNone, ""},
	{"/api/v2/filings/{draftId}/confirm", nil, V2Filings, "", false, routing.Filings, whyNone, ""},
	{"/api/v2/integration", nil, V2Filings, "", false, routing.Filings, whyNone, ""},
	{"/api/v2/sponsorship-referrals", nil, V2Filings, "", false, routing.Filings, whyNone, ""},
}

func website(suffix string) Route {
	return Route{"/api/disputes/{id}/" + suffix, nil, WebsiteCases, "", false, routing.Cases, whyNone, ""}
}

// MaxParamBytes bounds a path parameter the inventory matches. The
// platform's ids are far shorter; a longer segment is no id of a listed
// resource (its owner answers 404), and bounding it keeps the successor
// Link, which repeats it, well inside the 4 KiB header budget.
const MaxParamBytes = 200

// Match is a request path matched to a row's pattern.
type Match struct {
	Route *Route
	// params are the raw (still escaped) path segments, in pattern order.
	params []string
}

// Successor returns the canonical path with the request's parameters filled
// in, or false when the row has no successor or the path does not carry
// one of its parameters. The canonical {id} takes the earlier route's
// first parameter ({id}, {caseId}, {draftId}, {deliveryId}); any other
// takes the parameter of the same name.
func (m Match) Successor() (string, bool) {
	if m.Route == nil || m.Route.Successor == "" {
		return "", false
	}
	names := paramNames(m.Route.Pattern)
	var b strings.Builder
	for _, seg := range strings.Split(m.Route.Successor, "/")[1:] {
		b.WriteByte('/')
		name, ok := paramName(seg)
		if !ok {
			b.WriteString(seg)
			continue
		}
		i := -1
		if name == "id" && len(names) > 0 {
			i = 0
		} else {
			for j, n := range names {
				if n == name {
					i = j
				}
			}
		}
		if i < 0 {
			return "", false
		}
		b.WriteString(m.params[i])
	}
	return b.String(), true
}

// Index finds the row of a request path.
type Index struct {
	root *node
}

type node struct {
	literal map[string]*node
	param   *node
	routes  []*Route // at the pattern's end: one per method set
}

// NewIndex returns an index over routes. It fails on a row that cannot be
// matched (a malformed pattern, an unknown family), on a since-date that
// is not a YYYY-MM-DD day, and on two rows that
// claim the same pattern and method.
func NewIndex(routes []Route) (*Index, error) {
	idx := &Index{root: &node{}}
	for i := range routes {
		r := &routes[i]
		if !strings.HasPrefix(r.Pattern, "/api/") || strings.HasSuffix(r.Pattern, "/") {
			return nil, fmt.Errorf("inventory: pattern %q must start with /api/ and not end with /", r.Pattern)
		}
		if !r.Family.Valid() {
			return nil, fmt.Errorf("inventory: %s: unknown family %q", r.Pattern, r.Family)
		}
		if r.Since != "" {
			if d, err := time.Parse(time.DateOnly, r.Since); err != nil || d.Format(time.DateOnly) != r.Since {
				return nil, fmt.Errorf("inventory: %s: since %q is not a YYYY-MM-DD day", r.Pattern, r.Since)
			}
		}
		if r.Eligible {
			if _, ok := (Match{Route: r, params: paramNames(r.Pattern)}).Successor(); !ok {
				return nil, fmt.Errorf("inventory: %s is eligible but its successor %q cannot be filled from its path", r.Pattern, r.Successor)
			}
		}
		n := idx.root
		for _, seg := range strings.Split(r.Pattern, "/")[1:] {
			if _, ok := paramName(seg); ok {
				if n.param == nil {
					n.param = &node{}
				}
				n = n.param
				continue
			}
			if n.literal == nil {
				n.literal = map[string]*node{}
			}
			if n.literal[seg] == nil {
				n.literal[seg] = &node{}
			}
			n = n.literal[seg]
		}
		for _, other := range n.routes {
			if overlaps(other, r) {
				return nil, fmt.Errorf("inventory: %s is listed twice for one method", r.Pattern)
			}
		}
		n.routes = append(n.routes, r)
	}
	return idx, nil
}

func overlaps(a, b *Route) bool {
	if len(a.Methods) == 0 || len(b.Methods) == 0 {
		return true
	}
	for _, m := range a.Methods {
		if b.Listed(m) {
			return true
		}
	}
	return false
}

// Lookup returns the row of rawPath (the escaped path, as sent) for method.
// A listed path with a method no row covers is not a match: unsupported
// methods announce nothing.
func (idx *Index) Lookup(method, rawPath string) (Match, bool) {
	if !strings.HasPrefix(rawPath, "/") {
		return Match{}, false
	}
	segs := strings.Split(rawPath[1:], "/")
	var params [8]string
	n, np := idx.root.find(segs, params[:0])
	if n == nil {
		return Match{}, false
	}
	for _, r := range n.routes {
		if r.Listed(method) {
			return Match{Route: r, params: append([]string(nil), np...)}, true
		}
	}
	return Match{}, false
}

// find walks segs, a literal segment before a parameter, so
// …/award/artifacts/json/attestation is not taken for …/artifacts/{kind}.
func (n *node) find(segs []string, params []string) (*node, []string) {
	if len(segs) == 0 {
		if len(n.routes) == 0 {
			return nil, nil
		}
		return n, params
	}
	seg := segs[0]
	if next, ok := n.literal[seg]; ok {
		if found, p := next.find(segs[1:], params); found != nil {
			return found, p
		}
	}
	if n.param != nil && seg != "" && len(seg) <= MaxParamBytes {
		if found, p := n.param.find(segs[1:], append(params, seg)); found != nil {
			return found, p
		}
	}
	return nil, nil
}

func paramName(seg string) (string, bool) {
	if len(seg) > 2 && seg[0] == '{' && seg[len(seg)-1] == '}' {
		return seg[1 : len(seg)-1], true
	}
	return "", false
}

func paramNames(pattern string) []string {
	var names []string
	for _, seg := range strings.Split(pattern, "/") {
		if name, ok := paramName(seg); ok {
			names = append(names, name)
		}
	}
	return names
}
