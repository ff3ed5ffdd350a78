package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// meterName identifies this package's instruments.
const meterName = "github.com/pcourt/pcourt/libs/kafka"

// deadLettersMetric is the counter of dead-lettered records. The
// Prometheus exporter appends _total to a counter's name, so it is scraped
// as pcourt_kafka_dead_letters_total (with no unit: a unit would be
// appended too).
const deadLettersMetric = "pcourt.kafka.dead_letters"

// deadLetterCounter makes a consumer's dead-letter counter through the
// otel global MeterProvider (libs/telemetry installs the service's, which
// labels every series with the service's name), with the labels topic
// (the consumed topic) and group. The series starts at zero when the
// consumer is made: an alert on its increase then sees the first dead
// letter, which it would miss on a series born at 1.
func deadLetterCounter(cfg ConsumerConfig) (metric.Int64Counter, metric.MeasurementOption, error) {
	counter, err := otel.GetMeterProvider().Meter(meterName).Int64Counter(deadLettersMetric,
		metric.WithDescription("Records written to a dead-letter topic because their handler failed permanent; each waits for an operator (docs/dead-letters.md)."))
	if err != nil {
		return nil, nil, fmt.Errorf("kafka consumer: dead-letter counter: %w", err)
	}
	attrs := metric.WithAttributeSet(attribute.NewSet(
		attribute.String("topic", cfg.Topic),
		attribute.String("group", cfg.GroupID),
	))
	counter.Add(context.Background(), 0, attrs)
	return counter, attrs, nil
}

// DeadLetter is a record of a dead-letter topic read back: where it sits,
// the message its consumer refused, and what the consumer recorded about
// the refusal in its pc-dlq-* headers.
type DeadLetter struct {
	// Topic, Partition and Offset are where the dead letter sits.
	Topic     string
	Partition int
	Offset    int64
	// Original is the refused message: its topic, partition and offset
	// where it was consumed, its key, event id, schema, value and its own
	// headers (without the pc-dlq-* ones).
	Original Message
	// Reason is the handler's error; Attempts how often it was tried.
	Reason   string
	Attempts int
	// Group is the consumer group that refused it, empty on a dead letter
	// written before the header existed.
	Group string
	// At is when it was dead-lettered; zero on a dead letter written
	// before the header existed.
	At time.Time
	// ReplayOf names the dead letter this message was replayed from, when
	// a replayed message was refused again.
	ReplayOf string

	// trace is the record's trace context headers, which a replay carries
	// on so the replayed message stays in its event's trace.
	trace []kafkago.Header
}

// ReadDeadLetter reads rec, a record of a dead-letter topic. It refuses a
// record that does not say where it came from (pc-dlq-topic, -partition,
// -offset): such a record cannot be replayed.
func ReadDeadLetter(rec kafkago.Message) (DeadLetter, error) {
	d := DeadLetter{Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset}
	d.Original.Key = string(rec.Key)
	d.Original.Value = rec.Value
	var errs []error
	for _, h := range rec.Headers {
		v := string(h.Value)
		switch h.Key {
		case HeaderEventID:
			d.Original.EventID = v
		case HeaderSchema:
			d.Original.Schema = v
		case headerTraceparent, headerTracestate:
			d.trace = append(d.trace, h)
		case HeaderDLQTopic:
			d.Original.Topic = v
		case HeaderDLQPartition:
			p, err := strconv.Atoi(v)
			if err != nil || p < 0 {
				errs = append(errs, fmt.Errorf("header %s %q is not a partition", h.Key, v))
			}
			d.Original.Partition = p
		case HeaderDLQOffset:
			o, err := strconv.ParseInt(v, 10, 64)
			if err != nil || o < 0 {
				errs = append(errs, fmt.Errorf("header %s %q is not an offset", h.Key, v))
			}
			d.Original.Offset = o
		case HeaderDLQReason:
			d.Reason = v
		case HeaderDLQAttempts:
			d.Attempts, _ = strconv.Atoi(v) // informative only
		case HeaderDLQGroup:
			d.Group = v
		case HeaderDLQAt:
			d.At, _ = time.Parse(time.RFC3339Nano, v) // informative only
		case HeaderDLQReplayOf:
			d.ReplayOf = v
		default:
			if strings.HasPrefix(h.Key, headerDLQPrefix) {
				continue // a later version's header: it describes the dead letter, not the event
			}
			if d.Original.Headers == nil {
				d.Original.Headers = map[string]string{}
			}
			d.Original.Headers[h.Key] = v
		}
	}
	for _, need := range []string{HeaderDLQTopic, HeaderDLQPartition, HeaderDLQOffset} {
		if !hasHeader(rec.Headers, need) {
			errs = append(errs, fmt.Errorf("no header %s", need))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return DeadLetter{}, fmt.Errorf("%s/%d/%d is not a dead letter: %w", rec.Topic, rec.Partition, rec.Offset, err)
	}
	return d, nil
}

// Ref names the dead letter, "<topic>/<partition>/<offset>": the value of
// HeaderDLQReplayOf on its replay.
func (d DeadLetter) Ref() string {
	return fmt.Sprintf("%s/%d/%d", d.Topic, d.Partition, d.Offset)
}

// Replay is the record that hands the refused message to its consumers
// again: to its original topic and partition (the partition its key was
// in, so the key's order is kept where it was), with its key, value,
// event id, schema and headers, the trace context the dead letter carries,
// and HeaderDLQReplayOf naming the dead letter. Consumers dedupe by event
// id as for any redelivery; a group that had handled the message skips it.
func (d DeadLetter) Replay() kafkago.Message {
	headers := append([]kafkago.Header(nil), toRecord(d.Original).Headers...)
	headers = append(headers, d.trace...)
	headers = append(headers, kafkago.Header{Key: HeaderDLQReplayOf, Value: []byte(d.Ref())})
	rec := kafkago.Message{
		Topic:     d.Original.Topic,
		Partition: d.Original.Partition,
		Value:     d.Original.Value,
		Headers:   headers,
	}
	if d.Original.Key != "" {
		rec.Key = []byte(d.Original.Key)
	}
	return rec
}

// ReplayedFrom reads HeaderDLQReplayOf from a record of an original topic:
// the dead letter it replays, or "" for a record that is no replay.
func ReplayedFrom(rec kafkago.Message) string {
	for _, h := range rec.Headers {
		if h.Key == HeaderDLQReplayOf {
			return string(h.Value)
		}
	}
	return ""
}

func hasHeader(headers []kafkago.Header, key string) bool {
	for _, h := range headers {
		if h.Key == key {
			return true
		}
	}
	return false
}
