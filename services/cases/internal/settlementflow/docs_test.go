package settlementflow_test

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/settlement"
	"github.com/pcourt/pcourt/services/cases/internal/settlementflow"
)

// docs/settlement.md's refusal table gives each code the status
// settlementflow.Problem answers it with, and every refusal has one.
func TestTheRefusalsAreDocumentedWithTheirStatuses(t *testing.T) {
	raw, err := os.ReadFile("../../../../docs/settlement.md")
	require.NoError(t, err)
	lines := strings.Split(string(raw), "\n")
	i := slices.Index(lines, "| # | code | HTTP | when |")
	require.GreaterOrEqual(t, i, 0)
	row := regexp.MustCompile("^\\| [0-9]+ \\| `([a-z_]+)` \\| ([0-9]{3}) \\| ")
	documented := map[string]int{}
	for _, line := range lines[i+2:] {
		m := row.FindStringSubmatch(line)
		if m == nil {
			break
		}
		documented[m[1]], _ = strconv.Atoi(m[2])
	}
	require.Len(t, documented, len(settlement.RefusalCodes))
	for _, code := range settlement.RefusalCodes {
		p := settlementflow.Problem(&settlement.RefusalError{Code: code, Detail: "d"})
		require.NotNil(t, p, code)
		require.Equal(t, documented[string(code)], p.Code.Status, code)
		require.Equal(t, string(code), p.Code.Name)
	}
	require.Nil(t, settlementflow.Problem(os.ErrNotExist), "another error is not the settlement's")
}
