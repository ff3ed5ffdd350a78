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

	"github.com/pcourt/pcourt/libs/kafka/kafkadev"
)

// Timeout bounds every wait in this package. kfake group rebalances can
// take seconds on a loaded machine; waits poll, so the bound costs nothing
// when things work.
const Timeout = 30 * time.Second

// StartBroker starts a single-broker in-memory kfake cluster on a free port
// with automatic topic creation (10 partitions per topic), closes it when
// the test ends, and returns the seed broker addresses.
func StartBroker(tb testing.TB) []string {
	tb.Helper()
	c, err := kafkadev.NewCluster(0, "")
	if err != nil {
		tb.Fatalf("kafkatest: %v", err)
	}
	tb.Cleanup(c.Close)
	return c.ListenAddrs()
}

// CreateTopic creates topic with the given partition count, so a test does
// not depend on the broker's auto-creation default.
func CreateTopic(tb testing.TB, brokers []string, topic string, partitions int) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	client := &kafkago.Client{Addr: kafkago.TCP(brokers...)}
	resp, err := client.CreateTopics(ctx, &kafkago.CreateTopicsRequest{
		Topics: []kafkago.TopicConfig{{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1}},
	})
	if err == nil {
		err = resp.Errors[topic]
	}
	if err != nil {
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
