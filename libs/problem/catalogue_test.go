package problem_test

import (
	"testing"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/problem/problemtest"
)

// The platform-wide codes are exactly the rows of owner libs in
// docs/problems.md, each with the status it is sent with.
func TestCatalogueIsDocumented(t *testing.T) {
	problemtest.RequireDocumented(t, "libs", problem.Catalogue())
}
