// Command kafka-broker is the Kafka-protocol test broker of the container
// images: three kfake brokers (libs/kafka/kafkadev) that listen on every
// interface, advertise the name other containers reach them by, hold the
// declared topics (kafka.Topics, created at start: no producer creates
// one), and keep their topics, records and group offsets in a data
// directory (a volume), with an fsync per batch, so a restarted container
// carries on where it stopped, after a SIGKILL too (recoverTopics). It is
// for dev, tests and the e2e, never production, which runs a Kafka
// cluster (docs/kafka.md).
//
// Environment:
//
//	KAFKA_LISTEN_ADDR      where the first broker listens (default ":9092");
//	                       the other two take the next two ports
//	KAFKA_ADVERTISED_ADDR  host:port clients are told to use for the first
//	                       broker (default the hostname and the listen
//	                       port); the others have the next two ports
//	KAFKA_DATA_DIR         persistence directory (default "/data"; "" keeps
//	                       everything in memory)
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafka/kafkadev"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, lookup, os.Stdout, nil); err != nil {
		fmt.Fprintf(os.Stderr, "kafka-broker: %v\n", err)
		os.Exit(1)
	}
}

// lookup tells an unset variable from an empty one: KAFKA_DATA_DIR="" is
// a choice (memory only).
func lookup(k string) (string, bool) { return os.LookupEnv(k) }

type config struct {
	Listen    string
	Advertise string
	DataDir   string
}

func loadConfig(lookup func(string) (string, bool)) (config, error) {
	get := func(k, def string) string {
		if v, ok := lookup(k); ok {
			return v
		}
		return def
	}
	c := config{Listen: get("KAFKA_LISTEN_ADDR", ":9092"), DataDir: get("KAFKA_DATA_DIR", "/data")}
	_, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return c, fmt.Errorf("KAFKA_LISTEN_ADDR=%q: %w", c.Listen, err)
	}
	host, _ := os.Hostname()
	c.Advertise = get("KAFKA_ADVERTISED_ADDR", net.JoinHostPort(host, port))
	if h, _, err := net.SplitHostPort(c.Advertise); err != nil || h == "" {
		return c, errors.New("KAFKA_ADVERTISED_ADDR must be host:port")
	}
	return c, nil
}

// run serves until ctx ends; ready, when not nil, is told the advertised
// address once the broker listens.
func run(ctx context.Context, lookup func(string) (string, bool), stdout io.Writer, ready func(addr string)) error {
	cfg, err := loadConfig(lookup)
	if err != nil {
		return err
	}
	if cfg.DataDir != "" {
		recovered, err := recoverTopics(cfg.DataDir)
		if err != nil {
			return fmt.Errorf("recovering the topics of %s: %w", cfg.DataDir, err)
		}
		for _, t := range recovered {
			fmt.Fprintf(stdout, "kafka-broker: topic %s was on disk but not in topics.json (created by a producer, then an unclean stop): recovered\n", t)
		}
	}
	c, err := kafkadev.Served(cfg.Listen, cfg.Advertise, kafkadev.Config{DataDir: cfg.DataDir, Topics: kafka.Topics})
	if err != nil {
		return err
	}
	defer c.Close()
	persist := cfg.DataDir
	if persist == "" {
		persist = "(memory only)"
	}
	fmt.Fprintf(stdout, "kafka-broker listening on %s, advertised as %s, data in %s, %d topics\n", cfg.Listen, strings.Join(c.ListenAddrs(), ", "), persist, len(kafka.Topics))
	if ready != nil {
		ready(cfg.Advertise)
	}
	<-ctx.Done()
	fmt.Fprintln(stdout, "kafka-broker stopping")
	return nil
}
