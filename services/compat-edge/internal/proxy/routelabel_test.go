package proxy_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/telemetry/telemetrytest"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
)

// TestTheEdgeCountsRequestsByTheirInventoryRoute sends a request on every
// inventory row, with its parameters filled in, and two that no row lists:
// the edge's RED histogram has one series per row's pattern (never the raw
// path, never its own catch-all /api/*path), the unlisted path of an owner
// under that owner, and a path nobody owns as unmatched.
func TestTheEdgeCountsRequestsByTheirInventoryRoute(t *testing.T) {
	own := countingOwners(t)
	e := newCompatEdge(t, own.urls, nil, nil)
	want := map[string]bool{}
	for _, r := range inventory.Routes {
		method := methodsOf(r)[0]
		path, _ := concrete(r.Pattern)
		resp, _ := send(t, method, e.url+path, "Authorization", "Bearer pc_sbx_whoever")
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s", method, path)
		want[r.Pattern] = true
	}
	resp, _ := send(t, http.MethodGet, e.url+"/api/cases/cs_1/no-such-thing")
	require.Equal(t, http.StatusOK, resp.StatusCode, "the owner answers what the inventory does not list")
	resp, _ = send(t, http.MethodGet, e.url+"/api/nobody-owns-this")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	want["unlisted (cases)"] = true
	want[httpserver.UnmatchedRoute] = true

	got := map[string]bool{}
	for _, m := range telemetrytest.Scrape(t, e.tel.MetricsHandler).Series("pcourt_http_server_request_duration_seconds", map[string]string{"service": "compat-edge"}) {
		got[telemetrytest.Label(m, "route")] = true
	}
	require.Equal(t, want, got)
}
