// Package redistest starts a real redis-server for tests. There is no fake:
// Lua, streams and expiry behave exactly as in production.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server process owned by one test.
type Server struct {
	Addr string
	cmd  *exec.Cmd
}

// Start launches redis-server from PATH on a free loopback port, without
// persistence, and stops it when the test ends. It fails the test, loudly,
// where redis-server is not installed.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return start(tb)
}

// StartReplica launches a redis-server replicating primary and waits until
// its link to the primary is up and the initial sync done, so that WAIT on
// the primary counts it. It stops when the test ends.
func StartReplica(tb testing.TB, primary *Server) *Server {
	tb.Helper()
	host, port, _ := net.SplitHostPort(primary.Addr)
	s := start(tb, "--replicaof", host, port)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rdb.Close()
	if err := waitFor(func() bool {
		info, err := rdb.Info(context.Background(), "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up") && strings.Contains(info, "master_sync_in_progress:0") &&
			primaryCountsReplica(primary.Addr)
	}); err != nil {
		tb.Fatalf("replica %s of %s: link not up: %v", s.Addr, primary.Addr, err)
	}
	return s
}

func start(tb testing.TB, extra ...string) *Server {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatalf("redis-server not found on PATH: install it (Debian: apt-get install redis-server); integration tests never fake Redis")
	}
	port := freePort(tb)
	dir := tb.TempDir()
	logPath := filepath.Join(dir, "redis.log")
	args := append([]string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no",
		"--repl-diskless-sync-delay", "0", // a replica syncs at once, not 5 s later
		"--dir", dir, "--logfile", logPath, "--loglevel", "warning"}, extra...)
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting redis-server: %v", err)
	}
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd}
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if err := waitReady(s.Addr); err != nil {
		log, _ := os.ReadFile(logPath)
		tb.Fatalf("redis-server on %s: %v\n%s", s.Addr, err, log)
	}
	return s
}

// Client returns a client of the server, closed when the test ends.
func (s *Server) Client(tb testing.TB) *redis.Client {
	tb.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	tb.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// Stop kills the server now, for tests of what happens when Redis goes away.
func (s *Server) Stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// NewClient starts a server and returns a client of it: the common case.
func NewClient(tb testing.TB) *redis.Client {
	tb.Helper()
	return Start(tb).Client(tb)
}

func waitReady(addr string) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after 10s: %w", err)
		}
		time.Sleep(20 * time.Millisecond) // polling a process that is starting; nothing to wait on
	}
}

// waitFor polls done every 20 ms for up to 10 s.
func waitFor(done func() bool) error {
	deadline := time.Now().Add(10 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not done after 10s")
		}
		time.Sleep(20 * time.Millisecond) // polling another process; nothing to wait on
	}
	return nil
}

func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// primaryCountsReplica says whether the primary at addr has a replica
// online: after a diskless sync the primary takes a replica online only at
// its first acknowledgement, and WAIT counts only online replicas.
func primaryCountsReplica(addr string) bool {
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	info, err := rdb.Info(context.Background(), "replication").Result()
	return err == nil && strings.Contains(info, "state=online") && replicaAcknowledges(rdb)
}

// replicaAcknowledges writes a probe and asks, on the same connection,
// that a replica acknowledge it. A replica online after its first sync
// may still not acknowledge the primary's newer writes for a few hundred
// milliseconds; a test of WAIT (libs/redisclient.Durable) starts once it
// does, so its first write is not short for that reason.
func replicaAcknowledges(rdb *redis.Client) bool {
	ctx := context.Background()
	probe, ok := probeKey(ctx, rdb)
	if !ok {
		return false
	}
	conn := rdb.Conn()
	defer conn.Close()
	if err := conn.Set(ctx, probe, "1", time.Second).Err(); err != nil {
		return false
	}
	n, err := conn.Do(ctx, "WAIT", 1, 100).Int()
	conn.Del(ctx, probe) // the tests find only their own keys
	return err == nil && n >= 1
}

// probeKey is a key the node of rdb serves: any key on a standalone
// server, one of the node's own slots in a cluster.
func probeKey(ctx context.Context, rdb *redis.Client) (string, bool) {
	info, err := rdb.Info(ctx, "cluster").Result()
	if err != nil {
		return "", false
	}
	if !strings.Contains(info, "cluster_enabled:1") {
		return "redistest:replica-probe", true
	}
	id, err := rdb.ClusterMyID(ctx).Result()
	if err != nil {
		return "", false
	}
	shards, err := rdb.ClusterShards(ctx).Result()
	if err != nil {
		return "", false
	}
	var own []redis.SlotRange
	for _, sh := range shards {
		for _, n := range sh.Nodes {
			if n.ID == id {
				own = append(own, sh.Slots...)
			}
		}
	}
	for i := range 10000 {
		key := fmt.Sprintf("redistest:replica-probe:%d", i)
		slot, err := rdb.ClusterKeySlot(ctx, key).Result()
		if err != nil {
			return "", false
		}
		for _, r := range own {
			if r.Start <= slot && slot <= r.End {
				return key, true
			}
		}
	}
	return "", false
}
