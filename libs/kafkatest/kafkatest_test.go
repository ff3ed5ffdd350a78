package kafkatest_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/kafkatest"
)

// ReadMessages sees every record of a multi-partition topic, each
// partition in order.
func TestReadMessagesReadsAllPartitions(t *testing.T) {
	brokers := kafkatest.StartBroker(t)
	const topic = "spread"
	kafkatest.CreateTopic(t, brokers, topic, 4)

	w := &kafkago.Writer{Addr: kafkago.TCP(brokers...), Topic: topic, Balancer: &kafkago.Hash{}, RequiredAcks: kafkago.RequireAll}
	t.Cleanup(func() { _ = w.Close() })
	var want []string
	var msgs []kafkago.Message
	for i := range 20 {
		v := fmt.Sprintf("%02d", i)
		want = append(want, v)
		msgs = append(msgs, kafkago.Message{Key: []byte(fmt.Sprintf("key-%d", i%5)), Value: []byte(v)})
	}
	require.NoError(t, w.WriteMessages(context.Background(), msgs...))

	recs := kafkatest.ReadMessages(t, brokers, topic, len(want))
	var got []string
	lastOffset := map[int]int64{}
	for _, r := range recs {
		got = append(got, string(r.Value))
		if last, ok := lastOffset[r.Partition]; ok {
			assert.Greater(t, r.Offset, last, "partition %d out of order", r.Partition)
		}
		lastOffset[r.Partition] = r.Offset
	}
	sort.Strings(got)
	assert.Equal(t, want, got)
	assert.Greater(t, len(lastOffset), 1, "records should span partitions")
}

// CreateTopic makes exactly the partitions asked for, unlike auto creation.
func TestCreateTopicPartitions(t *testing.T) {
	brokers := kafkatest.StartBroker(t)
	kafkatest.CreateTopic(t, brokers, "three", 3)

	conn, err := kafkago.Dial("tcp", brokers[0])
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	parts, err := conn.ReadPartitions("three")
	require.NoError(t, err)
	assert.Len(t, parts, 3)
}
