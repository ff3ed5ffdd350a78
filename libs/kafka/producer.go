package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// tracerName identifies this package's spans.
const tracerName = "github.com/pcourt/pcourt/libs/kafka"

// propagator is W3C trace context only, set explicitly rather than read from
// the otel global so the wire format does not depend on process set-up.
var propagator propagation.TextMapPropagator = propagation.TraceContext{}

// tracerProvider resolves the one rule both Producer and Consumer follow: the
// provider passed in, else the otel global one.
func tracerProvider(tp trace.TracerProvider) trace.TracerProvider {
	if tp == nil {
		return otel.GetTracerProvider()
	}
	return tp
}

// Producer defaults, in one place.
const (
	defaultClientID     = "pcourt"
	defaultBatchTimeout = 5 * time.Millisecond
	defaultWriteTimeout = 10 * time.Second
)

// ProducerConfig configures a Producer. Zero values take the defaults.
type ProducerConfig struct {
	// Brokers are the seed broker addresses, host:port.
	Brokers []string
	// Security is TLS and SASL; zero is plaintext.
	Security Security
	// ClientID names this client in broker logs and quotas. Default "pcourt".
	ClientID string
	// BatchTimeout bounds how long a record waits for others to share its
	// batch. Publish is synchronous, so this is added latency: default 5ms.
	BatchTimeout time.Duration
	// WriteTimeout bounds one produce request. Default 10s.
	WriteTimeout time.Duration
	// TracerProvider makes the "<topic> publish" spans; nil means the otel
	// global provider.
	TracerProvider trace.TracerProvider
}

// withDefaults fills zero fields.
func (c ProducerConfig) withDefaults() ProducerConfig {
	if c.ClientID == "" {
		c.ClientID = defaultClientID
	}
	if c.BatchTimeout == 0 {
		c.BatchTimeout = defaultBatchTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = defaultWriteTimeout
	}
	return c
}

// Validate reports every invalid field. Zero values are valid: they mean the
// default.
func (c ProducerConfig) Validate() error {
	var errs []error
	errs = append(errs, validateBrokers(c.Brokers), c.Security.Validate())
	if c.BatchTimeout < 0 {
		errs = append(errs, fmt.Errorf("batch timeout %v is negative", c.BatchTimeout))
	}
	if c.WriteTimeout < 0 {
		errs = append(errs, fmt.Errorf("write timeout %v is negative", c.WriteTimeout))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("kafka producer config: %w", err)
	}
	return nil
}

func validateBrokers(brokers []string) error {
	if len(brokers) == 0 {
		return errors.New("no brokers")
	}
	for i, b := range brokers {
		if b == "" {
			return fmt.Errorf("broker %d is empty", i)
		}
	}
	return nil
}

// Partitioner is the balancer of every record the platform writes: the
// Java client's default for a keyed record, toPositive(murmur2(key)) %
// partitions, so a producer in any language using Kafka's default (Java,
// librdkafka's murmur2_random, franz-go's StickyKeyPartitioner) puts a
// case's records on the partition ours do, and their order holds across
// producers. A record without a key goes to a random partition.
func Partitioner() kafkago.Balancer { return &kafkago.Murmur2Balancer{} }

// Producer writes records synchronously: Publish returns once every broker
// in the in-sync replica set has the records, which is what lets an outbox
// relay acknowledge its stream entries afterwards. It is safe for
// concurrent use.
type Producer struct {
	writer    *kafkago.Writer
	transport *kafkago.Transport
	tracer    trace.Tracer
}

// NewProducer returns a Producer for cfg. It does not dial: the first
// Publish does, and Ping is the readiness check.
func NewProducer(cfg ProducerConfig) (*Producer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	conn, err := cfg.Security.connection()
	if err != nil {
		return nil, err
	}
	transport := &kafkago.Transport{ClientID: cfg.ClientID, TLS: conn.tls, SASL: conn.sasl}
	return &Producer{
		writer: &kafkago.Writer{
			Addr:         kafkago.TCP(cfg.Brokers...),
			Balancer:     Partitioner(),
			RequiredAcks: kafkago.RequireAll,
			BatchTimeout: cfg.BatchTimeout,
			WriteTimeout: cfg.WriteTimeout,
			// Topics are declared (api.Topics) and created by whoever runs
			// the cluster: the chart's KafkaTopic resources, the dev
			// broker at start. A topic the table lacks is an error here,
			// never a topic quietly made with the broker's defaults (one
			// partition, one replica).
			AllowAutoTopicCreation: false,
			Transport:              transport,
		},
		transport: transport,
		tracer:    tracerProvider(cfg.TracerProvider).Tracer(tracerName),
	}, nil
}

// Publish writes msgs, which may target different topics, and returns when
// all are acknowledged by all in-sync replicas or one failed. Each record
// gets the pc-event-id and pc-schema headers and the trace context of a
// "<topic> publish" span that is a child of ctx's span, or of the
// message's Parent when that is set. Nothing is written
// if any message is invalid. The error names each message that failed;
// the others may have been written.
func (p *Producer) Publish(ctx context.Context, msgs ...Message) error {
	for i, m := range msgs {
		if err := m.validate(true); err != nil {
			return fmt.Errorf("publishing message %d (event %q): %w", i, m.EventID, err)
		}
	}
	return p.write(ctx, msgs)
}

// write publishes already validated messages.
func (p *Producer) write(ctx context.Context, msgs []Message) error {
	if len(msgs) == 0 {
		return nil
	}
	recs := make([]kafkago.Message, len(msgs))
	spans := make([]trace.Span, len(msgs))
	for i, m := range msgs {
		attrs := []attribute.KeyValue{
			semconv.MessagingSystemKafka,
			semconv.MessagingOperationTypeSend,
			semconv.MessagingDestinationName(m.Topic),
		}
		if m.Key != "" {
			attrs = append(attrs, semconv.MessagingKafkaMessageKey(m.Key))
		}
		if m.EventID != "" {
			attrs = append(attrs, semconv.MessagingMessageID(m.EventID))
		}
		parent, opts := ctx, []trace.SpanStartOption{
			trace.WithSpanKind(trace.SpanKindProducer),
			trace.WithAttributes(attrs...),
		}
		if m.Parent.IsValid() {
			// Continue the message's own trace; keep a link to the caller's
			// span (the relay's) so neither trace loses the other.
			parent = trace.ContextWithSpanContext(ctx, m.Parent)
			if caller := trace.SpanContextFromContext(ctx); caller.IsValid() {
				opts = append(opts, trace.WithLinks(trace.Link{SpanContext: caller}))
			}
		}
		spanCtx, span := p.tracer.Start(parent, m.Topic+" publish", opts...)
		spans[i] = span
		recs[i] = toRecord(m)
		propagator.Inject(spanCtx, headerCarrier{&recs[i].Headers})
	}

	err := p.writer.WriteMessages(ctx, recs...)
	var perMessage kafkago.WriteErrors
	if !errors.As(err, &perMessage) || len(perMessage) != len(msgs) {
		// One error for the whole call (closed writer, cancelled ctx,
		// metadata failure): every message shares it.
		perMessage = make(kafkago.WriteErrors, len(msgs))
		for i := range perMessage {
			perMessage[i] = err
		}
	}

	var errs []error
	for i, span := range spans {
		if e := perMessage[i]; e != nil {
			span.RecordError(e)
			span.SetStatus(codes.Error, "publish failed")
			m := msgs[i]
			errs = append(errs, fmt.Errorf("publishing event %q (%s) to %s key %q: %w", m.EventID, m.Schema, m.Topic, m.Key, e))
		}
		span.End()
	}
	return errors.Join(errs...)
}

// Close flushes nothing (Publish is synchronous) but waits for in-flight
// writes and releases the connections.
func (p *Producer) Close() error {
	err := p.writer.Close()
	p.transport.CloseIdleConnections()
	if err != nil {
		return fmt.Errorf("closing kafka producer: %w", err)
	}
	return nil
}
