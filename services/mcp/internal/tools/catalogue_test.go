package tools

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
)

// Every tool mirrors an operation that takes account tokens (it lists the
// accountOAuth scheme with its scope), so no tool offers what the API
// would refuse an account; every {id} in their paths is a case's, which
// the tools take as caseId.
func TestEveryToolMirrorsAnOperationAccountsMayUse(t *testing.T) {
	doc, err := api.JSON()
	require.NoError(t, err)
	ids := []string{}
	for _, spec := range catalogue {
		ids = append(ids, spec.Operation)
	}
	ops, err := readOperations(doc, ids)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, spec := range catalogue {
		op := ops[spec.Operation]
		require.NotEmpty(t, op.Scopes, "%s (%s %s) does not list accountOAuth", spec.Name, op.Method, op.Path)
		require.False(t, names[spec.Name], "two tools are named %s", spec.Name)
		names[spec.Name] = true
		if strings.Contains(op.Path, "{id}") {
			require.True(t, strings.HasPrefix(op.Path, "/api/cases/{id}") || strings.HasPrefix(op.Path, "/api/disputes/{id}"), op.Path)
		}
		if op.Method != "GET" {
			require.True(t, op.IdempotencyRequired, "%s is a command without a required Idempotency-Key", spec.Name)
		}
	}
}

// A tool's input schema is its operation's: the path parameters, the
// Idempotency-Key as idempotencyKey, the body by its component schema,
// which $defs holds with every schema it refers to.
func TestAToolsInputSchemaIsItsOperations(t *testing.T) {
	doc, err := api.JSON()
	require.NoError(t, err)
	ops, err := readOperations(doc, []string{"fileAnswerV2"})
	require.NoError(t, err)
	op := ops["fileAnswerV2"]
	require.Equal(t, "POST", op.Method)
	require.Equal(t, "/api/v2/cases/{caseId}/answer", op.Path)
	require.Equal(t, []string{"caseId"}, op.PathParams)
	props := op.InputSchema["properties"].(map[string]any)
	require.Equal(t, "#/$defs/CaseAnswerInput", props["body"].(map[string]any)["$ref"])
	require.Equal(t, float64(8), props["idempotencyKey"].(map[string]any)["minLength"])
	require.Contains(t, op.InputSchema["$defs"], "CaseAnswerInput")
	require.Equal(t, []string{"body", "caseId", "idempotencyKey"}, op.InputSchema["required"])
	require.Equal(t, false, op.InputSchema["additionalProperties"])
}
