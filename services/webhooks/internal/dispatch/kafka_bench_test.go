package dispatch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/services/webhooks/internal/delivery"
	"github.com/pcourt/pcourt/services/webhooks/internal/dispatch"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/events"
)

// BenchmarkKafkaToDelivered is the whole path at a fixed offered load:
// b.N events are published to pc.cases.events.v2 on a kfake broker (the
// Kafka wire protocol, the platform's kafka-go producer, default 5 ms batch
// timeout) at a fixed rate; the service's consumer reads them, the
// fan-out schedules one delivery each (20 endpoints, one subscribed per
// event type), the sender signs and POSTs them to a local receiver that
// acknowledges each after reading its body (benchReceiver). It reports the
// time from the Publish call to the receipt (p50, p95, p99), the load actually offered and the
// signed deliveries per second achieved. The per-endpoint rate limit is
// raised out of the way (50/s per endpoint is above its default 10/s).
//
// It runs at 1,000 events a second, the load the issue names, and at 500,
// which one consumer sustains on the 2-core machine: where the offered load
// exceeds what the consumer handles (one record at a time: the fan-out,
// then a synchronous offset commit), the backlog and so the latency grow
// with the run. consumed-p99-ms (publish → the handler starts) and
// handle-p50-ms (the fan-out of one record) show where the time goes.
func BenchmarkKafkaToDelivered(b *testing.B) {
	b.Cleanup(service.UseGCTarget()) // as the services run
	for _, perSecond := range []int{1000, 500} {
		b.Run(fmt.Sprintf("%d-per-s", perSecond), func(b *testing.B) { kafkaToDelivered(b, perSecond) })
	}
}

func kafkaToDelivered(b *testing.B, perSecond int) {
	const endpointCount = 20
	cfg := dispatch.DefaultConfig()
	cfg.Rate = delivery.Rate{PerSecond: 1e6, Burst: 1e6}
	f := newFixture(b, cfg)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	brokers := kafkatest.StartBroker(b)
	kafkatest.CreateTopic(b, brokers, events.Topic, 10)

	r := newBenchReceiver(b, f)
	for i := range endpointCount {
		require.NoError(b, f.eps.Create(f.ctx, endpoints.New(fmt.Sprintf("we_%02d", i), acme,
			endpoints.Registration{URL: r.url + "/hook", EventTypes: []string{fmt.Sprintf("case.t%d", i)}}, time.Now())))
	}

	producer, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers, ClientID: "bench"})
	require.NoError(b, err)
	b.Cleanup(func() { _ = producer.Close() })
	fan := &events.Fanout{Endpoints: f.eps, Deliveries: f.dlv, Logger: logger, Now: time.Now, Scheduled: f.sender.Nudge}
	// The handler notes when each event reached the consumer, to split
	// the latency into Kafka (publish → consumed) and the rest.
	var mu sync.Mutex
	consumed := make([]time.Duration, 0, b.N)
	var handled []time.Duration
	handle := func(ctx context.Context, m kafka.Message) error {
		now := time.Now()
		at, ok := r.offeredAt(m.EventID)
		err := fan.Handle(ctx, m)
		mu.Lock()
		if ok {
			consumed = append(consumed, now.Sub(at))
		}
		handled = append(handled, time.Since(now))
		mu.Unlock()
		return err
	}
	consumer, err := kafka.NewConsumer(kafka.ConsumerConfig{Brokers: brokers, ClientID: "webhooks", GroupID: "webhooks-bench", Topic: events.Topic, CommitInterval: 100 * time.Millisecond},
		handle, producer, logger, nil)
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = consumer.Run(ctx) })
	wg.Go(func() { _ = f.sender.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()

	message := func(id string, i int) kafka.Message {
		ev := fmt.Sprintf(`{"schemaVersion":"case-event-v2","eventId":%q,"sequence":1,"type":"case.t%d","occurredAt":"2026-11-23T12:00:00.000Z","caseId":"case_%d","externalCaseId":"ext","actionRequired":false}`,
			id, i%endpointCount, i)
		value, _ := json.Marshal(events.Envelope{SchemaVersion: events.EnvelopeSchema,
			Recipients: []events.Recipient{{Tenant: acme.Tenant, Environment: acme.Environment, PartnerID: acme.PartnerID}}, Event: json.RawMessage(ev)})
		return kafka.Message{Topic: events.Topic, Key: fmt.Sprintf("case_%d", i), EventID: id, Schema: events.EnvelopeSchema, Value: value}
	}
	// Warm up: the consumer has joined its group once one event went through.
	require.NoError(b, producer.Publish(ctx, message("evt_warm", 0)))
	for deadline := time.Now().Add(kafkatest.Timeout); r.received.Load() < 1; {
		require.True(b, time.Now().Before(deadline), "the warm-up event was not delivered")
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
	r.received.Store(0)

	// Publish is synchronous (it returns when the broker acknowledged), so
	// a pool of publishers keeps the offered rate whatever one call takes.
	queue := make(chan int, 4096)
	var publishers sync.WaitGroup
	for range 32 {
		publishers.Go(func() {
			for i := range queue {
				id := fmt.Sprintf("evt_%d", i)
				m := message(id, i)
				r.offer(id)
				if err := producer.Publish(ctx, m); err != nil {
					b.Errorf("publishing %s: %v", id, err)
				}
			}
		})
	}
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		// Event i is due at start + i/perSecond; a late loop catches up at
		// once, so the load offered is perSecond on average whatever the
		// scheduler does to one tick.
		if wait := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(perSecond))); wait > 0 {
			time.Sleep(wait) // pacing the offered load, not waiting for a result
		}
		queue <- i
	}
	close(queue)
	offerSpan := time.Since(start)
	publishers.Wait()
	for deadline := time.Now().Add(time.Minute); r.received.Load() < int64(b.N) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond) // polling with a deadline
	}
	b.StopTimer()
	require.Equal(b, int64(b.N), r.received.Load(), "every event is delivered once")
	require.NoError(b, r.firstVerified())
	r.report(b, 50, 95, 99)
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(consumed)
	b.ReportMetric(float64(consumed[len(consumed)*99/100].Microseconds())/1000, "consumed-p99-ms")
	slices.Sort(handled)
	b.ReportMetric(float64(handled[len(handled)*50/100].Microseconds())/1000, "handle-p50-ms")

	b.ReportMetric(float64(b.N)/offerSpan.Seconds(), "offered-events/s")
	b.ReportMetric(float64(b.N)/time.Unix(0, r.lastAt.Load()).Sub(start).Seconds(), "deliveries/s")
}
