package events_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
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
	kafkatest.CreateTopic(b, brokers, api.CaseOpenedTopic, 4)
	rdb := redistest.NewClient(b)
	cases := newCases(b, rdb)
	handler := events.NewOpened(caseflow.New(cases, nil), discard())
	producer, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers})
	require.NoError(b, err)
	b.Cleanup(func() { _ = producer.Close() })
	dlq, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers})
	require.NoError(b, err)
	b.Cleanup(func() { _ = dlq.Close() })
	consumer, err := kafka.NewConsumer(kafka.ConsumerConfig{
		Brokers: brokers, GroupID: "bench", Topic: api.CaseOpenedTopic, StartOffset: kafka.FirstOffset,
		HeartbeatInterval: 200 * time.Millisecond, SessionTimeout: 6 * time.Second, RebalanceTimeout: 2 * time.Second,
	}, handler.Handle, dlq, discard(), nil)
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- consumer.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })

	// Warm up: the group joins and the first case is applied.
	id, payload := openedPayload(b, 1_000_000)
	require.NoError(b, producer.Publish(context.Background(), kafka.Message{Topic: api.CaseOpenedTopic, Key: id, EventID: "case-opened:" + id, Schema: api.CaseOpenedSchema, Value: payload}))
	require.Eventually(b, func() bool { _, err := cases.Load(context.Background(), id); return err == nil }, kafkatest.Timeout, 10*time.Millisecond)

	const rate = 200 // case-opened facts a second
	latencies := make([]time.Duration, 0, b.N)
	// poll paces the reads of a case not yet readable (1 ms, as a partner
	// polling hard would); offer paces the publications at the offered
	// load. Both are tickers, so no wait is a guess at how long the
	// consumer takes.
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	offer := time.NewTicker(time.Second / rate)
	defer offer.Stop()
	b.ResetTimer()
	for i := range b.N {
		id, payload := openedPayload(b, i)
		t0 := time.Now()
		require.NoError(b, producer.Publish(context.Background(), kafka.Message{Topic: api.CaseOpenedTopic, Key: id, EventID: "case-opened:" + id, Schema: api.CaseOpenedSchema, Value: payload}))
		for {
			_, err := cases.Load(context.Background(), id)
			if err == nil {
				break
			}
			require.True(b, errors.Is(err, store.ErrNotFound), "%v", err)
			if time.Since(t0) > kafkatest.Timeout {
				b.Fatalf("case %s not readable after %s", id, kafkatest.Timeout)
			}
			<-poll.C
		}
		latencies = append(latencies, time.Since(t0))
		<-offer.C // the offered load, not a wait for a condition
	}
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
}
