package events_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/services/cases/internal/events"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// BenchmarkOpenedToReadable publishes case-opened facts to a real
// Kafka-protocol broker at a steady 200 a second, with the consumer
// running as the service runs it, and measures how long each case takes
// to become readable (store.Cases.Load finds it, which is what every read
// route does). Target: p99 under 100 ms.
func BenchmarkOpenedToReadable(b *testing.B) {
	b.Cleanup(service.UseGCTarget()) // as the services run
	brokers := kafkatest.StartBroker(b)
	kafkatest.CreateTopic(b, brokers, events.OpenedTopic, 4)
	rdb := redistest.NewClient(b)
	cases := store.NewCases(rdb)
	handler := events.NewOpened(cases, discard())
	producer, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers})
	require.NoError(b, err)
	b.Cleanup(func() { _ = producer.Close() })
	dlq, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers})
	require.NoError(b, err)
	b.Cleanup(func() { _ = dlq.Close() })
	consumer, err := kafka.NewConsumer(kafka.ConsumerConfig{
		Brokers: brokers, GroupID: "bench", Topic: events.OpenedTopic, StartOffset: kafka.FirstOffset,
		HeartbeatInterval: 200 * time.Millisecond, SessionTimeout: 6 * time.Second, RebalanceTimeout: 2 * time.Second,
	}, handler.Handle, dlq, discard(), nil)
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- consumer.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })

	// Warm up: the group joins and the first case is applied.
	id, payload := openedPayload(b, 1_000_000)
	require.NoError(b, producer.Publish(context.Background(), kafka.Message{Topic: events.OpenedTopic, Key: id, EventID: "case-opened:" + id, Schema: events.OpenedSchema, Value: payload}))
	require.Eventually(b, func() bool { _, err := cases.Load(context.Background(), id); return err == nil }, kafkatest.Timeout, 10*time.Millisecond)

	const rate = 200 // case-opened facts a second
	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		id, payload := openedPayload(b, i)
		t0 := time.Now()
		require.NoError(b, producer.Publish(context.Background(), kafka.Message{Topic: events.OpenedTopic, Key: id, EventID: "case-opened:" + id, Schema: events.OpenedSchema, Value: payload}))
		for {
			_, err := cases.Load(context.Background(), id)
			if err == nil {
				break
			}
			require.True(b, errors.Is(err, store.ErrNotFound), "%v", err)
			if time.Since(t0) > kafkatest.Timeout {
				b.Fatalf("case %s not readable after %s", id, kafkatest.Timeout)
			}
			time.Sleep(time.Millisecond) // polling as a partner would, at 1 ms
		}
		latencies = append(latencies, time.Since(t0))
		if wait := time.Second/rate - time.Since(t0); wait > 0 {
			time.Sleep(wait) // the offered load, not a wait for a condition
		}
	}
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
}
