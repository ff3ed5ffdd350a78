package apitest

import (
	"net/http"
	"sort"
	"strings"
	"testing"
)

// Operation is one operation of the OpenAPI document, with the security
// requirements it lists: what a test driven by the document (the account
// credentials matrices of cases and filings) walks, so that an operation
// added to the document cannot be missed.
type Operation struct {
	Method string
	// Path is the document's template, /api/cases/{id}/….
	Path string
	// Security is each scheme the operation lists, with its scopes.
	Security map[string][]string
	// Raw is the operation's object; Item its path item's (whose
	// parameters every operation of the path shares).
	Raw, Item map[string]any
}

func (o Operation) String() string { return o.Method + " " + o.Path }

// Scope is the one scope the operation's entry for scheme names, and
// whether it lists scheme. An entry naming no scope, or several, fails
// the test: every account operation names exactly the one it needs.
func (o Operation) Scope(tb testing.TB, scheme string) (string, bool) {
	tb.Helper()
	scopes, listed := o.Security[scheme]
	if !listed {
		return "", false
	}
	if len(scopes) != 1 {
		tb.Fatalf("%s: its %s entry names %d scopes, not one", o, scheme, len(scopes))
	}
	return scopes[0], true
}

// Operations lists every operation of the document, in path and method
// order.
func Operations(tb testing.TB) []Operation {
	tb.Helper()
	d, err := load()
	if err != nil {
		tb.Fatalf("reading the OpenAPI document: %v", err)
	}
	paths, _ := d.root["paths"].(map[string]any)
	var out []Operation
	for path, v := range paths {
		item, _ := v.(map[string]any)
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			raw, ok := item[strings.ToLower(method)].(map[string]any)
			if !ok {
				continue
			}
			op := Operation{Method: method, Path: path, Security: map[string][]string{}, Raw: raw, Item: item}
			requirements, _ := raw["security"].([]any)
			for _, req := range requirements {
				schemes, _ := req.(map[string]any)
				for scheme, scopes := range schemes {
					list, _ := scopes.([]any)
					names := []string{}
					for _, s := range list {
						if name, ok := s.(string); ok {
							names = append(names, name)
						}
					}
					op.Security[scheme] = names
				}
			}
			out = append(out, op)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return out
}
