package routing_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

// One path per meaning (RFC 3986 section 6.2.2): what the edge routes,
// announces, records and forwards is the same for every spelling of it.
func TestNormalizeDecodesUnreservedAndKeepsTheRest(t *testing.T) {
	tests := []struct {
		name, path, want string
	}{
		{"plain path unchanged", "/api/v2/cases/cs_1/docket", "/api/v2/cases/cs_1/docket"},
		{"encoded letter in a literal segment", "/api/v2/%63ases/cs_1", "/api/v2/cases/cs_1"},
		{"encoded letter in the last segment", "/api/v2/cases/cs_1/%64ocket", "/api/v2/cases/cs_1/docket"},
		{"lower-case hex", "/api/dis%70utes/d_1/m%65ssages", "/api/disputes/d_1/messages"},
		{"every unreserved class", "/api/%41%7A%30%2D%2E%5F%7E", "/api/Az0-._~"},
		{"encoded unreserved in a parameter", "/api/cases/cs%5F1", "/api/cases/cs_1"},
		{"a reserved character stays encoded, hex upper-cased", "/api/cases/cs%3a1", "/api/cases/cs%3A1"},
		{"a space stays encoded", "/api/cases/cs%201", "/api/cases/cs%201"},
		{"an encoded percent stays encoded (no double decoding)", "/api/cases/%252F", "/api/cases/%252F"},
		{"UTF-8 stays encoded", "/api/cases/%C3%A9", "/api/cases/%C3%A9"},
		{"a dot inside a segment is no dot segment", "/api/cases/cs.1/..x/%2E%2Ex", "/api/cases/cs.1/..x/..x"},
		{"empty segments are left to routing", "/api//cases", "/api//cases"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := routing.Normalize(tc.path)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			again, err := routing.Normalize(got)
			require.NoError(t, err)
			require.Equal(t, got, again, "normal already")
		})
	}
}

// What would read as another path to a server that decodes first, or
// resolves dot segments, is refused, never resolved.
func TestNormalizeRefusesAmbiguousPaths(t *testing.T) {
	tests := []struct {
		name, path string
		want       error
	}{
		{"encoded slash", "/api/v2/cases/cs_1%2Fdocket", routing.ErrEncodedSlash},
		{"encoded slash, lower case", "/api/v2/cases/cs_1%2fdocket", routing.ErrEncodedSlash},
		{"encoded backslash", "/api/v2/cases/cs_1%5Cdocket", routing.ErrEncodedBackslash},
		{"raw backslash", `/api/v2/cases/cs_1\docket`, routing.ErrEncodedBackslash},
		{"encoded NUL", "/api/cases/cs_1%00", routing.ErrEncodedNUL},
		{"encoded dot segment", "/api/v2/cases/%2E/cs_1", routing.ErrDotSegment},
		{"encoded dot-dot segment", "/api/v2/cases/%2e%2e/%2e%2e/disputes/d_1", routing.ErrDotSegment},
		{"half-encoded dot-dot", "/api/v2/cases/.%2E/x", routing.ErrDotSegment},
		{"plain dot-dot segment", "/api/v2/cases/../../api/disputes/d_1", routing.ErrDotSegment},
		{"plain dot segment at the end", "/api/cases/.", routing.ErrDotSegment},
		{"truncated escape", "/api/cases/cs_1%4", routing.ErrBadEncoding},
		{"not hex", "/api/cases/cs_1%zz", routing.ErrBadEncoding},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := routing.Normalize(tc.path)
			require.ErrorIs(t, err, tc.want)
			require.Empty(t, got)
		})
	}
}
