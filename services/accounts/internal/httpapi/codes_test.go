package httpapi_test

import (
	"testing"

	"github.com/pcourt/pcourt/libs/problem/problemtest"
	"github.com/pcourt/pcourt/services/accounts/internal/httpapi"
)

// The service's problem codes are exactly the rows of owner accounts in
// docs/problems.md, each with the status it is sent with.
func TestCodesAreDocumented(t *testing.T) {
	problemtest.RequireDocumented(t, "accounts", httpapi.Codes())
}
