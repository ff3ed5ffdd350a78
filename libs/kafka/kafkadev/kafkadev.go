// Package kafkadev starts an in-process Kafka broker (kfake) for the dev
// stack and for tests. It lives apart from kafkatest so a dev binary can
// run a broker without linking the testing package.
package kafkadev

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kfake"
)

// NewCluster starts a single-broker kfake cluster on 127.0.0.1:port with
// automatic topic creation (10 partitions per topic), like a dev Kafka.
// Port 0 lets the kernel pick a free port; read it from ListenAddrs. An
// empty dataDir keeps everything in memory; otherwise state is written to
// dataDir with an fsync per batch and reloaded by the next NewCluster on
// the same dataDir, so a dev stack restart keeps its topics, records and
// group offsets. The caller closes the cluster.
func NewCluster(port int, dataDir string) (*kfake.Cluster, error) {
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		// Ports(0) binds 127.0.0.1:0 inside kfake, which avoids the race of
		// probing a free port and binding it later.
		kfake.Ports(port),
		kfake.AllowAutoTopicCreation(),
	}
	if dataDir != "" {
		opts = append(opts, kfake.DataDir(dataDir), kfake.SyncWrites())
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("starting kfake on port %d: %w", port, err)
	}
	return c, nil
}
