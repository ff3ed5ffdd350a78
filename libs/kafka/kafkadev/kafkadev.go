// Package kafkadev starts an in-process Kafka broker (kfake) for the dev
// stack and for tests. It lives apart from kafkatest so a dev binary can
// run a broker without linking the testing package.
package kafkadev

import (
	"errors"
	"fmt"
	"net"
	"strconv"

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
	return start(port, dataDir)
}

// Served is a broker for other machines (the kafka-broker image): it
// listens on listen (e.g. ":9092", every interface) and tells clients in
// its metadata to reach it at advertise (e.g. "kafka:9092"), which kfake
// alone cannot do: it binds 127.0.0.1 and advertises what it bound.
// dataDir is as for NewCluster.
func Served(listen, advertise, dataDir string) (*kfake.Cluster, error) {
	host, p, err := net.SplitHostPort(advertise)
	if err != nil || host == "" {
		return nil, fmt.Errorf("advertised address %q is not host:port", advertise)
	}
	if _, err := strconv.ParseUint(p, 10, 16); err != nil {
		return nil, fmt.Errorf("advertised address %q: bad port", advertise)
	}
	listened := false
	return start(0, dataDir, kfake.ListenFn(func(network, _ string) (net.Listener, error) {
		if listened {
			return nil, errors.New("kafkadev: one broker only")
		}
		listened = true
		ln, err := net.Listen(network, listen)
		if err != nil {
			return nil, err
		}
		return advertised{Listener: ln, addr: advertisedAddr(advertise)}, nil
	}))
}

// advertised is a listener that reports the address clients must use.
type advertised struct {
	net.Listener
	addr net.Addr
}

func (a advertised) Addr() net.Addr { return a.addr }

// advertisedAddr is a host:port as a net.Addr; the host may be a name.
type advertisedAddr string

func (advertisedAddr) Network() string  { return "tcp" }
func (a advertisedAddr) String() string { return string(a) }

func start(port int, dataDir string, extra ...kfake.Opt) (*kfake.Cluster, error) {
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
	opts = append(opts, extra...)
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("starting kfake on port %d: %w", port, err)
	}
	return c, nil
}
