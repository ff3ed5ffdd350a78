package evidenceflow_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/docstest"

	"github.com/pcourt/pcourt/services/cases/internal/evidence"
	"github.com/pcourt/pcourt/services/cases/internal/evidenceflow"
)

const evidencePage = "../../../../docs/evidence.md"

// docTable returns the rows of the table under header in its page.
func docTable(t *testing.T, header string) []string {
	t.Helper()
	return docstest.Table(t, evidencePage, header)
}

// docs/evidence.md's refusal table lists every refusal code of the
// evidence in the order Decide checks them, each with the status
// evidenceflow.Problem answers it with.
func TestTheRefusalsAreDocumentedInOrderWithTheirStatuses(t *testing.T) {
	var got []string
	for _, row := range docTable(t, "| # | code | HTTP | when |") {
		cells := strings.Split(row, " | ")
		require.GreaterOrEqual(t, len(cells), 3, row)
		got = append(got, strings.TrimPrefix(cells[0], "| ")+" "+cells[1]+" "+cells[2])
	}
	var want []string
	for n, code := range evidence.RefusalCodes {
		p := evidenceflow.Problem(&evidence.RefusalError{Code: code, Detail: "d"})
		require.NotNil(t, p, code)
		want = append(want, fmt.Sprintf("%d `%s` %d", n+1, code, p.Code.Status))
	}
	require.Equal(t, want, got)
}

// docs/evidence.md's event table is evidence.EventSpecs.
func TestTheEventTableIsDocumented(t *testing.T) {
	var want []string
	for _, e := range evidence.EventSpecs {
		want = append(want, fmt.Sprintf("| `%s` | %s | %t |", e.Type, e.When, e.ActionRequired))
	}
	require.Equal(t, want, docTable(t, "| type | when | actionRequired |"))
}

// docs/evidence.md's limits are evidence.LimitsByRules.
func TestTheLimitsAreDocumented(t *testing.T) {
	var versions []string
	for v := range evidence.LimitsByRules {
		versions = append(versions, v)
	}
	slices.Sort(versions)
	var want []string
	for _, v := range versions {
		l := evidence.LimitsByRules[v]
		want = append(want, fmt.Sprintf("| `%s` | %s | %s | %d | %d |", v, mib(t, l.MaxFileBytes), mib(t, l.MaxSideBytes), l.MaxSideFiles, l.MaxTextLength))
	}
	require.Equal(t, want, docTable(t, "| rules version | file | per side | files per side | text |"))
}

// mib writes a whole number of MiB as the page does.
func mib(t *testing.T, n int64) string {
	t.Helper()
	require.Zero(t, n%(1<<20), "%d is not a whole number of MiB", n)
	return fmt.Sprintf("%d MiB", n>>20)
}
