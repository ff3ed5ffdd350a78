package service

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryLimitShare is the part of the container's memory limit the Go
// runtime aims to stay under: the rest is for what it does not count
// (goroutine stacks in flight, the binary, socket buffers).
const memoryLimitShare = 0.9

// GCPercent is every service's garbage-collection target (GOGC) where the
// environment sets none. The services keep a few MB live and allocate tens
// of KB per request (parsed headers, JSON, a log record, a span): at the
// runtime's 100 they collect every few MB, many times a second at partner
// volumes, and on two cores each mark phase takes a processor from the
// requests in flight. At 400 they collect a quarter as often. Measured
// (docs/compatibility.md, docs/filings-drafts.md, "Performance"): what the
// edge adds at p99 under 2,000 requests/s went from 2.6–4.5 ms to 0.55–1.66 ms,
// and filings confirms 5–10% more per second from 8 clients with a lower
// p99. The memory limit tuneGC also sets keeps the higher target inside the
// pod.
const GCPercent = 400

// UseGCTarget sets the collector to GCPercent, as the services run, and
// returns what restores the previous target: benchmarks run under it, so
// their figures are the deployed services'.
func UseGCTarget() (restore func()) {
	previous := debug.SetGCPercent(GCPercent)
	return func() { debug.SetGCPercent(previous) }
}

// GCSettings are the garbage collector's target and memory limit as a
// service runs with them, and where each came from.
type GCSettings struct {
	Percent          int    `json:"percent"`
	PercentFrom      string `json:"percentFrom"` // "GOGC" or "platform"
	MemoryLimitBytes int64  `json:"memoryLimitBytes,omitempty"`
	MemoryLimitFrom  string `json:"memoryLimitFrom"` // "GOMEMLIMIT", "cgroup" or "none"
}

// tuneGC sets the collector's target to GCPercent unless GOGC says
// otherwise, and, unless GOMEMLIMIT says otherwise, a memory limit of 90%
// of the service's cgroup's (read under cgroupRoot, /sys/fs/cgroup in a
// container). The limit keeps the higher target safe: near the container's
// limit the runtime collects as often as it must rather than be killed for
// memory.
func tuneGC(getenv func(string) string, cgroupRoot string) GCSettings {
	s := GCSettings{Percent: GCPercent, PercentFrom: "platform", MemoryLimitFrom: "none"}
	if getenv("GOGC") != "" {
		s.PercentFrom = "GOGC" // the runtime read it at start
		s.Percent = debug.SetGCPercent(-1)
		debug.SetGCPercent(s.Percent)
	} else {
		debug.SetGCPercent(GCPercent)
	}
	if getenv("GOMEMLIMIT") != "" {
		s.MemoryLimitBytes, s.MemoryLimitFrom = debug.SetMemoryLimit(-1), "GOMEMLIMIT"
		return s
	}
	if limit, ok := cgroupMemoryLimit(cgroupRoot); ok {
		s.MemoryLimitBytes, s.MemoryLimitFrom = int64(float64(limit)*memoryLimitShare), "cgroup"
		debug.SetMemoryLimit(s.MemoryLimitBytes)
	}
	return s
}

// cgroupMemoryLimit reads the memory limit of the cgroup the process runs
// in: cgroup v2's memory.max, or v1's memory.limit_in_bytes. No file, "max"
// or v1's "unlimited" (a number near 2^63) is no limit.
func cgroupMemoryLimit(root string) (int64, bool) {
	for _, file := range []string{"memory.max", filepath.Join("memory", "memory.limit_in_bytes")} {
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n > math.MaxInt64/2 {
			return 0, false
		}
		return n, true
	}
	return 0, false
}
