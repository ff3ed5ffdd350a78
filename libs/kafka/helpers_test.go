package kafka_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
	"github.com/pcourt/pcourt/libs/telemetry"
)

// waitFor is the deadline of every poll; kfake rebalances can take seconds
// on a loaded machine.
const waitFor = kafkatest.Timeout

// tick is how often polls look again.
const tick = 20 * time.Millisecond

func testLogger(tb testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func newProducer(tb testing.TB, brokers []string, tp trace.TracerProvider) *kafka.Producer {
	tb.Helper()
	p, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers, TracerProvider: tp})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = p.Close() })
	return p
}

// consumerConfig keeps group timings short so tests do not wait on
// production-sized rebalance timeouts. kfake refuses sessions under 6s.
func consumerConfig(brokers []string, group, topic string) kafka.ConsumerConfig {
	return kafka.ConsumerConfig{
		Brokers:           brokers,
		GroupID:           group,
		Topic:             topic,
		RetryBackoff:      10 * time.Millisecond,
		HeartbeatInterval: 200 * time.Millisecond,
		SessionTimeout:    6 * time.Second,
		RebalanceTimeout:  2 * time.Second,
	}
}

// runningConsumer is a Consumer whose Run executes in the background.
type runningConsumer struct {
	cancel context.CancelFunc
	done   chan error
}

// startConsumer runs a new Consumer until stop or the end of the test.
func startConsumer(tb testing.TB, cfg kafka.ConsumerConfig, handle kafka.Handler, deadLetters *kafka.Producer, tp trace.TracerProvider) *runningConsumer {
	tb.Helper()
	c, err := kafka.NewConsumer(cfg, handle, deadLetters, testLogger(tb), tp)
	require.NoError(tb, err)
	ctx, cancel := context.WithCancel(context.Background())
	rc := &runningConsumer{cancel: cancel, done: make(chan error, 1)}
	go func() { rc.done <- c.Run(ctx) }()
	tb.Cleanup(func() { _ = rc.stop(tb) })
	return rc
}

// stop cancels Run and returns its result, failing the test if Run does
// not return in time.
func (rc *runningConsumer) stop(tb testing.TB) error {
	tb.Helper()
	rc.cancel()
	select {
	case err, ok := <-rc.done:
		if !ok {
			return nil // already stopped
		}
		close(rc.done)
		return err
	case <-time.After(waitFor):
		tb.Fatalf("consumer Run did not return within %v of cancellation", waitFor)
		return nil
	}
}

// recorder is a Handler that keeps what it was given.
type recorder struct {
	mu   sync.Mutex
	msgs []kafka.Message
	ctxs []context.Context
}

func (r *recorder) handle(ctx context.Context, msg kafka.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, msg)
	r.ctxs = append(r.ctxs, ctx)
	return nil
}

func (r *recorder) messages() []kafka.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]kafka.Message(nil), r.msgs...)
}

// waitMessages polls until the recorder holds at least n messages.
func (r *recorder) waitMessages(tb testing.TB, n int) []kafka.Message {
	tb.Helper()
	require.Eventually(tb, func() bool { return len(r.messages()) >= n }, waitFor, tick,
		"handler did not receive %d messages", n)
	return r.messages()
}

// committedOffset asks the group coordinator for the group's committed
// offset on one partition (-1 when none).
func committedOffset(tb testing.TB, brokers []string, group, topic string, partition int) int64 {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	client := &kafkago.Client{Addr: kafkago.TCP(brokers...)}
	resp, err := client.OffsetFetch(ctx, &kafkago.OffsetFetchRequest{
		GroupID: group,
		Topics:  map[string][]int{topic: {partition}},
	})
	require.NoError(tb, err)
	require.NoError(tb, resp.Error)
	for _, p := range resp.Topics[topic] {
		if p.Partition == partition {
			require.NoError(tb, p.Error)
			return p.CommittedOffset
		}
	}
	return -1
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	addr := ln.Addr().String()
	require.NoError(tb, ln.Close())
	return addr
}

func header(rec kafkago.Message, key string) string {
	for _, h := range rec.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// scrapedMetrics is a service's /metrics: the registry and exporter
// libs/telemetry sets up, with its MeterProvider installed as the otel
// global, which the consumers count through.
type scrapedMetrics struct{ url string }

// serviceMetrics installs a service's telemetry for the test and restores
// the previous global MeterProvider after it.
func serviceMetrics(tb testing.TB, service string) scrapedMetrics {
	tb.Helper()
	previous := otel.GetMeterProvider()
	p, err := telemetry.Setup(context.Background(), telemetry.Config{ServiceName: service}, func(string) string { return "" })
	require.NoError(tb, err)
	srv := httptest.NewServer(p.MetricsHandler)
	tb.Cleanup(func() {
		srv.Close()
		otel.SetMeterProvider(previous)
		_ = p.Shutdown(context.Background())
	})
	return scrapedMetrics{url: srv.URL}
}

// deadLettersSample is one sample line of the exposition format.
var deadLettersSample = regexp.MustCompile(`^pcourt_kafka_dead_letters_total\{(.*)\} (\S+)$`)

// deadLetters scrapes pcourt_kafka_dead_letters_total: its value by label
// set, leaving out the labels every series has (otel_scope_*, and the
// service that libs/telemetry puts on each).
func (m scrapedMetrics) deadLetters(tb testing.TB) map[string]float64 {
	tb.Helper()
	resp, err := http.Get(m.url)
	require.NoError(tb, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(tb, err)
	require.Contains(tb, string(body), "# TYPE pcourt_kafka_dead_letters_total counter")
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		sample := deadLettersSample.FindStringSubmatch(line)
		if sample == nil {
			continue
		}
		var labels []string
		for _, l := range strings.Split(sample[1], ",") {
			if !strings.HasPrefix(l, "otel_scope_") && !strings.HasPrefix(l, "service=") {
				labels = append(labels, l)
			}
		}
		v, err := strconv.ParseFloat(sample[2], 64)
		require.NoError(tb, err, line)
		out[strings.Join(labels, ",")] = v
	}
	return out
}
