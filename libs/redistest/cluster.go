package redistest

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
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
	// Replicas maps a primary's address to its replica's, for a cluster
	// from StartClusterWithReplicas.
	Replicas map[string]*Server
}

// clusterSize is the number of primaries: the smallest cluster Redis
// accepts without replicas.
const clusterSize = 3

// StartCluster launches three redis-server processes in cluster mode on
// free loopback ports, joins them, assigns every slot, and waits until
// each node reports the cluster ok. The processes stop when the test ends.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	c := &Cluster{}
	for range clusterSize {
		c.Addrs = append(c.Addrs, startClusterNode(tb).Addr)
	}
	if err := FormCluster(context.Background(), c.Addrs); err != nil {
		tb.Fatalf("forming the cluster: %v", err)
	}
	return c
}

// StartClusterWithReplicas is StartCluster with one replica per primary,
// each joined to the cluster and synced, as production runs it: WAIT on a
// primary counts its replica.
func StartClusterWithReplicas(tb testing.TB) *Cluster {
	tb.Helper()
	c := StartCluster(tb)
	c.Replicas = map[string]*Server{}
	ctx := context.Background()
	host, port, _ := net.SplitHostPort(c.Addrs[0])
	for _, primary := range c.Addrs {
		p := redis.NewClient(&redis.Options{Addr: primary})
		id, err := p.Do(ctx, "CLUSTER", "MYID").Text()
		_ = p.Close()
		if err != nil {
			tb.Fatalf("cluster id of %s: %v", primary, err)
		}
		r := startClusterNode(tb)
		rc := redis.NewClient(&redis.Options{Addr: r.Addr})
		defer rc.Close()
		if err := rc.ClusterMeet(ctx, host, port).Err(); err != nil {
			tb.Fatalf("introducing replica %s: %v", r.Addr, err)
		}
		// The replica must know its primary by gossip before it can follow it.
		if err := waitFor(func() bool { return rc.Do(ctx, "CLUSTER", "REPLICATE", id).Err() == nil }); err != nil {
			tb.Fatalf("replica %s of %s: %v", r.Addr, primary, err)
		}
		if err := waitFor(func() bool {
			info, err := rc.Info(ctx, "replication").Result()
			return err == nil && strings.Contains(info, "master_link_status:up") && strings.Contains(info, "master_sync_in_progress:0") &&
				primaryCountsReplica(primary)
		}); err != nil {
			tb.Fatalf("replica %s of %s: link not up: %v", r.Addr, primary, err)
		}
		c.Replicas[primary] = r
	}
	return c
}

func startClusterNode(tb testing.TB) *Server {
	tb.Helper()
	dir := tb.TempDir()
	return start(tb, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"),
		"--cluster-node-timeout", "2000")
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
