package agent_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/tools/adjudicator/agent"
)

func TestTheManualHoldsTheRubricVerbatim(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/tribunal-adjudicator.md")
	require.NoError(t, err)
	require.Contains(t, string(doc), agent.Rubric, "docs/tribunal-adjudicator.md must quote agent.Rubric exactly (go run ./tools/adjudicator -print-rubric)")
}
