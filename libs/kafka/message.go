// Package kafka is the platform's Kafka plumbing: a synchronous, per-key
// ordered Producer and an at-least-once consumer-group Consumer that commits
// only after its handler succeeded or the message was dead-lettered.
//
// It speaks to Kafka through github.com/segmentio/kafka-go and carries the
// platform's record conventions in headers: pc-event-id and pc-schema on
// every record, and the W3C trace context (traceparent, tracestate) so a
// trace follows an event from producer to consumer.
package kafka

import (
	"errors"
	"fmt"
	"sort"

	kafkago "github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/trace"
)

// Header names the package reads and writes. They are exported for tools
// that inspect or replay records, such as a dead-letter replayer.
const (
	// HeaderEventID carries the producer-assigned event id that consumers
	// dedupe on.
	HeaderEventID = "pc-event-id"
	// HeaderSchema names the payload's schema so consumers can decode
	// without guessing.
	HeaderSchema = "pc-schema"
	// HeaderDLQReason holds the last handler error of a dead-lettered record.
	HeaderDLQReason = "pc-dlq-reason"
	// HeaderDLQAttempts holds how many times the handler was tried.
	HeaderDLQAttempts = "pc-dlq-attempts"
	// HeaderDLQTopic holds the topic the dead-lettered record came from.
	HeaderDLQTopic = "pc-dlq-topic"
	// HeaderDLQPartition holds the partition the dead-lettered record came from.
	HeaderDLQPartition = "pc-dlq-partition"
	// HeaderDLQOffset holds the offset the dead-lettered record had.
	HeaderDLQOffset = "pc-dlq-offset"
	// HeaderDLQGroup holds the consumer group whose handler refused the
	// record: several groups may read one topic and dead-letter into the
	// same <topic>.dlq.
	HeaderDLQGroup = "pc-dlq-group"
	// HeaderDLQAt holds when the record was dead-lettered, RFC 3339 in UTC.
	HeaderDLQAt = "pc-dlq-at"
	// HeaderDLQReplayOf marks a record re-published from a dead-letter
	// topic with the dead letter it came from, "<dlq topic>/<partition>/
	// <offset>": it is how a replay knows, after an interruption, what it
	// already published (docs/dead-letters.md).
	HeaderDLQReplayOf = "pc-dlq-replay-of"

	// headerDLQPrefix starts every header the dead-letter path writes;
	// a replay drops them all, since they describe the dead letter, not
	// the event.
	headerDLQPrefix = "pc-dlq-"

	headerTraceparent = "traceparent"
	headerTracestate  = "tracestate"
)

// Offsets a Consumer may start from when its group has no committed offset.
const (
	// FirstOffset replays a partition from its oldest retained record.
	FirstOffset = kafkago.FirstOffset
	// LastOffset skips what was written before the group first joined.
	LastOffset = kafkago.LastOffset
)

// Message is one Kafka record as the platform sees it.
type Message struct {
	// Topic is where the record is written to or was read from.
	Topic string
	// Key decides the partition, so records with one key (a case id) keep
	// their order. Empty spreads records round-robin.
	Key string
	// EventID is the pc-event-id header; required on publish.
	EventID string
	// Schema is the pc-schema header; required on publish.
	Schema string
	// Value is the payload.
	Value []byte
	// Headers holds the other headers. The trace context and the two
	// headers above are managed by the package and may not appear here.
	Headers map[string]string
	// Parent, when valid, is the span the publish span continues instead of
	// the span in Publish's ctx. An outbox relay sets it to the trace
	// context stored with the event, so the trace runs from the request
	// that wrote the event rather than from the relay's poll loop. Unset on
	// consumed messages: the handler's ctx carries their trace.
	Parent trace.SpanContext
	// Partition is set on consumed messages.
	Partition int
	// Offset is set on consumed messages.
	Offset int64
}

// managedHeaders are written by the package itself; letting callers set them
// too would make the record say two things.
var managedHeaders = map[string]bool{
	HeaderEventID:     true,
	HeaderSchema:      true,
	headerTraceparent: true,
	headerTracestate:  true,
}

// validate checks what every published record needs. Dead letters skip the
// event id and schema checks: a poison record may lack them, and it must
// still reach the dead-letter topic.
func (m Message) validate(requireIDs bool) error {
	var errs []error
	if m.Topic == "" {
		errs = append(errs, errors.New("topic is empty"))
	}
	if requireIDs && m.EventID == "" {
		errs = append(errs, errors.New("event id is empty"))
	}
	if requireIDs && m.Schema == "" {
		errs = append(errs, errors.New("schema is empty"))
	}
	for k := range m.Headers {
		if managedHeaders[k] {
			errs = append(errs, fmt.Errorf("header %q is managed by the package", k))
		}
	}
	return errors.Join(errs...)
}

// toRecord converts m to a kafka-go record without trace headers; the
// producer injects those from its span.
func toRecord(m Message) kafkago.Message {
	rec := kafkago.Message{
		Topic: m.Topic,
		Value: m.Value,
	}
	if m.Key != "" {
		// A nil key makes the murmur2 balancer spread records; an empty
		// non-nil one would pin them all to one partition.
		rec.Key = []byte(m.Key)
	}
	rec.Headers = make([]kafkago.Header, 0, len(m.Headers)+4)
	if m.EventID != "" {
		rec.Headers = append(rec.Headers, kafkago.Header{Key: HeaderEventID, Value: []byte(m.EventID)})
	}
	if m.Schema != "" {
		rec.Headers = append(rec.Headers, kafkago.Header{Key: HeaderSchema, Value: []byte(m.Schema)})
	}
	keys := make([]string, 0, len(m.Headers))
	for k := range m.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys) // stable record bytes make records comparable in tests and tools
	for _, k := range keys {
		rec.Headers = append(rec.Headers, kafkago.Header{Key: k, Value: []byte(m.Headers[k])})
	}
	return rec
}

// fromRecord converts a consumed kafka-go record. Trace headers stay out of
// Headers: they were consumed into the handler's context.
func fromRecord(rec kafkago.Message) Message {
	m := Message{
		Topic:     rec.Topic,
		Key:       string(rec.Key),
		Value:     rec.Value,
		Partition: rec.Partition,
		Offset:    rec.Offset,
	}
	for _, h := range rec.Headers {
		switch h.Key {
		case HeaderEventID:
			m.EventID = string(h.Value)
		case HeaderSchema:
			m.Schema = string(h.Value)
		case headerTraceparent, headerTracestate:
		default:
			if m.Headers == nil {
				m.Headers = make(map[string]string)
			}
			m.Headers[h.Key] = string(h.Value)
		}
	}
	return m
}

// headerCarrier lets the W3C propagator read and write kafka-go headers.
type headerCarrier struct {
	headers *[]kafkago.Header
}

// Get returns the value of the first header named key.
func (c headerCarrier) Get(key string) string {
	for _, h := range *c.headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// Set replaces the header named key, or appends it.
func (c headerCarrier) Set(key, value string) {
	for i, h := range *c.headers {
		if h.Key == key {
			(*c.headers)[i].Value = []byte(value)
			return
		}
	}
	*c.headers = append(*c.headers, kafkago.Header{Key: key, Value: []byte(value)})
}

// Keys lists the header names.
func (c headerCarrier) Keys() []string {
	keys := make([]string, 0, len(*c.headers))
	for _, h := range *c.headers {
		keys = append(keys, h.Key)
	}
	return keys
}
