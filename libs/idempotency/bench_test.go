package idempotency_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/redistest"
)

// The three benchmarks share one setup against a real redis-server: a keyed
// request that runs (claim + complete: two Lua calls), its replay (one), and
// the same authenticated route without the journal, as the baseline.
func benchServer(b *testing.B, withJournal bool) (http.Handler, string) {
	rdb := redistest.NewClient(b)
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	// The per-credential rate would stop a benchmark of one credential.
	cfg := auth.DefaultStoreConfig()
	cfg.PerCredential = ratelimit.Off
	store := auth.NewStore(rdb, cfg)
	token, _ := authtest.Mint(b, store, auth.RolePlatformOrchestrator)
	s := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "bench", Logger: logger})
	handlers := []gin.HandlerFunc{auth.Middleware(store)}
	if withJournal {
		handlers = append(handlers, newJournal(b, rdb, idempotency.DefaultConfig("pc:bench"), logger).Middleware("createPayment"))
	}
	handlers = append(handlers, func(c *gin.Context) { c.JSON(http.StatusCreated, gin.H{"paymentId": "p_1"}) })
	s.Router().POST("/payments", handlers...)
	return s.Router(), token
}

func post(b *testing.B, h http.Handler, token, key string) {
	req := httptest.NewRequest(http.MethodPost, "/payments", strings.NewReader(`{"amount":100,"currency":"USD"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set(idempotency.Header, key)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusCreated {
		b.Fatalf("status %d: %s", w.Code, w.Body)
	}
}

func BenchmarkKeyedRequestFirstRun(b *testing.B) {
	h, token := benchServer(b, true)
	i := 0
	for b.Loop() {
		i++
		post(b, h, token, fmt.Sprintf("bench-key-%09d", i))
	}
}

func BenchmarkKeyedRequestReplay(b *testing.B) {
	h, token := benchServer(b, true)
	post(b, h, token, "bench-replayed-key")
	for b.Loop() {
		post(b, h, token, "bench-replayed-key")
	}
}

func BenchmarkUnkeyedBaseline(b *testing.B) {
	h, token := benchServer(b, false)
	for b.Loop() {
		post(b, h, token, "")
	}
}
