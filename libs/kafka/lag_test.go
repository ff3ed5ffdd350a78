package kafka_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
	"github.com/pcourt/pcourt/libs/telemetry/telemetrytest"
)

// TestLagIsWhatTheGroupHasNotCommitted publishes to a three-partition
// topic on the Kafka-protocol test broker before any consumer runs: the
// group's lag, per partition, is every message there; once a consumer has
// handled and committed them all it is zero on every partition.
func TestLagIsWhatTheGroupHasNotCommitted(t *testing.T) {
	brokers := kafkatest.StartBroker(t)
	kafkatest.CreateTopic(t, brokers, "orders", 3)
	tel := telemetrytest.Setup(t, "orders")
	var handled atomic.Int64
	handle := func(context.Context, kafka.Message) error { handled.Add(1); return nil }
	cfg := consumerConfig(brokers, "g1", "orders")
	c, err := kafka.NewConsumer(cfg, handle, newProducer(t, brokers, nil), testLogger(t), nil)
	require.NoError(t, err)
	require.NoError(t, c.ObserveLag(tel.Meter))

	producer := newProducer(t, brokers, nil)
	var batch []kafka.Message
	for i := range 9 {
		batch = append(batch, kafka.Message{Topic: "orders", Key: fmt.Sprintf("order-%d", i), EventID: fmt.Sprintf("ev-%d", i), Schema: "order.v1", Value: []byte("{}")})
	}
	require.NoError(t, producer.Publish(context.Background(), batch...))

	const name = "pcourt_kafka_consumer_lag"
	total := func(fams telemetrytest.Families) float64 {
		var sum float64
		for _, m := range fams.Series(name, map[string]string{"service": "orders", "topic": "orders", "group": "g1"}) {
			sum += telemetrytest.Value(m)
		}
		return sum
	}
	fams := telemetrytest.Scrape(t, tel.MetricsHandler)
	require.Len(t, fams.Series(name, nil), 3, "one series per partition")
	require.Equal(t, 9.0, total(fams), "nothing committed: every message is lag")

	startConsumer(t, cfg, handle, newProducer(t, brokers, nil), nil)
	require.Eventually(t, func() bool {
		return handled.Load() >= 9 && total(telemetrytest.Scrape(t, tel.MetricsHandler)) == 0
	}, waitFor, tick, "the lag falls to zero once the group has committed everything")
}
