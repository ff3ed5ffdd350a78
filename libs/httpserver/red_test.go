package httpserver_test

import (
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/telemetry/telemetrytest"
)

// TestRequestsAreCountedByRouteTemplate holds the RED histogram to what an
// alert reads: one series per route template (never the raw path), method
// and status code, labelled with the service; a panic counted as its 500;
// an unknown path under "unmatched"; a handler's own route label in place
// of its catch-all; the probes not at all.
func TestRequestsAreCountedByRouteTemplate(t *testing.T) {
	tel := telemetrytest.Setup(t, "orders")
	s := httpserver.New(loopbackConfig(), httpserver.Deps{
		Service: "orders", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Telemetry: tel,
	})
	r := s.Router()
	r.GET("/orders/:id", func(c *gin.Context) { c.String(http.StatusOK, "ok") })
	r.GET("/boom", func(*gin.Context) { panic("boom") })
	r.Any("/api/*path", func(c *gin.Context) {
		httpserver.LabelRoute(c, "/api/v2/cases/{caseId}")
		c.Status(http.StatusAccepted)
	})
	public, _ := running(t, s)

	for _, p := range []string{"/orders/1", "/orders/2", "/orders/3", "/boom", "/nowhere/a", "/nowhere/b", "/api/v2/cases/cs_1", "/livez", "/readyz"} {
		resp, err := http.Get(public + p)
		require.NoError(t, err)
		resp.Body.Close()
	}

	fams := telemetrytest.Scrape(t, tel.MetricsHandler)
	const name = "pcourt_http_server_request_duration_seconds"
	for _, tc := range []struct {
		route, code string
		count       float64
	}{
		{"/orders/:id", "200", 3},
		{"/boom", "500", 1},
		{httpserver.UnmatchedRoute, "404", 2},
		{"/api/v2/cases/{caseId}", "202", 1},
	} {
		got := fams.Value(t, name, map[string]string{"service": "orders", "route": tc.route, "method": "GET", "code": tc.code})
		require.Equal(t, tc.count, got, "requests on %s answered %s", tc.route, tc.code)
	}
	require.Len(t, fams.Series(name, nil), 4, "no series for the probes, none per raw path")
}
