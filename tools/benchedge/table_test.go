package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTableComparesEachPathWithDirectOnItsEndpoint(t *testing.T) {
	rows := []row{
		{endpoint: "GET", path: "direct", perSec: 20000, wrkSec: 40000, latency: true, p50: time.Millisecond, p99: 2 * time.Millisecond, cpu: 50 * time.Microsecond},
		{endpoint: "GET", path: "bare ReverseProxy", perSec: 5000, wrkSec: 10000, latency: true, p50: 1500 * time.Microsecond, p99: 4 * time.Millisecond},
		{endpoint: "GET", path: "edge", perSec: 12000, wrkSec: 30000, latency: true, p50: 1200 * time.Microsecond, p99: 2500 * time.Microsecond, cpu: 80 * time.Microsecond},
		{endpoint: "402", path: "direct", perSec: 30000},
		{endpoint: "402", path: "edge", perSec: 15000, wrong: 3},
	}
	var out bytes.Buffer
	writeTable(&out, rows)
	lines := strings.Split(out.String(), "\n")
	require.Equal(t, "| GET | direct | 20000 | 1.00× | 40000 | 1.00× | 1.00 / 2.00 | — | 50 (owner) |", lines[2])
	require.Equal(t, "| GET | edge | 12000 | 0.60× (2.40× bare) | 30000 | 0.75× (3.00× bare) | 1.20 / 2.50 | +0.20 / +0.50 | 80 (proxy) |", lines[4])
	require.Equal(t, "| 402 | edge | 15000 (3 answers of another status!) | 0.50× | — | — | — | — | 0 (proxy) |", lines[6])
}

func TestLimitsCostIsEachPathsRateWithLimitsOnOverOff(t *testing.T) {
	on := []row{{endpoint: "GET", path: "direct", perSec: 16000, wrkSec: 30000}, {endpoint: "GET", path: "nginx (1 worker)", perSec: 9000}, {endpoint: "GET", path: "edge", perSec: 6000}}
	off := []row{{endpoint: "GET", path: "direct", perSec: 20000, wrkSec: 32000}, {endpoint: "GET", path: "edge", perSec: 10000}}
	var out bytes.Buffer
	writeLimitsCost(&out, on, off)
	require.Equal(t, []string{
		"| endpoint | path | req/s limits on | req/s limits off | on / off (vegeta) | on / off (wrk) |",
		"|---|---|---|---|---|---|",
		"| GET | direct | 16000 | 20000 | 0.80× | 0.94× |",
		"| GET | edge | 6000 | 10000 | 0.60× | — |",
		"",
	}, strings.Split(out.String(), "\n"))
}

func TestCPUPerRequestSpreadsClockTicksOverTheAnswers(t *testing.T) {
	require.Equal(t, 100*time.Microsecond, perRequest(10, 1000)) // 100 ms over 1,000 requests
	require.Equal(t, time.Duration(0), perRequest(10, 0))
}

func TestWrksSummaryGivesTheRateAndEveryWrongAnswer(t *testing.T) {
	out := `Running 4s test @ http://127.0.0.1:18080/api/v2/integration
  2 threads and 64 connections
  104233 requests in 4.01s, 63.39MB read
Requests/sec:  25993.27
`
	r, err := parseWrk(out, 200, 7)
	require.NoError(t, err)
	require.Equal(t, uint64(104233), r.requests)
	require.InDelta(t, 25993, r.perSecond(), 1)
	require.Zero(t, count(r.wrong))
	require.Equal(t, int64(7), r.cpuTicks)

	bad := strings.Replace(out, "Requests/sec", "  Socket errors: connect 0, read 2, write 0, timeout 3\n  Non-2xx or 3xx responses: 5\nRequests/sec", 1)
	r, err = parseWrk(bad, 200, 0)
	require.NoError(t, err)
	require.Equal(t, map[int]int{-1: 5, 0: 5}, r.wrong)

	// The 402 challenge: every answer must be a non-2xx one.
	r, err = parseWrk(strings.Replace(out, "Requests/sec", "  Non-2xx or 3xx responses: 104233\nRequests/sec", 1), 402, 0)
	require.NoError(t, err)
	require.Zero(t, count(r.wrong))
	r, err = parseWrk(strings.Replace(out, "Requests/sec", "  Non-2xx or 3xx responses: 104000\nRequests/sec", 1), 402, 0)
	require.NoError(t, err)
	require.Equal(t, 233, r.wrong[-1])

	_, err = parseWrk("wrk: connection refused", 200, 0)
	require.Error(t, err)
}
