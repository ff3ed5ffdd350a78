package proxy_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/legacyuse"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
)

// A percent-encoded spelling of an earlier route is that route: the same
// announcement, the same ledger entry, and the owner receives the normal
// path, the one the edge decided on.
func TestEncodedSpellingsOfAnAliasAreTheAlias(t *testing.T) {
	own := countingOwners(t)
	e := newCompatEdge(t, own.urls, nil, nil)
	e.setPolicy(policy.Resolve(envWithDates("true"), nil))
	e.setNow(moments["inside the window"])
	tests := []struct {
		name, method, sent, normal, route, successor string
	}{
		{"encoded letter in a literal segment", "GET", "/api/v2/%63ases/cs_1", "/api/v2/cases/cs_1", "/api/v2/cases/{caseId}", "/api/cases/cs_1"},
		{"encoded last segment", "GET", "/api/v2/cases/cs_1/%64ocket", "/api/v2/cases/cs_1/docket", "/api/v2/cases/{caseId}/docket", "/api/cases/cs_1/events"},
		{"lower-case hex, website family", "GET", "/api/dis%70utes/d_1", "/api/disputes/d_1", "/api/disputes/{id}", "/api/cases/d_1"},
		{"a mutation", "POST", "/api/dis%70utes/d_1/m%65ssages", "/api/disputes/d_1/messages", "/api/disputes/{id}/messages", "/api/cases/d_1/messages"},
		{"an encoded unreserved parameter", "GET", "/api/v2/cases/cs%5F1", "/api/v2/cases/cs_1", "/api/v2/cases/{caseId}", "/api/cases/cs_1"},
		{"a reserved character stays encoded, upper-cased", "GET", "/api/v2/cases/cs%3a1", "/api/v2/cases/cs%3A1", "/api/v2/cases/{caseId}", "/api/cases/cs%3A1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plain, _ := send(t, tc.method, e.url+tc.normal)
			hits := len(e.recorded())
			resp, body := send(t, tc.method, e.url+tc.sent)
			require.Equal(t, http.StatusOK, resp.StatusCode, string(body))

			var got map[string]string
			require.NoError(t, json.Unmarshal(body, &got))
			require.Equal(t, tc.normal, got["path"], "the owner receives the normal path")
			for _, h := range []string{"Deprecation", "Sunset"} {
				require.NotEmpty(t, resp.Header.Get(h), h)
				require.Equal(t, plain.Header.Values(h), resp.Header.Values(h), h)
			}
			require.Equal(t, plain.Header.Values("Link"), resp.Header.Values("Link"))
			require.Equal(t, tc.successor, linksByRel(t, resp.Header)["successor-version"])
			require.Equal(t, []legacyuse.Hit{{Route: tc.route, At: moments["inside the window"], RequestID: resp.Header.Get("X-Request-Id")}}, e.recorded()[hits:])
		})
	}
}

// A retired family's encoded spelling is retired too: 410, the owner never
// called, nothing recorded.
func TestEncodedSpellingsOfARetiredAliasAre410(t *testing.T) {
	own := countingOwners(t)
	e := newCompatEdge(t, own.urls, nil, nil)
	e.setPolicy(policy.Resolve(envWithDates("true"), map[inventory.Family]policy.Settings{inventory.WebsiteCases: {Stage: policy.Retired}}))
	e.setNow(moments["after the window"])
	for _, tc := range []struct{ method, sent, successor string }{
		{"GET", "/api/dis%70utes/d_1", "/api/cases/d_1"},
		{"POST", "/api/dis%70utes/d_1/messages", "/api/cases/d_1/messages"},
		{"POST", "/api/%64isputes/d_1/%6D%65%73%73%61%67%65%73", "/api/cases/d_1/messages"},
	} {
		t.Run(tc.method+" "+tc.sent, func(t *testing.T) {
			before, hits := own.count.Load(), len(e.recorded())
			resp, body := send(t, tc.method, e.url+tc.sent, "Authorization", "Bearer pc_sbx_whoever")
			require410(t, resp, body, tc.method, tc.successor)
			require.Equal(t, before, own.count.Load(), "the owner received nothing")
			require.Len(t, e.recorded(), hits, "a 410 is not legacy use")
		})
	}
}

// A path with two readings is refused before anything reads it: 400
// invalid_path, no owner called, nothing announced or recorded.
func TestAmbiguousPathsAreRefused(t *testing.T) {
	own := countingOwners(t)
	e := newCompatEdge(t, own.urls, nil, nil)
	e.setPolicy(policy.Resolve(envWithDates("true"), nil))
	e.setNow(moments["inside the window"])
	for name, path := range map[string]string{
		"encoded slash":                  "/api/v2/cases/cs_1%2Fdocket",
		"encoded slash, lower case":      "/api/v2/cases/cs_1%2fdocket",
		"encoded slash in the family":    "/api/v2%2Fcases/cs_1",
		"encoded backslash":              "/api/v2/cases/cs_1%5Cdocket",
		"encoded NUL":                    "/api/cases/cs_1%00",
		"encoded dot-dot segments":       "/api/v2/cases/%2E%2E/%2e%2e/disputes/d_1",
		"half-encoded dot-dot":           "/api/v2/cases/cs_1/.%2E/docket",
		"plain dot-dot segments":         "/api/v2/cases/../../api/disputes/d_1",
		"encoded dot segment":            "/api/v2/cases/%2E/cs_1",
		"outside /api: refused the same": "/respond/cs_1%2F..%2Fx",
	} {
		t.Run(name, func(t *testing.T) {
			for _, method := range []string{"GET", "POST"} {
				before, hits := own.count.Load(), len(e.recorded())
				resp, body := send(t, method, e.url+path)
				require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(body))
				require.Equal(t, problem.ContentType, resp.Header.Get("Content-Type"))
				var p problem.Body
				require.NoError(t, json.Unmarshal(body, &p))
				require.Equal(t, "invalid_path", p.Code)
				require.Equal(t, "https://pcourt.dev/problems/invalid_path", p.Type)
				require.Equal(t, resp.Header.Get("X-Request-Id"), p.RequestID)
				require.NotEmpty(t, p.Detail)
				require.Empty(t, resp.Header.Values("Deprecation"))
				require.Empty(t, resp.Header.Values("Link"), "no successor is built from it")
				require.Equal(t, before, own.count.Load(), "the owner received nothing")
				require.Len(t, e.recorded(), hits, "nothing recorded")
			}
		})
	}
}
