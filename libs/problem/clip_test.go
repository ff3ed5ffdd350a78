package problem_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/problem"
)

func TestClip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		cut  bool
	}{
		{"short", "/api/filings", false},
		{"exactly the limit", strings.Repeat("a", problem.EchoLimit), false},
		{"one over", strings.Repeat("a", problem.EchoLimit+1), true},
		{"900 KB path", "/" + strings.Repeat("p", 900<<10), true},
		{"multibyte at the cut", strings.Repeat("é", problem.EchoLimit), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := problem.Clip(tc.in)
			require.LessOrEqual(t, len(got), problem.EchoLimit)
			require.True(t, utf8.ValidString(got))
			if !tc.cut {
				require.Equal(t, tc.in, got)
				return
			}
			require.True(t, strings.HasSuffix(got, "…"))
			require.True(t, strings.HasPrefix(tc.in, strings.TrimSuffix(got, "…")))
		})
	}
}
