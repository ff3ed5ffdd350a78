package tribunalflow_test

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
	"github.com/pcourt/pcourt/services/cases/internal/tribunalflow"
)

// docs/tribunal.md's refusal table lists every refusal code of the
// decision in the order Decide checks them, each with the status
// tribunalflow.Problem answers it with.
func TestTheRefusalsAreDocumentedInOrderWithTheirStatuses(t *testing.T) {
	raw, err := os.ReadFile("../../../../docs/tribunal.md")
	require.NoError(t, err)
	lines := strings.Split(string(raw), "\n")
	i := slices.Index(lines, "| # | code | HTTP | when |")
	require.GreaterOrEqual(t, i, 0)
	row := regexp.MustCompile("^\\| ([0-9]+) \\| `([a-z_]+)` \\| ([0-9]{3}) \\| ")
	type doc struct {
		n      int
		code   string
		status int
	}
	var got []doc
	for _, line := range lines[i+2:] {
		m := row.FindStringSubmatch(line)
		if m == nil {
			break
		}
		n, _ := strconv.Atoi(m[1])
		status, _ := strconv.Atoi(m[3])
		got = append(got, doc{n, m[2], status})
	}
	var want []doc
	for n, code := range tribunal.RefusalCodes {
		p := tribunalflow.Problem(&tribunal.RefusalError{Code: code, Detail: "d"})
		require.NotNil(t, p, code)
		want = append(want, doc{n + 1, string(code), p.Code.Status})
	}
	require.Equal(t, want, got)
}
