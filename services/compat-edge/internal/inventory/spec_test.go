package inventory_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

// specLists is the spec's "Route inventory" table and its "Existing routes
// with no canonical equivalent" paragraph, copied verbatim: the spec lives
// outside the repository, so the copy is what CI can always read, and
// TestSpecListsAreCopiedVerbatim keeps it honest where the spec is at hand.
const specLists = "testdata/spec-route-inventory.md"

// expected is what the spec says of one earlier path: for each method (""
// for any), the canonical successor ("" for none) and whether the edge may
// announce it on its own.
type expected struct {
	pattern string
	rows    map[string]want
}

type want struct {
	successor string
	eligible  bool
}

// spelledOut names the paths the spec describes in words.
var spelledOut = map[string]string{
	"/api/disputes settlement executions": "/api/disputes/{id}/settlement-executions",
}

var (
	parenthetical = regexp.MustCompile(`\s*\(([^)]*)\)`)
	methodWord    = regexp.MustCompile(`^(GET|POST|PATCH|PUT|DELETE)$`)
	splitAsAbove  = regexp.MustCompile(`^([A-Z]+) split as above$`)
	pathParam     = regexp.MustCompile(`\{[A-Za-z]+\}`)
)

// parseSpec reads both lists into one expectation per earlier path.
func parseSpec(t *testing.T, text string) map[string]*expected {
	t.Helper()
	out := map[string]*expected{}
	add := func(pattern, method string, w want) {
		e := out[pattern]
		if e == nil {
			e = &expected{pattern: pattern, rows: map[string]want{}}
			out[pattern] = e
		}
		_, dup := e.rows[method]
		require.False(t, dup, "the spec lists %s %s twice", method, pattern)
		e.rows[method] = w
	}
	var table, none int
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "| Existing") || strings.HasPrefix(line, "|---"):
		case strings.HasPrefix(line, "| "):
			cells := strings.Split(strings.Trim(line, "| "), " | ")
			require.Len(t, cells, 2, line)
			parts := parseCanonical(t, cells[1])
			for _, item := range strings.Split(cells[0], "; ") {
				item = strings.TrimSpace(parenthetical.ReplaceAllString(item, ""))
				if p, ok := spelledOut[item]; ok {
					item = p
				}
				only := ""
				if m, rest, ok := strings.Cut(item, " "); ok && methodWord.MatchString(m) {
					only, item = m, rest
				}
				require.True(t, strings.HasPrefix(item, "/api/"), "an earlier path: %q", item)
				for _, p := range parts {
					if only != "" && p.method != only {
						continue
					}
					add(item, p.method, want{p.successor, p.successor != "" && !p.noAnnouncement && fillable(item, p.successor)})
				}
				table++
			}
		case strings.HasPrefix(line, "Existing routes with no canonical equivalent"):
			list, _, _ := strings.Cut(line, ". Automatic retirement")
			for _, item := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(list, -1) {
				if strings.HasSuffix(item[1], "/") {
					continue // the prefix of the words that follow it
				}
				add(item[1], "", want{})
				none++
			}
			words := regexp.MustCompile("`/api/disputes/\\{id\\}/` followed by ([^;]*);").FindStringSubmatch(list)
			require.NotNil(t, words, "the website routes without equivalent")
			for _, w := range strings.Split(words[1], ", ") {
				add("/api/disputes/{id}/"+w, "", want{})
				none++
			}
		}
	}
	require.Greater(t, table, 40, "the inventory table was read")
	require.Greater(t, none, 50, "the list of routes without equivalent was read")
	return out
}

type canonicalPart struct {
	method         string // "" for any
	successor      string
	noAnnouncement bool
}

// parseCanonical reads a Canonical cell: "GET and POST /p", "GET, POST,
// PATCH /p", "POST /a; GET /b", "amend with PATCH /p", "/p (alias kept) and
// /q" (no method: any), with notes in parentheses.
func parseCanonical(t *testing.T, cell string) []canonicalPart {
	t.Helper()
	var out []canonicalPart
	// Notes in parentheses (which may hold "; " themselves) speak of the
	// whole cell.
	var notes []string
	for _, m := range parenthetical.FindAllStringSubmatch(cell, -1) {
		notes = append(notes, m[1])
	}
	cell = parenthetical.ReplaceAllString(cell, "")
	noAnnouncement := false
	for _, n := range notes {
		switch {
		case n == "no automatic announcement":
			noAnnouncement = true
		case n == "alias kept":
			noAnnouncement = true // the alias is kept as it is: no window
		case splitAsAbove.MatchString(n):
			out = append(out, canonicalPart{method: splitAsAbove.FindStringSubmatch(n)[1]})
		}
	}
	for _, part := range strings.Split(cell, "; ") {
		var methods []string
		path := ""
		for _, word := range strings.Fields(part) {
			word = strings.TrimSuffix(word, ",")
			if strings.HasPrefix(word, "/") {
				path = word
				break
			}
			if methodWord.MatchString(word) {
				methods = append(methods, word)
			}
		}
		require.NotEmpty(t, path, "a canonical path in %q", cell)
		if len(methods) == 0 {
			methods = []string{""}
		}
		for _, m := range methods {
			out = append(out, canonicalPart{method: m, successor: path, noAnnouncement: noAnnouncement})
		}
	}
	return out
}

// fillable says the successor's parameters all come from the earlier path:
// {id} from its first parameter, any other from one of the same name. The
// spec gives no automatic announcement where the path alone cannot choose
// the successor.
func fillable(earlier, successor string) bool {
	have := pathParam.FindAllString(earlier, -1)
	for _, p := range pathParam.FindAllString(successor, -1) {
		if p == "{id}" && len(have) > 0 {
			continue
		}
		found := false
		for _, h := range have {
			found = found || h == p
		}
		if !found {
			return false
		}
	}
	return true
}

func readSpecLists(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(specLists)
	require.NoError(t, err)
	return string(b)
}

// Every earlier path of the spec's two lists is in the table with the
// methods, successor and eligibility the spec gives it, and the table has
// no row the spec does not list.
func TestTableMatchesTheSpecRowByRow(t *testing.T) {
	spec := parseSpec(t, readSpecLists(t))
	got := map[string]map[string]want{}
	for _, r := range inventory.Routes {
		if got[r.Pattern] == nil {
			got[r.Pattern] = map[string]want{}
		}
		methods := r.Methods
		if len(methods) == 0 {
			methods = []string{""}
		}
		for _, m := range methods {
			got[r.Pattern][m] = want{r.Successor, r.Eligible}
		}
	}
	var patterns []string
	for p := range spec {
		patterns = append(patterns, p)
	}
	sort.Strings(patterns)
	for _, p := range patterns {
		t.Run(p, func(t *testing.T) {
			require.Contains(t, got, p, "the spec lists %s; the table does not", p)
			require.Equal(t, spec[p].rows, got[p], "methods, successors and eligibility of %s", p)
		})
	}
	for p := range got {
		require.Contains(t, spec, p, "the table lists %s, which the spec does not", p)
	}
}

// The spec's named exclusions are not announced, whatever else the table
// says of them.
func TestNamedExclusionsAreNotEligible(t *testing.T) {
	for _, tc := range []struct{ method, path string }{
		{"POST", "/api/disputes/{id}/restatement"},
		{"POST", "/api/v2/fees/processor/checkout"},
		{"GET", "/api/v2/cases/{caseId}/settlement-executions"},
		{"POST", "/api/v2/cases/{caseId}/settlement-executions"},
		{"POST", "/api/disputes/{id}/settlement-executions"},
		{"POST", "/api/v2/filings/prepare"},
		{"POST", "/api/v2/filings/{draftId}/confirm"},
		{"GET", "/api/disputes"},
	} {
		found := false
		for _, r := range inventory.Routes {
			if r.Pattern == tc.path && r.Listed(tc.method) {
				found = true
				require.False(t, r.Eligible, "%s %s", tc.method, tc.path)
			}
		}
		require.True(t, found, "%s %s is listed", tc.method, tc.path)
	}
}

// Families follow one rule (see inventory.Family), and each row's owner is
// the service the routing table sends its path to.
func TestFamilyAndOwnerOfEveryRow(t *testing.T) {
	table := routing.NewTable(routing.Families)
	for _, r := range inventory.Routes {
		path := pathParam.ReplaceAllString(r.Pattern, "x_1")
		owner, ok := table.Owner(path)
		require.True(t, ok, r.Pattern)
		require.Equal(t, owner, r.Owner, "owner of %s", r.Pattern)
		var family inventory.Family
		switch {
		case strings.HasPrefix(r.Pattern, "/api/disputes"):
			family = inventory.WebsiteCases
		case owner == routing.Filings:
			family = inventory.V2Filings
		default:
			family = inventory.V2Cases
		}
		require.Equal(t, family, r.Family, "family of %s", r.Pattern)
		if !r.Eligible && r.Successor != "" {
			require.NotEmpty(t, r.Why, "a row with a successor that is not announced says why: %s", r.Pattern)
		}
	}
}

// The copy in testdata is the spec's text, wherever the spec is at hand
// (beside the checkout, as shared/spec/service-spec.md in a parent folder).
func TestSpecListsAreCopiedVerbatim(t *testing.T) {
	dir, err := os.Getwd()
	require.NoError(t, err)
	var spec string
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "shared", "spec", "service-spec.md")
		if _, err := os.Stat(p); err == nil {
			spec = p
			break
		}
		if filepath.Dir(d) == d {
			t.Skip("no shared/spec/service-spec.md above this checkout; the testdata copy stands in for it")
		}
	}
	b, err := os.ReadFile(spec)
	require.NoError(t, err)
	text := string(b)
	start := strings.Index(text, "### Route inventory (existing route to canonical replacement)")
	require.GreaterOrEqual(t, start, 0, "the spec still has its route inventory")
	rest := text[start:]
	if end := strings.Index(rest[3:], "\n#"); end >= 0 {
		rest = rest[:end+3]
	}
	require.Equal(t, strings.TrimRight(rest, "\n"), strings.TrimRight(readSpecLists(t), "\n"),
		"testdata/spec-route-inventory.md must be the spec's lists verbatim: copy them again")
}
