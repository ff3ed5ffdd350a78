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

// Cluster is a Redis Cluster of three primaries, each a redis-server
// process owned by one test, with the 16384 hash slots split between them.
// It is the production topology in miniature: a script whose keys span
// two slots fails here with CROSSSLOT, as it would in production.
type Cluster struct {
	Addrs []string
}

// clusterSize is the number of primaries: the smallest cluster Redis
// accepts without replicas.
const clusterSize = 3

// StartCluster launches three redis-server processes in cluster mode on
// free loopback ports, joins them, assigns every slot, and waits until
// each node reports the cluster ok. The processes stop when the test ends.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatalf("redis-server not found on PATH: install it (Debian: apt-get install redis-server); integration tests never fake Redis")
	}
	c := &Cluster{}
	for i := range clusterSize {
		port := freePort(tb)
		dir := filepath.Join(tb.TempDir(), strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatalf("cluster node dir: %v", err)
		}
		logPath := filepath.Join(dir, "redis.log")
		cmd := exec.Command(bin,
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"),
			"--cluster-node-timeout", "2000",
			"--save", "", "--appendonly", "no",
			"--dir", dir, "--logfile", logPath, "--loglevel", "warning")
		if err := cmd.Start(); err != nil {
			tb.Fatalf("starting redis-server: %v", err)
		}
		tb.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		if err := waitReady(addr); err != nil {
			log, _ := os.ReadFile(logPath)
			tb.Fatalf("redis-server on %s: %v\n%s", addr, err, log)
		}
		c.Addrs = append(c.Addrs, addr)
	}
	if err := FormCluster(context.Background(), c.Addrs); err != nil {
		tb.Fatalf("forming the cluster: %v", err)
	}
	return c
}

// FormCluster makes one cluster of fresh redis-server processes started
// with --cluster-enabled yes: it introduces them to each other, gives
// node i the i-th share of the 16384 slots, and waits until every node
// sees the whole cluster ok. The dev stack (make run) forms its cluster
// with it too.
func FormCluster(ctx context.Context, addrs []string) error {
	nodes := make([]*redis.Client, len(addrs))
	for i, addr := range addrs {
		nodes[i] = redis.NewClient(&redis.Options{Addr: addr})
		defer nodes[i].Close()
	}
	known := fmt.Sprintf("cluster_known_nodes:%d", len(nodes))
	formed := func() bool {
		for _, n := range nodes {
			info, err := n.ClusterInfo(ctx).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, known) {
				return false
			}
		}
		return true
	}
	if formed() {
		return nil // nodes that kept their nodes.conf from an earlier run
	}
	for i, n := range nodes {
		first, last := i*16384/len(nodes), (i+1)*16384/len(nodes)-1
		if err := n.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", first, last).Err(); err != nil {
			return fmt.Errorf("assigning slots %d-%d to %s: %w", first, last, addrs[i], err)
		}
		if i == 0 {
			continue
		}
		host, port, _ := net.SplitHostPort(addrs[0])
		if err := n.ClusterMeet(ctx, host, port).Err(); err != nil {
			return fmt.Errorf("introducing %s: %w", addrs[i], err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok := true
		for _, n := range nodes {
			info, err := n.ClusterInfo(ctx).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, known) {
				ok = false
				break
			}
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster not ok after 20s")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond): // polling gossip between processes; nothing to wait on
		}
	}
}

// Client returns a cluster client, closed when the test ends.
func (c *Cluster) Client(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	tb.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// NewClusterClient starts a cluster and returns a client of it.
func NewClusterClient(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	return StartCluster(tb).Client(tb)
}

// EachTopology runs test once against a standalone redis-server and once
// against a three-primary cluster, as subtests named standalone and
// cluster: the code under test gets a redis.UniversalClient either way,
// as services do from libs/redisclient.
func EachTopology(t *testing.T, test func(t *testing.T, rdb redis.UniversalClient)) {
	t.Helper()
	t.Run("standalone", func(t *testing.T) { test(t, NewClient(t)) })
	t.Run("cluster", func(t *testing.T) { test(t, NewClusterClient(t)) })
}
