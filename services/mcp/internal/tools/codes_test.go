package tools_test

import (
	"testing"

	"github.com/pcourt/pcourt/libs/problem/problemtest"
	"github.com/pcourt/pcourt/services/mcp/internal/tools"
)

// The server's problem codes are exactly the rows of owner mcp in
// docs/problems.md, each with the status it is sent with.
func TestCodesAreDocumented(t *testing.T) {
	problemtest.RequireDocumented(t, "mcp", tools.Codes())
}
