// Package kafkatest gives tests a real Kafka wire protocol: an in-process
// kfake broker per test, plus helpers to create topics and read back what
// was written, using the same kafka-go client the platform uses.
package kafkatest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafka/kafkadev"
)

// Timeout bounds every wait in this package. kfake group rebalances can
// take seconds on a loaded machine; waits poll, so the bound costs nothing
// when things work.
const Timeout = 30 * time.Second

// StartBroker starts an in-memory Kafka-protocol test cluster of
// kafkadev.Brokers kfake brokers on free ports holding every declared
// topic (kafka.Topics), closes it when the test ends, and returns the seed
// broker addresses. Like a production cluster it creates no topic on
// demand: a test of its own topic creates it with CreateTopic.
func StartBroker(tb testing.TB) []string {
	tb.Helper()
	return StartCluster(tb, kafkadev.Config{}).ListenAddrs()
}

// StartCluster is StartBroker with cfg's options (TLS, SASL, fault
// hooks), returning the cluster itself so a test can move partition
// leaders or make requests fail. cfg.Topics defaults to kafka.Topics.
func StartCluster(tb testing.TB, cfg kafkadev.Config) *kfake.Cluster {
	tb.Helper()
	if cfg.Topics == nil {
		cfg.Topics = kafka.Topics
	}
	c, err := kafkadev.Start(cfg)
	if err != nil {
		tb.Fatalf("kafkatest: %v", err)
	}
	tb.Cleanup(c.Close)
	return c
}

// CreateTopic creates topic and its dead-letter topic (topic plus
// kafka.DeadLetterSuffix) with the given partition count, replicated on
// every broker, for a test that does not use a declared topic.
func CreateTopic(tb testing.TB, brokers []string, topic string, partitions int) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	var topics []kafka.Topic
	for _, name := range []string{topic, topic + kafka.DeadLetterSuffix} {
		topics = append(topics, kafka.Topic{Name: name, Partitions: partitions,
			ReplicationFactor: kafkadev.Brokers, MinInsyncReplicas: 2, Retention: 24 * time.Hour})
	}
	if err := kafka.CreateTopics(ctx, brokers, kafka.Security{}, topics...); err != nil {
		tb.Fatalf("kafkatest: creating topic %s: %v", topic, err)
	}
}

// ReadMessages returns the first n records of topic, reading all its
// partitions from the start without a consumer group, so it commits nothing
// and disturbs no group under test. Records of one partition keep their
// order; partitions interleave. It fails the test if n records do not
// arrive within Timeout.
func ReadMessages(tb testing.TB, brokers []string, topic string, n int) []kafkago.Message {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()

	partitions, err := readPartitions(ctx, brokers, topic)
	if err != nil {
		tb.Fatalf("kafkatest: reading partitions of %s: %v", topic, err)
	}

	records := make(chan kafkago.Message)
	var wg sync.WaitGroup
	for _, p := range partitions {
		r := kafkago.NewReader(kafkago.ReaderConfig{
			Brokers:   brokers,
			Topic:     topic,
			Partition: p.ID,
			// Records wake a waiting fetch at once; a longer MaxWait only
			// widens kafka-go's margin between the broker's wait and its
			// own read deadline, which is MaxWait/4 below one second.
			MaxWait: 500 * time.Millisecond,
		})
		wg.Go(func() {
			defer r.Close()
			for {
				rec, err := r.ReadMessage(ctx)
				if err != nil {
					return
				}
				select {
				case records <- rec:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	defer wg.Wait()
	defer cancel() // runs before wg.Wait: stops the readers

	got := make([]kafkago.Message, 0, n)
	for len(got) < n {
		select {
		case rec := <-records:
			got = append(got, rec)
		case <-ctx.Done():
			tb.Fatalf("kafkatest: read %d of %d records from %s within %v", len(got), n, topic, Timeout)
		}
	}
	return got
}

// readPartitions lists topic's partitions, retrying while a just-created
// topic has no leader yet.
func readPartitions(ctx context.Context, brokers []string, topic string) ([]kafkago.Partition, error) {
	var lastErr error
	for {
		conn, err := kafkago.DialContext(ctx, "tcp", brokers[0])
		if err == nil {
			var ps []kafkago.Partition
			ps, err = conn.ReadPartitions(topic)
			conn.Close()
			if err == nil && len(ps) > 0 {
				return ps, nil
			}
		}
		if err == nil {
			err = errors.New("no partitions")
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return nil, lastErr
		case <-time.After(50 * time.Millisecond):
		}
	}
}
