package tribunal_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/docstest"

	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

func docTable(t *testing.T, path, header string) []string {
	t.Helper()
	return docstest.Table(t, path, header)
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
