package tribunal_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// docTable returns the rows of the markdown table whose header line is
// header in the page at path: the lines after the header and its rule,
// up to the first line that is not a row.
func docTable(t *testing.T, path, header string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(string(raw), "\n")
	i := slices.Index(lines, header)
	require.GreaterOrEqual(t, i, 0, "%s has no table %q", path, header)
	var rows []string
	for _, line := range lines[i+2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		rows = append(rows, line)
	}
	return rows
}

const tribunalPage = "../../../../docs/tribunal.md"

// docs/tribunal.md's event table is tribunal.EventSpecs.
func TestTheEventTableIsDocumented(t *testing.T) {
	var want []string
	for _, e := range tribunal.EventSpecs {
		want = append(want, fmt.Sprintf("| `%s` | %s | %s | %t |", e.Type, e.When, e.Audience, e.ActionRequired))
	}
	require.Equal(t, want, docTable(t, tribunalPage, "| type | when | audience | actionRequired |"))
}

// docs/tribunal.md's windows are tribunal.WindowsByRules.
func TestTheWindowsAreDocumented(t *testing.T) {
	var versions []string
	for v := range tribunal.WindowsByRules {
		versions = append(versions, v)
	}
	slices.Sort(versions)
	var want []string
	for _, v := range versions {
		w := tribunal.WindowsByRules[v]
		want = append(want, fmt.Sprintf("| `%s` | %s | %s | %s | %s |", v,
			duration(w.ConfigurationChallenge), duration(w.PreAwardReview), duration(w.EvaluationAcceptance), duration(w.AssignmentRetry)))
	}
	require.Equal(t, want, docTable(t, tribunalPage, "| rules version | configuration challenge | pre-award review | evaluation acceptance | assignment retry |"))
}

// duration writes d as the docs do: whole days, hours or minutes.
func duration(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%d d", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	default:
		return fmt.Sprintf("%d min", d/time.Minute)
	}
}
