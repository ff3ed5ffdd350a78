package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/telemetry"
)

var sharding = outbox.Sharding{Service: "orders", Count: 4}

// openOrder is a service's state change: it records the order and its event
// in one step, or refuses and changes nothing.
var openOrder = outbox.Script(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.error_reply('order exists')
end
redis.call('HSET', KEYS[1], 'status', 'open')
outbox_append(KEYS[2], 1)
return 1
`)

func open(ctx context.Context, t testing.TB, rdb redis.UniversalClient, id, topic string) error {
	t.Helper()
	tag := sharding.Tag(id)
	ev := outbox.Event{ID: "ev-" + id, Topic: topic, Key: id, Schema: "order-opened.v1", Payload: []byte(`{"orderId":"` + id + `"}`)}
	return openOrder.Run(ctx, rdb, []string{"pc:orders:" + tag + ":order:" + id, sharding.Stream(tag)}, outbox.Args(ctx, ev)...).Err()
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func relayConfig(consumer string) outbox.RelayConfig {
	cfg := outbox.DefaultRelayConfig(sharding, consumer)
	cfg.ClaimIdle = 200 * time.Millisecond
	cfg.RetryBackoff = 20 * time.Millisecond
	return cfg
}

// applier is an idempotent consumer: it applies each event once, whatever
// the number of deliveries, by recording the event id in the same step.
type applier struct {
	rdb        redis.UniversalClient
	deliveries atomic.Int64
}

var applyOnce = redis.NewScript(`
if redis.call('SET', KEYS[1], '1', 'NX') then
  return redis.call('INCR', KEYS[2])
end
return 0
`)

func (a *applier) handle(ctx context.Context, m kafka.Message) error {
	a.deliveries.Add(1)
	return applyOnce.Run(ctx, a.rdb, []string{"{applied}:" + m.EventID, "{applied}:count"}).Err()
}

func (a *applier) applied(t testing.TB) int64 {
	n, err := a.rdb.Get(context.Background(), "{applied}:count").Int64()
	if err == redis.Nil {
		return 0
	}
	require.NoError(t, err)
	return n
}

func startConsumer(t *testing.T, brokers []string, topic string, handle kafka.Handler, tp trace.TracerProvider) {
	t.Helper()
	c, err := kafka.NewConsumer(kafka.ConsumerConfig{
		Brokers: brokers, GroupID: "test-" + topic, Topic: topic,
		HeartbeatInterval: 200 * time.Millisecond, SessionTimeout: 6 * time.Second, RebalanceTimeout: 2 * time.Second,
	}, handle, newProducer(t, brokers, tp), discard(), tp)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func newProducer(t testing.TB, brokers []string, tp trace.TracerProvider) *kafka.Producer {
	t.Helper()
	p, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers, TracerProvider: tp})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func streamLength(t testing.TB, rdb redis.UniversalClient) int64 {
	var n int64
	for _, s := range sharding.Streams() {
		l, err := rdb.XLen(context.Background(), s).Result()
		require.NoError(t, err)
		n += l
	}
	return n
}

func TestStateChangeAndEventAreOneStep(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		require.NoError(t, open(ctx, t, rdb, "o-1", "orders.v1"))
		require.Equal(t, int64(1), streamLength(t, rdb))

		// A refused change records no event either.
		require.ErrorContains(t, open(ctx, t, rdb, "o-1", "orders.v1"), "order exists")
		require.Equal(t, int64(1), streamLength(t, rdb))
	})
}

// crashAfterPublish publishes for real, then kills its relay before the relay
// can acknowledge: the crash the outbox exists to survive.
type crashAfterPublish struct {
	inner     outbox.Publisher
	crash     context.CancelFunc
	published atomic.Int64
}

func (c *crashAfterPublish) Publish(ctx context.Context, msgs ...kafka.Message) error {
	if err := c.inner.Publish(ctx, msgs...); err != nil {
		return err
	}
	c.published.Add(int64(len(msgs)))
	c.crash()
	// The relay dies before it hears back: it never acknowledges.
	return errors.New("relay killed")
}

func TestRelayCrashBetweenPublishAndAcknowledgeRepublishesAndConsumerAppliesOnce(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		brokers := kafkatest.StartBroker(t)
		const topic, events = "orders.crash.v1", 20
		kafkatest.CreateTopic(t, brokers, topic, 10)
		for i := range events {
			require.NoError(t, open(ctx, t, rdb, fmt.Sprintf("o-%02d", i), topic))
		}
		producer := newProducer(t, brokers, nil)

		relayCtx, crash := context.WithCancel(ctx)
		crashing := &crashAfterPublish{inner: producer, crash: crash}
		require.NoError(t, newRelay(t, rdb, crashing, relayConfig("relay-a"), discard(), nil).Run(relayCtx))
		require.Positive(t, crashing.published.Load(), "the first relay published before dying")
		// Everything it read, published or not, is still in the stream: nothing was acknowledged.
		require.Equal(t, int64(events), streamLength(t, rdb))

		a := &applier{rdb: rdb}
		startConsumer(t, brokers, topic, a.handle, nil)

		// Its successor, another pod, takes over the dead relay's shards once their leases expire.
		successorCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- newRelay(t, rdb, producer, relayConfig("relay-b"), discard(), nil).Run(successorCtx)
		}()
		t.Cleanup(func() { stop(); <-done })

		// Every event is applied, those the dead relay published twice
		// (delivered twice) only once.
		wantDeliveries := events + crashing.published.Load()
		require.Eventually(t, func() bool { return a.applied(t) == events && a.deliveries.Load() >= wantDeliveries }, 30*time.Second, 20*time.Millisecond)
		require.Eventually(t, func() bool { return streamLength(t, rdb) == 0 }, 5*time.Second, 20*time.Millisecond)
		require.Equal(t, int64(events), a.applied(t), "each event applied exactly once despite redelivery")
	})
}

func TestTwoRelaysInSteadyStatePublishEachEventOnce(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		brokers := kafkatest.StartBroker(t)
		const topic, events = "orders.steady.v1", 200
		kafkatest.CreateTopic(t, brokers, topic, 10)
		producer := newProducer(t, brokers, nil)

		var counted sync.Map
		var deliveries atomic.Int64
		startConsumer(t, brokers, topic, func(_ context.Context, m kafka.Message) error {
			deliveries.Add(1)
			counted.Store(m.EventID, true)
			return nil
		}, nil)

		relayCtx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for _, name := range []string{"relay-a", "relay-b"} {
			cfg := relayConfig(name)
			cfg.ClaimIdle = 30 * time.Second // steady state: nobody is presumed dead
			wg.Go(func() { _ = newRelay(t, rdb, producer, cfg, discard(), nil).Run(relayCtx) })
		}
		t.Cleanup(func() { stop(); wg.Wait() })

		for i := range events {
			require.NoError(t, open(ctx, t, rdb, fmt.Sprintf("s-%03d", i), topic))
		}
		require.Eventually(t, func() bool { return deliveries.Load() >= events }, 30*time.Second, 20*time.Millisecond)
		require.Eventually(t, func() bool { return streamLength(t, rdb) == 0 }, 5*time.Second, 20*time.Millisecond)
		require.Equal(t, int64(events), deliveries.Load(), "no event was published twice")
	})
}

func TestTraceContinuesFromHTTPThroughOutboxAndKafkaToTheConsumer(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	brokers := kafkatest.StartBroker(t)
	const topic = "orders.traced.v1"
	kafkatest.CreateTopic(t, brokers, topic, 1)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(ctx) })

	srv := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{
		Service: "orders", Logger: discard(),
		Telemetry: &telemetry.Providers{Tracer: tp, Meter: noop.NewMeterProvider(), Propagator: propagation.TraceContext{}, MetricsHandler: http.NotFoundHandler()},
	})
	srv.Router().POST("/orders/:id", func(c *gin.Context) {
		if err := open(c.Request.Context(), t, rdb, c.Param("id"), topic); err != nil {
			_ = c.Error(err)
			return
		}
		c.Status(http.StatusCreated)
	})
	ts := httptest.NewServer(srv.Router())
	t.Cleanup(ts.Close)

	consumed := make(chan trace.SpanContext, 1)
	startConsumer(t, brokers, topic, func(ctx context.Context, _ kafka.Message) error {
		consumed <- trace.SpanContextFromContext(ctx)
		return nil
	}, tp)
	relayCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- newRelay(t, rdb, newProducer(t, brokers, tp), relayConfig("relay-a"), discard(), tp).Run(relayCtx)
	}()
	t.Cleanup(func() { stop(); <-done })

	resp, err := http.Post(ts.URL+"/orders/o-traced", "application/json", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	var got trace.SpanContext
	select {
	case got = <-consumed:
	case <-time.After(30 * time.Second):
		t.Fatal("the event never reached the consumer")
	}
	var serverSpan sdktrace.ReadOnlySpan
	for _, s := range spans.Ended() {
		if s.SpanKind() == trace.SpanKindServer {
			serverSpan = s
		}
	}
	require.NotNil(t, serverSpan, "the HTTP request was traced")
	require.True(t, got.IsValid())
	require.Equal(t, serverSpan.SpanContext().TraceID(), got.TraceID(), "one trace from the HTTP request to the consumer")
}

func TestTagsListEveryShardAnEntityCanLandIn(t *testing.T) {
	tags := sharding.Tags()
	require.Len(t, tags, sharding.Count)
	for i := range 200 {
		require.Contains(t, tags, sharding.Tag(fmt.Sprintf("entity-%d", i)))
	}
	for i, tag := range tags {
		require.Equal(t, sharding.Streams()[i], sharding.Stream(tag), "stream and tag lists agree")
	}
}

// newRelay is outbox.NewRelay for a configuration the test knows is valid.
func newRelay(t testing.TB, rdb redis.UniversalClient, pub outbox.Publisher, cfg outbox.RelayConfig, logger *slog.Logger, tp trace.TracerProvider) *outbox.Relay {
	t.Helper()
	r, err := outbox.NewRelay(rdb, pub, cfg, logger, tp)
	require.NoError(t, err)
	return r
}

func TestNewRelayRefusesAnUnusableConfig(t *testing.T) {
	for name, change := range map[string]func(*outbox.RelayConfig){
		"no consumer": func(c *outbox.RelayConfig) { c.Consumer = "" },
		"no batch":    func(c *outbox.RelayConfig) { c.Batch = 0 },
		"no backoff":  func(c *outbox.RelayConfig) { c.RetryBackoff = 0 },
	} {
		cfg := relayConfig("relay-a")
		change(&cfg)
		_, err := outbox.NewRelay(nil, nil, cfg, discard(), nil)
		require.Error(t, err, name)
	}
}
