package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTableComparesEachPathWithDirectOnItsEndpoint(t *testing.T) {
	ms := time.Millisecond
	rows := []row{
		{endpoint: "GET", path: "direct", perSec: []float64{20000}, wrkSec: []float64{40000}, p50: []time.Duration{ms}, p99: []time.Duration{2 * ms}, ticks: ticks{user: 6, system: 4}, requests: 2000},
		{endpoint: "GET", path: "bare ReverseProxy", perSec: []float64{5000}, wrkSec: []float64{10000}, p50: []time.Duration{1500 * time.Microsecond}, p99: []time.Duration{4 * ms}},
		{endpoint: "GET", path: "edge", perSec: []float64{12000}, wrkSec: []float64{30000}, p50: []time.Duration{1200 * time.Microsecond}, p99: []time.Duration{2500 * time.Microsecond}, ticks: ticks{user: 3, system: 5}, requests: 1000},
		{endpoint: "402", path: "direct", perSec: []float64{30000}},
		{endpoint: "402", path: "edge", perSec: []float64{15000}, wrong: 3},
	}
	var out bytes.Buffer
	writeTable(&out, rows)
	lines := strings.Split(out.String(), "\n")
	require.Equal(t, "| GET | direct | 20000 | 1.00× | 40000 | 1.00× | 1.00 / 2.00 | — | 50: 30 + 20 (owner) |", lines[2])
	require.Equal(t, "| GET | edge | 12000 | 0.60× (2.40× bare) | 30000 | 0.75× (3.00× bare) | 1.20 / 2.50 | +0.20 / +0.50 | 80: 30 + 50 (proxy) |", lines[4])
	require.Equal(t, "| 402 | edge | 15000 (3 answers of another status!) | 0.50× | — | — | — | — | 0: 0 + 0 (proxy) |", lines[6])
}

func TestARatioIsTheMedianOfTheRoundsRatios(t *testing.T) {
	// The machine slows in round 2: both paths fall, their ratio holds.
	direct := row{endpoint: "GET", path: "direct", perSec: []float64{20000, 10000, 21000}, p50: []time.Duration{1000, 3000, 1000}, p99: []time.Duration{2000, 9000, 2000}}
	edge := row{endpoint: "GET", path: "edge", perSec: []float64{12000, 6000, 13000}, p50: []time.Duration{1200, 3300, 1250}, p99: []time.Duration{2500, 9900, 2600}}
	var out bytes.Buffer
	writeTable(&out, []row{direct, edge})
	line := strings.Split(out.String(), "\n")[3]
	// Rates: medians 12000 of 20000; ratios 0.60, 0.60, 0.62: median 0.60
	// (the ratio of the medians would be the same here, of the means not).
	require.Contains(t, line, "| GET | edge | 12000 | 0.60× |")
	// Added: 200, 300, 250 ns at p50, 500, 900, 600 at p99: medians 250 and 600.
	require.Equal(t, 250*time.Nanosecond, pairedAdded(edge.p50, direct.p50))
	require.Equal(t, 600*time.Nanosecond, pairedAdded(edge.p99, direct.p99))
	require.InDelta(t, 0.60, pairedRatio(edge.perSec, direct.perSec), 0.001)
	require.Equal(t, 12000.0, median(edge.perSec))
	require.Equal(t, 9000.0, median([]float64{6000, 12000}), "an even count: the mean of the middle two")
}

func TestLimitsCostIsEachPathsRateWithLimitsOnOverOff(t *testing.T) {
	on := []row{{endpoint: "GET", path: "direct", perSec: []float64{16000}, wrkSec: []float64{30000}}, {endpoint: "GET", path: "nginx (1 worker)", perSec: []float64{9000}}, {endpoint: "GET", path: "edge", perSec: []float64{6000}}}
	off := []row{{endpoint: "GET", path: "direct", perSec: []float64{20000}, wrkSec: []float64{32000}}, {endpoint: "GET", path: "edge", perSec: []float64{10000}}}
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
	r, err := parseWrk(out, 200, ticks{user: 7})
	require.NoError(t, err)
	require.Equal(t, uint64(104233), r.requests)
	require.InDelta(t, 25993, r.perSecond(), 1)
	require.Zero(t, count(r.wrong))
	require.Equal(t, ticks{user: 7}, r.cpuTicks)

	bad := strings.Replace(out, "Requests/sec", "  Socket errors: connect 0, read 2, write 0, timeout 3\n  Non-2xx or 3xx responses: 5\nRequests/sec", 1)
	r, err = parseWrk(bad, 200, ticks{})
	require.NoError(t, err)
	require.Equal(t, map[int]int{-1: 5, 0: 5}, r.wrong)

	// The 402 challenge: every answer must be a non-2xx one.
	r, err = parseWrk(strings.Replace(out, "Requests/sec", "  Non-2xx or 3xx responses: 104233\nRequests/sec", 1), 402, ticks{})
	require.NoError(t, err)
	require.Zero(t, count(r.wrong))
	r, err = parseWrk(strings.Replace(out, "Requests/sec", "  Non-2xx or 3xx responses: 104000\nRequests/sec", 1), 402, ticks{})
	require.NoError(t, err)
	require.Equal(t, 233, r.wrong[-1])

	_, err = parseWrk("wrk: connection refused", 200, ticks{})
	require.Error(t, err)
}
