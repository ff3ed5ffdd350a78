package journal_test

import (
	"testing"

	"github.com/pcourt/pcourt/libs/problem/problemtest"
	"github.com/pcourt/pcourt/libs/x402/journal"
)

// Every code the journal answers with is documented under owner x402 in
// docs/problems.md, with its status, and nothing else is.
func TestCodesAreDocumented(t *testing.T) {
	problemtest.RequireDocumented(t, "x402", journal.Codes())
}
