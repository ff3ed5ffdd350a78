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
		{endpoint: "GET", path: "direct", perSec: 20000, latency: true, p50: time.Millisecond, p99: 2 * time.Millisecond, cpu: 50 * time.Microsecond},
		{endpoint: "GET", path: "bare ReverseProxy", perSec: 5000, latency: true, p50: 1500 * time.Microsecond, p99: 4 * time.Millisecond},
		{endpoint: "GET", path: "edge", perSec: 12000, latency: true, p50: 1200 * time.Microsecond, p99: 2500 * time.Microsecond, cpu: 80 * time.Microsecond},
		{endpoint: "402", path: "direct", perSec: 30000},
		{endpoint: "402", path: "edge", perSec: 15000, wrong: 3},
	}
	var out bytes.Buffer
	writeTable(&out, rows)
	lines := strings.Split(out.String(), "\n")
	require.Equal(t, "| GET | direct | 20000 | 1.00× | 1.00 / 2.00 | — | 50 (owner) |", lines[2])
	require.Equal(t, "| GET | edge | 12000 | 0.60× (2.40× bare) | 1.20 / 2.50 | +0.20 / +0.50 | 80 (proxy) |", lines[4])
	require.Equal(t, "| 402 | edge | 15000 (3 answers of another status!) | 0.50× | — | — | 0 (proxy) |", lines[6])
}

func TestLimitsCostIsEachPathsRateWithLimitsOnOverOff(t *testing.T) {
	on := []row{{endpoint: "GET", path: "direct", perSec: 16000}, {endpoint: "GET", path: "nginx (2 workers)", perSec: 9000}, {endpoint: "GET", path: "edge", perSec: 6000}}
	off := []row{{endpoint: "GET", path: "direct", perSec: 20000}, {endpoint: "GET", path: "edge", perSec: 10000}}
	var out bytes.Buffer
	writeLimitsCost(&out, on, off)
	require.Equal(t, []string{
		"| endpoint | path | req/s limits on | req/s limits off | on / off |",
		"|---|---|---|---|---|",
		"| GET | direct | 16000 | 20000 | 0.80× |",
		"| GET | edge | 6000 | 10000 | 0.60× |",
		"",
	}, strings.Split(out.String(), "\n"))
}

func TestCPUPerRequestSpreadsClockTicksOverTheAnswers(t *testing.T) {
	require.Equal(t, 100*time.Microsecond, perRequest(10, 1000)) // 100 ms over 1,000 requests
	require.Equal(t, time.Duration(0), perRequest(10, 0))
}
