package settlement_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/docstest"

	"github.com/pcourt/pcourt/services/cases/internal/settlement"
)

const page = "../../../../docs/settlement.md"

// docTable returns the rows of the table under header in its page.
func docTable(t *testing.T, header string) []string {
	t.Helper()
	return docstest.Table(t, page, header)
}

// docs/settlement.md's event table is settlement.EventSpecs.
func TestTheEventTableIsDocumented(t *testing.T) {
	var want []string
	for _, e := range settlement.EventSpecs {
		want = append(want, fmt.Sprintf("| `%s` | %s | %s | %t |", e.Type, e.When, e.Audience, e.ActionRequired))
	}
	require.Equal(t, want, docTable(t, "| type | when | to | actionRequired |"))
}

// docs/settlement.md's refusal table lists settlement.RefusalCodes in
// check order (settlementflow's test holds the statuses).
func TestTheRefusalsAreDocumentedInOrder(t *testing.T) {
	row := regexp.MustCompile("^\\| ([0-9]+) \\| `([a-z_]+)` \\| ")
	var got []string
	for i, line := range docTable(t, "| # | code | HTTP | when |") {
		m := row.FindStringSubmatch(line)
		require.NotNil(t, m, line)
		require.Equal(t, fmt.Sprint(i+1), m[1])
		got = append(got, m[2])
	}
	var want []string
	for _, c := range settlement.RefusalCodes {
		want = append(want, string(c))
	}
	require.Equal(t, want, got)
}

// docs/settlement.md's act table names every act.
func TestTheActsAreDocumented(t *testing.T) {
	rows := docTable(t, "| act | who | does |")
	require.Len(t, rows, len(settlement.Acts))
	for i, a := range settlement.Acts {
		require.True(t, strings.HasPrefix(rows[i], fmt.Sprintf("| `%s` |", a)), rows[i])
	}
}
