// Package kafkadev starts an in-process Kafka-protocol test broker (kfake)
// for the dev stack and for tests. It lives apart from kafkatest so a dev
// binary can run a broker without linking the testing package.
//
// The cluster is shaped like the production one where that changes what
// clients do: three brokers, so partitions have leaders on different
// brokers, leaders and group coordinators can move, and the declared
// replication factor 3 with min.insync.replicas 2 is accepted as it is;
// no automatic topic creation, so every topic a service uses must be in
// the declared table (kafka.Topics), which Start creates.
package kafkadev

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/pcourt/pcourt/libs/kafka"
)

// Brokers is how many brokers a dev cluster runs.
const Brokers = 3

// Config describes a dev cluster. The zero value is an in-memory cluster
// on free ports with no topics.
type Config struct {
	// Ports are the brokers' ports on 127.0.0.1, one per broker. Empty
	// lets the kernel pick a free port for each; read them from
	// ListenAddrs.
	Ports []int
	// DataDir, when set, keeps topics, records and group offsets there,
	// with an fsync per batch, reloaded by the next Start on the same
	// directory, so a dev stack restart carries on where it stopped.
	DataDir string
	// Topics are created at start; those a reloaded DataDir already holds
	// are kept as they are.
	Topics []kafka.Topic
	// Options are further kfake options: TLS listeners, SASL users, group
	// timeouts for tests.
	Options []kfake.Opt
	// Security is how Start itself connects to create the topics, when
	// Options make the listeners want TLS or SASL.
	Security kafka.Security
}

// Start starts the cluster and creates cfg.Topics. The caller closes it.
func Start(cfg Config) (*kfake.Cluster, error) {
	ports := cfg.Ports
	switch len(ports) {
	case 0:
		ports = make([]int, Brokers)
	case Brokers:
	default:
		return nil, fmt.Errorf("kafkadev: %d ports for %d brokers", len(ports), Brokers)
	}
	// Ports(0, …) binds 127.0.0.1:0 inside kfake, which avoids the race of
	// probing a free port and binding it later.
	return start(cfg, kfake.Ports(ports...))
}

// Served is a cluster for other machines (the kafka-broker image): broker
// i listens on listen's host at its port plus i (":9092" gives :9092,
// :9093, :9094 on every interface) and tells clients in its metadata to
// reach it at advertise's host with the same port ("kafka:9092" gives
// kafka:9092 …), which kfake alone cannot do: it binds 127.0.0.1 and
// advertises what it bound. cfg.Ports is ignored.
func Served(listen, advertise string, cfg Config) (*kfake.Cluster, error) {
	lhost, lport, err := hostPort(listen, true)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", listen, err)
	}
	ahost, aport, err := hostPort(advertise, false)
	if err != nil {
		return nil, fmt.Errorf("advertised address %q: %w", advertise, err)
	}
	next := 0
	return start(cfg, kfake.NumBrokers(Brokers), kfake.ListenFn(func(network, _ string) (net.Listener, error) {
		if next == Brokers {
			return nil, fmt.Errorf("kafkadev: %d brokers only", Brokers)
		}
		i := next
		next++
		ln, err := net.Listen(network, net.JoinHostPort(lhost, strconv.Itoa(lport+i)))
		if err != nil {
			return nil, err
		}
		return advertised{Listener: ln, addr: advertisedAddr(net.JoinHostPort(ahost, strconv.Itoa(aport+i)))}, nil
	}))
}

// hostPort splits a host:port whose port leaves room for Brokers ports.
func hostPort(addr string, emptyHost bool) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil || (host == "" && !emptyHost) {
		return "", 0, errors.New("not host:port")
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port+Brokers-1 > 65535 {
		return "", 0, errors.New("bad port")
	}
	return host, port, nil
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

func start(cfg Config, listen ...kfake.Opt) (*kfake.Cluster, error) {
	for _, t := range cfg.Topics {
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("kafkadev: %w", err)
		}
	}
	opts := append([]kfake.Opt{}, listen...)
	if cfg.DataDir != "" {
		opts = append(opts, kfake.DataDir(cfg.DataDir), kfake.SyncWrites())
	}
	opts = append(opts, cfg.Options...)
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("starting kfake: %w", err)
	}
	if err := createTopics(c, cfg); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// createTopics creates topics the way an operator would, with their
// partitions, replication factor and configs, keeping any that exist.
func createTopics(c *kfake.Cluster, cfg Config) error {
	if len(cfg.Topics) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := kafka.CreateTopics(ctx, c.ListenAddrs(), cfg.Security, cfg.Topics...); err != nil {
		return fmt.Errorf("kafkadev: %w", err)
	}
	return nil
}
