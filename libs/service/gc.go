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

// GCSettings are the garbage collector's target and memory limit as a
// service runs with them, and where each came from.
type GCSettings struct {
	Percent          int    `json:"percent"`
	PercentFrom      string `json:"percentFrom"` // "GOGC", "service" or "runtime default"
	MemoryLimitBytes int64  `json:"memoryLimitBytes,omitempty"`
	MemoryLimitFrom  string `json:"memoryLimitFrom"` // "GOMEMLIMIT", "cgroup" or "none"
}

// tuneGC sets the collector for a service whose own target is percent (0:
// the runtime's 100), unless GOGC says otherwise, and, unless GOMEMLIMIT
// says otherwise, a memory limit of 90% of its cgroup's (read under
// cgroupRoot, /sys/fs/cgroup in a container).
//
// Why both: a service with a small live heap and a high allocation rate
// (the edge: a few MB live, tens of KB allocated per request) collects
// every few MB at GOGC=100, and on two cores each collection's mark phase
// takes a processor from requests in flight: that, not the work per
// request, is what its tail latency is made of. A higher target collects
// less often. The memory limit keeps a higher target safe: near the
// container's limit the runtime collects as often as it must rather than
// be killed for memory.
func tuneGC(percent int, getenv func(string) string, cgroupRoot string) GCSettings {
	s := GCSettings{Percent: 100, PercentFrom: "runtime default", MemoryLimitFrom: "none"}
	switch {
	case getenv("GOGC") != "":
		s.PercentFrom = "GOGC" // the runtime read it at start
		s.Percent = debug.SetGCPercent(-1)
		debug.SetGCPercent(s.Percent)
	case percent > 0:
		debug.SetGCPercent(percent)
		s.Percent, s.PercentFrom = percent, "service"
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
