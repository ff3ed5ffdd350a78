package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/service"
)

var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

// post sends a command as a partner backend would, without the OpenAPI
// checks of the tests, and returns the status.
func (s *stack) post(b *testing.B, path, token string, body any) int {
	raw, err := json.Marshal(body)
	require.NoError(b, err)
	req, err := http.NewRequest(http.MethodPost, s.url+path, bytes.NewReader(raw))
	require.NoError(b, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set(idempotency.Header, newKey())
	resp, err := benchClient.Do(req)
	require.NoError(b, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// BenchmarkCommandsOnOneCase has eight clients post messages to one case
// at once: every command is a Lua step on that case's hash slot, with
// optimistic retries when two land together, and a gap-free sequence.
func BenchmarkCommandsOnOneCase(b *testing.B) {
	b.Cleanup(service.UseGCTarget()) // as the services run
	s := newStack(b)
	c := s.open(b)
	path := "/api/cases/" + c.id + "/messages"
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if status := s.post(b, path, s.claimant, map[string]any{"text": "a message"}); status != http.StatusCreated {
				b.Errorf("status %d", status)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "commands/s")
}

// BenchmarkCommandsAcrossCases has eight clients post one message each to
// as many cases: no two commands contend.
func BenchmarkCommandsAcrossCases(b *testing.B) {
	b.Cleanup(service.UseGCTarget()) // as the services run
	s := newStack(b)
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = s.open(b).id
	}
	var next atomic.Int64
	b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := ids[next.Add(1)-1]
			if status := s.post(b, "/api/cases/"+id+"/messages", s.claimant, map[string]any{"text": fmt.Sprintf("to %s", id)}); status != http.StatusCreated {
				b.Errorf("status %d", status)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "commands/s")
}
