package proxy_test

import (
	"testing"

	"github.com/pcourt/pcourt/libs/problem/problemtest"
	"github.com/pcourt/pcourt/services/compat-edge/internal/admin"
	"github.com/pcourt/pcourt/services/compat-edge/internal/proxy"
)

// The service's problem codes are exactly the rows of owner compat-edge in
// docs/problems.md, each with the status it is sent with.
func TestCodesAreDocumented(t *testing.T) {
	problemtest.RequireDocumented(t, "compat-edge", append(proxy.Codes(), admin.Codes()...))
}
