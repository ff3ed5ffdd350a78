package api_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/pcourt/pcourt/api"
)

type operation struct {
	Security    []map[string][]string     `json:"security"`
	Parameters  []map[string]any          `json:"parameters"`
	RequestBody map[string]any            `json:"requestBody"`
	Responses   map[string]map[string]any `json:"responses"`
}

// Every operation lists the statuses the platform's layers can answer it
// with, so a client can rely on the document for its error handling: a
// body is decoded strictly under a size limit and a media type (400, 413,
// 415), except a form of the OAuth endpoints, which zitadel/oidc parses
// whatever its media type and refuses, oversize included, as RFC 6749's
// invalid_request (400); a credential is checked (401, 503); an
// Idempotency-Key is checked and journalled in Redis (400, 409, 422, 503);
// a resource named in the path may not exist (404).
func TestEveryOperationListsTheStatusesItsLayersAnswer(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]operation `json:"paths"`
	}
	require.NoError(t, yaml.Unmarshal(api.YAML, &doc))
	var missing []string
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if method == "parameters" {
				continue
			}
			var want []string
			switch {
			case op.RequestBody == nil:
			case formOnly(op.RequestBody):
				want = append(want, "400")
			default:
				want = append(want, "400", "413", "415")
			}
			if len(op.Security) > 0 {
				want = append(want, "401", "503")
			}
			for _, p := range op.Parameters {
				ref, _ := p["$ref"].(string)
				if strings.HasPrefix(ref, "#/components/parameters/IdempotencyKey") {
					want = append(want, "400", "409", "422", "503")
				}
				if p["in"] == "path" {
					want = append(want, "404")
				}
			}
			for _, status := range want {
				if _, ok := op.Responses[status]; !ok {
					missing = append(missing, fmt.Sprintf("%s %s: %s", strings.ToUpper(method), path, status))
				}
			}
		}
	}
	sort.Strings(missing)
	missing = compact(missing)
	require.Empty(t, missing, "statuses the operation can answer but does not list:\n%s", strings.Join(missing, "\n"))
}

// formOnly reports whether a request body is an OAuth endpoint's form
// and nothing else.
func formOnly(body map[string]any) bool {
	content, _ := body["content"].(map[string]any)
	_, form := content["application/x-www-form-urlencoded"]
	return form && len(content) == 1
}

func compact(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
