package afterawardflow_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/docstest"

	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
	"github.com/pcourt/pcourt/services/cases/internal/afterawardflow"
)

const page = "../../../../docs/after-award.md"

// docTable returns the rows of the table under header in its page.
func docTable(t *testing.T, header string) []string {
	t.Helper()
	return docstest.Table(t, page, header)
}

// docs/after-award.md's event table is afteraward.EventSpecs.
func TestTheEventTableIsDocumented(t *testing.T) {
	var want []string
	for _, e := range afteraward.EventSpecs {
		want = append(want, fmt.Sprintf("| `%s` | %s | %s | %t |", e.Type, e.When, e.Audience, e.ActionRequired))
	}
	require.Equal(t, want, docTable(t, "| type | when | to | actionRequired |"))
}

// docs/after-award.md's request windows are afteraward.WindowsByRules.
func TestTheWindowsAreDocumented(t *testing.T) {
	var want []string
	for v, w := range afteraward.WindowsByRules {
		want = append(want, fmt.Sprintf("| `%s` | %d days from the served award's issue |", v, w.Requests/(24*time.Hour)))
	}
	slices.Sort(want)
	require.Equal(t, want, docTable(t, "| rules version | request window |"))
}

// docs/after-award.md's appeal windows and fees are afteraward.WindowsByRules
// and afteraward.AppealFeesByRules.
func TestTheAppealTermsAreDocumented(t *testing.T) {
	var want []string
	for v, w := range afteraward.WindowsByRules {
		fee := afteraward.AppealFeesByRules[v]
		want = append(want, fmt.Sprintf("| `%s` | %d days from the served award's issue | %d days from filing | %d days from the briefing's opening | %d basis points of the amount claimed, at least %d minor units (USD) |",
			v, w.Appeals/(24*time.Hour), w.AppealFee/(24*time.Hour), w.AppealAnswer/(24*time.Hour), fee.PercentBasisPoints, fee.FloorMinor))
	}
	slices.Sort(want)
	require.Equal(t, want, docTable(t, "| rules version | appeal window | fee due | answer window | appeal fee |"))
}

// docs/after-award.md's modes are afteraward.Modes with their actions.
func TestTheModesAreDocumented(t *testing.T) {
	rows := docTable(t, "| mode | action | rail | how the money moves | on this deployment |")
	require.Len(t, rows, len(afteraward.Modes))
	for i, m := range afteraward.Modes {
		require.True(t, strings.HasPrefix(rows[i], fmt.Sprintf("| `%s` | `%s` |", m, afteraward.Action(m))), rows[i])
	}
}

// Every refusal has a status, and the problem codes name each once.
func TestEveryRefusalHasAProblem(t *testing.T) {
	for _, code := range afteraward.RefusalCodes {
		p := afterawardflow.Problem(&afteraward.RefusalError{Code: code, Detail: "d"})
		require.NotNil(t, p, code)
		require.NotZero(t, p.Code.Status, code)
	}
}
