package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/readiness/internal/httpapi"
)

// BenchmarkChallenge is an unpaid request: body validation and the 402
// challenge, through real HTTP.
func BenchmarkChallenge(b *testing.B) {
	b.Cleanup(service.UseGCTarget()) // as the services run
	s := newStack(b)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if status := s.send(b, ""); status != 402 {
			b.Fatalf("status %d", status)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "challenges/s")
}

// BenchmarkPaidReport is one paid call after another (claim, verify, report,
// cap, settle, record) through the local facilitator over HTTP, with its
// latency distribution. Payments are signed before the clock starts: signing
// is the client's cost.
func BenchmarkPaidReport(b *testing.B) {
	b.Cleanup(service.UseGCTarget()) // as the services run
	s, payments := paidStack(b)
	latencies := make([]time.Duration, 0, b.N)
	start := time.Now()
	for i := range b.N {
		t0 := time.Now()
		if status := s.send(b, payments[i]); status != 200 {
			b.Fatalf("status %d", status)
		}
		latencies = append(latencies, time.Since(t0))
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reports/s")
	slices.Sort(latencies)
	b.ReportMetric(ms(latencies[len(latencies)/2]), "p50-ms")
	b.ReportMetric(ms(latencies[(len(latencies)*99)/100]), "p99-ms")
}

// BenchmarkPaidReportParallel is the same call from eight concurrent
// clients, as partner backends send it, with its latency distribution.
func BenchmarkPaidReportParallel(b *testing.B) {
	b.Cleanup(service.UseGCTarget()) // as the services run
	s, payments := paidStack(b)
	var next atomic.Int64
	var mu sync.Mutex
	latencies := make([]time.Duration, 0, b.N)
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0))) // eight clients, whatever the cores
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1) - 1
			t0 := time.Now()
			if status := s.send(b, payments[i]); status != 200 {
				b.Errorf("status %d", status)
				return
			}
			elapsed := time.Since(t0)
			mu.Lock()
			latencies = append(latencies, elapsed)
			mu.Unlock()
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reports/s")
	slices.Sort(latencies)
	b.ReportMetric(ms(latencies[len(latencies)/2]), "p50-ms")
	b.ReportMetric(ms(latencies[(len(latencies)*99)/100]), "p99-ms")
}

func paidStack(b *testing.B) (*stack, []string) {
	b.Helper()
	s := newStack(b, withFacilitatorDirect())
	require.NoError(b, s.ledger.Fund(context.Background(), testnet, s.asset, s.payerAddress(), uint64(b.N)*10000))
	offer := s.offer(b)
	payments := make([]string, b.N)
	for i := range payments {
		p, err := x402.NewExactPayment(s.payer, offer, time.Now(), rand.Reader)
		require.NoError(b, err)
		payments[i] = encode(b, p)
	}
	b.ResetTimer()
	return s, payments
}

// send posts the valid body as a client would, without the OpenAPI checks
// that tests make, and returns the status.
func (s *stack) send(b *testing.B, paymentHeader string) int {
	req, err := http.NewRequest(http.MethodPost, s.url+httpapi.Path, bytes.NewReader(validBody))
	require.NoError(b, err)
	req.Header.Set("Content-Type", "application/json")
	if paymentHeader != "" {
		req.Header.Set(x402.HeaderPaymentSignature, paymentHeader)
	}
	resp, err := benchClient.Do(req)
	require.NoError(b, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkBaselineTrivialJSON is a trivial JSON handler on a bare engine,
// reached by the same client: the floor the figures above compare against.
func BenchmarkBaselineTrivialJSON(b *testing.B) {
	b.Cleanup(service.UseGCTarget()) // as the services run
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.POST(httpapi.Path, func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"ok": true}) })
	ts := httptest.NewServer(r)
	b.Cleanup(ts.Close)
	s := &stack{url: ts.URL}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if status := s.send(b, ""); status != 200 {
			b.Fatalf("status %d", status)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "requests/s")
}
