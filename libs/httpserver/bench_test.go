package httpserver_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/telemetry/telemetrytest"
)

const benchBody = `{"item":"pen","quantity":2}`

// BenchmarkPlatformMiddleware is one JSON request through the whole platform
// chain (request id, recovery, access log, problem rendering, body limit,
// strict decoding); BenchmarkBareGin is the same handler on a bare engine.
// Their ratio is the chain's cost.
func BenchmarkPlatformMiddleware(b *testing.B) {
	serve(b, orders(httpserver.Deps{Service: "bench", Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}))
}

// BenchmarkPlatformMiddlewareWithTelemetry is the same with the RED
// histogram and the server spans on, as every service runs.
func BenchmarkPlatformMiddlewareWithTelemetry(b *testing.B) {
	serve(b, orders(httpserver.Deps{Service: "bench", Logger: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Telemetry: telemetrytest.Setup(b, "bench")}))
}

// orders is the benchmarks' platform server with its one JSON route.
func orders(deps httpserver.Deps) http.Handler {
	s := httpserver.New(httpserver.DefaultConfig(), deps)
	s.Router().POST("/orders", func(c *gin.Context) {
		var o order
		if err := httpserver.DecodeJSON(c, &o); err != nil {
			_ = c.Error(err)
			return
		}
		c.JSON(http.StatusCreated, o)
	})
	return s.Router()
}

func BenchmarkBareGin(b *testing.B) {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.POST("/orders", func(c *gin.Context) {
		var o order
		if err := c.BindJSON(&o); err != nil {
			return
		}
		c.JSON(http.StatusCreated, o)
	})
	serve(b, r)
}

func serve(b *testing.B, h http.Handler) {
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(benchBody))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusCreated {
			b.Fatalf("status %d", w.Code)
		}
	}
}

// BenchmarkDecodeStrict is the strict decoding of a request body of the
// readiness report's shape: the duplicate-member scan and the decode.
func BenchmarkDecodeStrict(b *testing.B) {
	body := []byte(`{"caseTrack":"ai_standard","claimantType":"human","respondentType":"organization","amountInDisputeUsd":40000,"remedy":"money_obligation","settlementRail":"none","fastTrackClaimClass":null,"mutualConsentReported":true,"authorityToBindReported":true,"claimantEvidenceReady":true,"respondentEvidenceReady":true,"microClaimsTierConsentReported":false,"remedialJurisdictionOptInReported":true,"corpusAmountUsd":null}`)
	var dst map[string]any
	b.ReportAllocs()
	for b.Loop() {
		if err := httpserver.DecodeStrict(body, &dst); err != nil {
			b.Fatal(err)
		}
	}
}
