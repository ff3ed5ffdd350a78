package service

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGCTargetAndMemoryLimit(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	cgroup := func(t *testing.T, files map[string]string) string {
		root := t.TempDir()
		for name, content := range files {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
		}
		return root
	}

	t.Run("the platform's target and 90% of a cgroup v2 limit", func(t *testing.T) {
		s := tuneGC(env(nil), cgroup(t, map[string]string{"memory.max": "268435456\n"}))
		require.Equal(t, GCSettings{Percent: 400, PercentFrom: "platform", MemoryLimitBytes: 241591910, MemoryLimitFrom: "cgroup"}, s)
		require.Equal(t, 400, debug.SetGCPercent(400))
		require.Equal(t, int64(241591910), debug.SetMemoryLimit(-1))
	})
	t.Run("cgroup v1", func(t *testing.T) {
		s := tuneGC(env(nil), cgroup(t, map[string]string{"memory/memory.limit_in_bytes": "1073741824"}))
		require.Equal(t, "platform", s.PercentFrom)
		require.Equal(t, int64(966367641), s.MemoryLimitBytes)
	})
	t.Run("no limit: max, v1's unlimited, no cgroup", func(t *testing.T) {
		debug.SetMemoryLimit(math.MaxInt64)
		for _, files := range []map[string]string{
			{"memory.max": "max\n"},
			{"memory/memory.limit_in_bytes": "9223372036854771712"},
			{},
		} {
			s := tuneGC(env(nil), cgroup(t, files))
			require.Equal(t, "none", s.MemoryLimitFrom, "%v", files)
			require.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1))
		}
	})
	t.Run("GOGC and GOMEMLIMIT win", func(t *testing.T) {
		debug.SetGCPercent(150)
		debug.SetMemoryLimit(1 << 30)
		s := tuneGC(env(map[string]string{"GOGC": "150", "GOMEMLIMIT": "1GiB"}), cgroup(t, map[string]string{"memory.max": "268435456"}))
		require.Equal(t, GCSettings{Percent: 150, PercentFrom: "GOGC", MemoryLimitBytes: 1 << 30, MemoryLimitFrom: "GOMEMLIMIT"}, s)
		require.Equal(t, 150, debug.SetGCPercent(150))
	})
}
