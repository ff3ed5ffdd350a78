package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafka/kafkadev"
	"github.com/pcourt/pcourt/libs/kafkatest"
)

// The handler's ctx continues the publisher's trace: its span is a consumer
// span whose remote parent is the producer span, itself a child of the
// span Publish was called in.
func TestTraceContextCrossesKafka(t *testing.T) {
	brokers := kafkatest.StartBroker(t)
	const topic = "traced"
	kafkatest.CreateTopic(t, brokers, topic, 1)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	producer := newProducer(t, brokers, tp)

	ctx, request := tp.Tracer("test").Start(context.Background(), "POST /cases")
	require.NoError(t, producer.Publish(ctx, kafka.Message{
		Topic: topic, Key: "case-7", EventID: "ev-7", Schema: "cases.created.v1", Value: []byte("{}"),
	}))
	request.End()

	var rec recorder
	startConsumer(t, consumerConfig(brokers, "g-trace", topic), rec.handle, producer, tp)
	rec.waitMessages(t, 1)
	rec.mu.Lock()
	handlerSpan := trace.SpanContextFromContext(rec.ctxs[0])
	rec.mu.Unlock()

	require.True(t, handlerSpan.IsValid(), "handler ctx carries no span")
	assert.Equal(t, request.SpanContext().TraceID(), handlerSpan.TraceID(), "consumer is not in the publisher's trace")

	var publish, process sdktrace.ReadOnlySpan
	require.Eventually(t, func() bool {
		publish, process = nil, nil
		for _, s := range spans.Ended() {
			switch s.Name() {
			case topic + " publish":
				publish = s
			case topic + " process":
				process = s
			}
		}
		return publish != nil && process != nil
	}, waitFor, tick, "publish and process spans not both ended")

	assert.Equal(t, trace.SpanKindProducer, publish.SpanKind())
	assert.Equal(t, request.SpanContext().SpanID(), publish.Parent().SpanID(), "publish span is not a child of the request")

	assert.Equal(t, trace.SpanKindConsumer, process.SpanKind())
	assert.Equal(t, handlerSpan.SpanID(), process.SpanContext().SpanID(), "handler ctx does not hold the process span")
	assert.Equal(t, publish.SpanContext().SpanID(), process.Parent().SpanID(), "process span is not a child of the publish span")
	assert.True(t, process.Parent().IsRemote(), "process span's parent must come from the record headers")

	for _, s := range []sdktrace.ReadOnlySpan{publish, process} {
		attrs := attribute.NewSet(s.Attributes()...)
		for k, want := range map[attribute.Key]string{
			"messaging.system":            "kafka",
			"messaging.destination.name":  topic,
			"messaging.kafka.message.key": "case-7",
			"messaging.message.id":        "ev-7",
		} {
			got, ok := attrs.Value(k)
			assert.True(t, ok, "%s: no %s", s.Name(), k)
			assert.Equal(t, want, got.AsString(), "%s: %s", s.Name(), k)
		}
	}
}

// A message's Parent wins over the caller's span: an outbox relay publishes
// each event into the trace of the request that wrote it, linked to the
// relay's own span.
func TestPublishContinuesMessageParent(t *testing.T) {
	brokers := kafkatest.StartBroker(t)
	const topic = "relayed"
	kafkatest.CreateTopic(t, brokers, topic, 1)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	producer := newProducer(t, brokers, tp)
	tracer := tp.Tracer("test")

	// The request span ended long ago; only its context was stored.
	_, request := tracer.Start(context.Background(), "POST /filings")
	request.End()
	stored := trace.SpanContextFromContext(trace.ContextWithRemoteSpanContext(context.Background(), request.SpanContext()))

	relayCtx, relay := tracer.Start(context.Background(), "outbox relay")
	require.NoError(t, producer.Publish(relayCtx, kafka.Message{
		Topic: topic, Key: "case-8", EventID: "ev-8", Schema: "filings.v1", Parent: stored,
	}))
	relay.End()

	var rec recorder
	startConsumer(t, consumerConfig(brokers, "g-relayed", topic), rec.handle, producer, tp)
	rec.waitMessages(t, 1)
	rec.mu.Lock()
	handlerSpan := trace.SpanContextFromContext(rec.ctxs[0])
	rec.mu.Unlock()
	assert.Equal(t, request.SpanContext().TraceID(), handlerSpan.TraceID(), "consumer is not in the request's trace")

	var publish sdktrace.ReadOnlySpan
	for _, s := range spans.Ended() {
		if s.Name() == topic+" publish" {
			publish = s
		}
	}
	require.NotNil(t, publish, "no publish span")
	assert.Equal(t, request.SpanContext().SpanID(), publish.Parent().SpanID(), "publish span does not continue the message's Parent")
	require.Len(t, publish.Links(), 1, "publish span should link the relay's span")
	assert.Equal(t, relay.SpanContext().SpanID(), publish.Links()[0].SpanContext.SpanID())
}

// attempts counts handler calls per event and fails on demand.
type attempts struct {
	mu    sync.Mutex
	calls map[string]int
	order []string
	fail  func(eventID string, call int) error
}

func (a *attempts) handle(_ context.Context, msg kafka.Message) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.calls == nil {
		a.calls = map[string]int{}
	}
	a.calls[msg.EventID]++
	a.order = append(a.order, msg.EventID)
	return a.fail(msg.EventID, a.calls[msg.EventID])
}

func (a *attempts) count(eventID string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls[eventID]
}

// An offset is committed only once the handler succeeded: a restarted
// member of the group skips what was handled and gets again what was not,
// and cancelling Run interrupts a retry backoff at once.
// A handled message's offset is committed and an unhandled one's is not,
// whether commits go one by one or in periodic batches (flushed when the
// consumer stops).
func TestCommitsOnlyAfterSuccess(t *testing.T) {
	for name, interval := range map[string]time.Duration{"synchronous": 0, "batched": 100 * time.Millisecond} {
		t.Run(name, func(t *testing.T) {
			brokers := kafkatest.StartBroker(t)
			topic, group := "commits-"+name, "g-commits-"+name
			kafkatest.CreateTopic(t, brokers, topic, 10)
			producer := newProducer(t, brokers, nil)

			// One key, so all three share a partition and arrive in this order.
			for _, id := range []string{"ev-1", "ev-2", "ev-3"} {
				require.NoError(t, producer.Publish(context.Background(), kafka.Message{
					Topic: topic, Key: "case-3", EventID: id, Schema: "s.v1",
				}))
			}

			cfg := consumerConfig(brokers, group, topic)
			cfg.CommitInterval = interval
			cfg.RetryBackoff = 500 * time.Millisecond
			cfg.RetryBackoffMax = 10 * time.Second

			stuck := make(chan struct{})
			first := &attempts{fail: func(id string, call int) error {
				switch {
				case id == "ev-1" && call == 1:
					return errors.New("transient")
				case id == "ev-2":
					if call == 3 {
						close(stuck) // now waiting a 2s backoff
					}
					return errors.New("still failing")
				}
				return nil
			}}
			c1 := startConsumer(t, cfg, first.handle, producer, nil)
			select {
			case <-stuck:
			case <-time.After(waitFor):
				t.Fatal("ev-2 did not fail three times")
			}
			cancelled := time.Now()
			require.NoError(t, c1.stop(t), "Run must return nil on cancellation")
			assert.Less(t, time.Since(cancelled), time.Second, "Run waited out the retry backoff instead of stopping")

			assert.Equal(t, 2, first.count("ev-1"), "ev-1: fail once, then succeed")
			assert.Equal(t, 3, first.count("ev-2"), "no attempt may start after cancellation")
			assert.Equal(t, 0, first.count("ev-3"), "ev-3 is behind ev-2 on the partition")

			second := &attempts{fail: func(string, int) error { return nil }}
			startConsumer(t, cfg, second.handle, producer, nil)
			require.Eventually(t, func() bool { return second.count("ev-3") == 1 }, waitFor, tick, "ev-3 never reached the second consumer")
			second.mu.Lock()
			defer second.mu.Unlock()
			assert.Equal(t, []string{"ev-2", "ev-3"}, second.order, "ev-1 was handled and must not come back; ev-2 was not and must")
		})
	}
}

// A message that can never succeed (its handler says Permanent) goes to
// the dead-letter topic at once, with why and where it came from, which
// group refused it and when; it is counted in
// pcourt_kafka_dead_letters_total as a service's /metrics shows it; its
// offset is committed and the partition moves on. A transient failure is
// retried for as long as it lasts and never dead-lettered nor counted.
func TestDeadLettersOnlyWhatCanNeverSucceed(t *testing.T) {
	brokers := kafkatest.StartBroker(t)
	const topic, group = "filings", "g-dlq"
	kafkatest.CreateTopic(t, brokers, topic, 10)
	producer := newProducer(t, brokers, nil)
	metrics := serviceMetrics(t, "filings")

	cfg := consumerConfig(brokers, group, topic)
	cfg.RetryBackoff, cfg.RetryBackoffMax = 5*time.Millisecond, 20*time.Millisecond
	var (
		mu     sync.Mutex
		poison kafka.Message
	)
	handler := &attempts{fail: func(id string, call int) error {
		switch {
		case id == "ev-poison":
			return kafka.Permanent(fmt.Errorf("boom: %w", errors.New("schema mismatch")))
		case id == "ev-outage" && call <= 12:
			return errors.New("redis: connection refused")
		}
		return nil
	}}
	startConsumer(t, cfg, func(ctx context.Context, msg kafka.Message) error {
		if msg.EventID == "ev-poison" {
			mu.Lock()
			poison = msg
			mu.Unlock()
		}
		return handler.handle(ctx, msg)
	}, producer, nil)

	// The series exists from the start, at zero, so that an alert on its
	// increase sees the first dead letter.
	labels := `group="g-dlq",topic="filings"`
	require.Equal(t, map[string]float64{labels: 0}, metrics.deadLetters(t))

	// An outage longer than any fixed number of attempts: waited out.
	require.NoError(t, producer.Publish(context.Background(), kafka.Message{Topic: topic, Key: "case-4", EventID: "ev-outage", Schema: "filings.v1"}))
	require.Eventually(t, func() bool { return handler.count("ev-outage") == 13 }, waitFor, tick, "the transient failure was not retried until it passed")
	require.Equal(t, map[string]float64{labels: 0}, metrics.deadLetters(t), "a transient failure is never counted")

	before := time.Now().UTC()

	require.NoError(t, producer.Publish(context.Background(), kafka.Message{
		Topic: topic, Key: "case-4", EventID: "ev-poison", Schema: "filings.v1",
		Value: []byte(`{"bad":true}`), Headers: map[string]string{"x-origin": "test"},
	}))

	dead := kafkatest.ReadMessages(t, brokers, topic+".dlq", 1)[0]
	mu.Lock()
	consumed := poison
	mu.Unlock()
	assert.Equal(t, 1, handler.count("ev-poison"), "a permanent failure is not retried")
	assert.Equal(t, "case-4", string(dead.Key))
	assert.Equal(t, `{"bad":true}`, string(dead.Value))
	for k, want := range map[string]string{
		kafka.HeaderEventID:      "ev-poison",
		kafka.HeaderSchema:       "filings.v1",
		"x-origin":               "test",
		kafka.HeaderDLQReason:    "boom: schema mismatch",
		kafka.HeaderDLQAttempts:  "1",
		kafka.HeaderDLQTopic:     topic,
		kafka.HeaderDLQPartition: strconv.Itoa(consumed.Partition),
		kafka.HeaderDLQOffset:    strconv.FormatInt(consumed.Offset, 10),
		kafka.HeaderDLQGroup:     group,
	} {
		assert.Equal(t, want, header(dead, k), "header %s", k)
	}
	at, err := time.Parse(time.RFC3339Nano, header(dead, kafka.HeaderDLQAt))
	require.NoError(t, err, "header %s", kafka.HeaderDLQAt)
	assert.WithinRange(t, at, before, time.Now().UTC())
	assert.Equal(t, map[string]float64{labels: 1}, metrics.deadLetters(t))

	require.Eventually(t, func() bool {
		return committedOffset(t, brokers, group, topic, consumed.Partition) == consumed.Offset+1
	}, waitFor, tick, "dead-lettered offset was not committed")

	require.NoError(t, producer.Publish(context.Background(), kafka.Message{
		Topic: topic, Key: "case-4", EventID: "ev-next", Schema: "filings.v1",
	}))
	require.Eventually(t, func() bool { return handler.count("ev-next") == 1 }, waitFor, tick, "partition stuck after dead-lettering")
	assert.Equal(t, 1, handler.count("ev-poison"), "dead-lettered message was retried again")
	assert.Equal(t, 13, handler.count("ev-outage"), "the waited-out message is handled once it passes, and not again")
}

func TestConsumerConfigValidate(t *testing.T) {
	valid := kafka.ConsumerConfig{Brokers: []string{"b:9092"}, GroupID: "g", Topic: "t"}
	tests := []struct {
		name    string
		mutate  func(*kafka.ConsumerConfig)
		wantErr string
	}{
		{"minimal", func(*kafka.ConsumerConfig) {}, ""},
		{"last offset", func(c *kafka.ConsumerConfig) { c.StartOffset = kafka.LastOffset }, ""},
		{"no brokers", func(c *kafka.ConsumerConfig) { c.Brokers = nil }, "no brokers"},
		{"no group", func(c *kafka.ConsumerConfig) { c.GroupID = "" }, "no group id"},
		{"no topic", func(c *kafka.ConsumerConfig) { c.Topic = "" }, "no topic"},
		{"dead letters to itself", func(c *kafka.ConsumerConfig) { c.DeadLetterTopic = "t" }, "is the consumed topic"},
		{"negative backoff", func(c *kafka.ConsumerConfig) { c.RetryBackoff = -1 }, "retry backoff"},
		{"bad start offset", func(c *kafka.ConsumerConfig) { c.StartOffset = 42 }, "start offset 42"},
		{"session timeout", func(c *kafka.ConsumerConfig) { c.SessionTimeout = -time.Second }, "session timeout"},
	}
	producer := newProducer(t, []string{"b:9092"}, nil)
	handle := func(context.Context, kafka.Message) error { return nil }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := valid
			tt.mutate(&cfg)
			err := cfg.Validate()
			c, newErr := kafka.NewConsumer(cfg, handle, producer, testLogger(t), nil)
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.NoError(t, newErr)
				require.NotNil(t, c)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			require.ErrorContains(t, newErr, tt.wantErr, "NewConsumer must validate")
		})
	}

	t.Run("nil dependencies", func(t *testing.T) {
		_, err := kafka.NewConsumer(valid, nil, producer, testLogger(t), nil)
		assert.ErrorContains(t, err, "nil handler")
		_, err = kafka.NewConsumer(valid, handle, nil, testLogger(t), nil)
		assert.ErrorContains(t, err, "nil dead-letter producer")
		_, err = kafka.NewConsumer(valid, handle, producer, nil, nil)
		assert.ErrorContains(t, err, "nil logger")
	})
}

// Cancelling Run lets the handler in hand finish with a live ctx and
// commits its message, so a graceful shutdown does not cause redelivery.
func TestRunDrainsMessageInHand(t *testing.T) {
	brokers := kafkatest.StartBroker(t)
	const topic, group = "drain", "g-drain"
	kafkatest.CreateTopic(t, brokers, topic, 10)
	producer := newProducer(t, brokers, nil)

	started, release := make(chan kafka.Message, 1), make(chan struct{})
	handlerErr := make(chan error, 1)
	rc := startConsumer(t, consumerConfig(brokers, group, topic), func(ctx context.Context, msg kafka.Message) error {
		started <- msg
		<-release
		handlerErr <- ctx.Err()
		return ctx.Err()
	}, producer, nil)
	require.NoError(t, producer.Publish(context.Background(), kafka.Message{
		Topic: topic, Key: "case-5", EventID: "ev-slow", Schema: "s.v1",
	}))

	var inHand kafka.Message
	select {
	case inHand = <-started:
	case <-time.After(waitFor):
		t.Fatal("handler never started")
	}
	rc.cancel()
	close(release)
	require.NoError(t, rc.stop(t))
	require.NoError(t, <-handlerErr, "handler ctx was cancelled with Run's instead of draining")
	assert.Equal(t, inHand.Offset+1, committedOffset(t, brokers, group, topic, inHand.Partition), "drained message was not committed")
}

// A broker away for seconds does not stop a consumer: Run keeps fetching
// instead of returning (which made the webhooks service exit), Probe
// reports the failure meanwhile, and the records published once the
// broker is back are handled.
func TestConsumerOutlivesABrokerAway(t *testing.T) {
	dir := t.TempDir()
	first, err := kafkadev.Start(kafkadev.Config{DataDir: dir})
	require.NoError(t, err)
	brokers := first.ListenAddrs()
	var ports []int
	for _, b := range brokers {
		_, p, err := net.SplitHostPort(b)
		require.NoError(t, err)
		port, err := strconv.Atoi(p)
		require.NoError(t, err)
		ports = append(ports, port)
	}
	topic, group := "broker-away", "g-broker-away"
	kafkatest.CreateTopic(t, brokers, topic, 1)
	producer := newProducer(t, brokers, nil)
	publish := func(id string) {
		t.Helper()
		require.NoError(t, producer.Publish(context.Background(), kafka.Message{Topic: topic, Key: "case-1", EventID: id, Schema: "s.v1"}))
	}
	publish("before")

	got := &recorder{}
	c, err := kafka.NewConsumer(consumerConfig(brokers, group, topic), got.handle, producer, testLogger(t), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	got.waitMessages(t, 1)
	require.NoError(t, c.Probe(ctx))

	first.Close()
	require.Eventually(t, func() bool { return c.Probe(ctx) != nil }, waitFor, tick, "a consumer without its broker says so")
	select {
	case err := <-done:
		t.Fatalf("Run returned while the broker was away: %v", err)
	default:
	}

	second, err := kafkadev.Start(kafkadev.Config{Ports: ports, DataDir: dir})
	require.NoError(t, err)
	t.Cleanup(second.Close)
	publish("after")
	require.Eventually(t, func() bool {
		for _, m := range got.messages() {
			if m.EventID == "after" {
				return true
			}
		}
		return false
	}, waitFor, tick, "the record published after the restart was not handled")
	require.NoError(t, c.Probe(ctx), "fetching again clears the failure")
	cancel()
	require.NoError(t, <-done)
}
