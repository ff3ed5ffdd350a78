package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
)

// A dead letter read back says what was refused, where it was consumed,
// by which group, when and why; its replay is the refused message as it
// was first published (topic, partition, key, value, event id, schema,
// headers, trace), marked with the dead letter it comes from, and carries
// none of the dead letter's own headers.
func TestADeadLetterReadsBackAndReplaysAsTheRefusedMessage(t *testing.T) {
	brokers := kafkatest.StartBroker(t)
	const topic, group = "case-opened", "g-cases"
	kafkatest.CreateTopic(t, brokers, topic, 4)
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	producer := newProducer(t, brokers, tp)
	consumed := make(chan kafka.Message, 1)
	startConsumer(t, consumerConfig(brokers, group, topic), func(_ context.Context, msg kafka.Message) error {
		consumed <- msg
		return kafka.Permanent(errors.New("unknown rules version pcourt-rules-1999-01"))
	}, producer, tp)

	before := time.Now()
	require.NoError(t, producer.Publish(context.Background(), kafka.Message{
		Topic: topic, Key: "case-9", EventID: "ev-9", Schema: "case-opened-v2",
		Value: []byte(`{"caseId":"case-9"}`), Headers: map[string]string{"x-origin": "filings"},
	}))
	original := <-consumed
	rec := kafkatest.ReadMessages(t, brokers, topic+".dlq", 1)[0]
	require.NotEmpty(t, header(rec, "traceparent"), "the dead letter carries its trace")

	d, err := kafka.ReadDeadLetter(rec)
	require.NoError(t, err)
	assert.Equal(t, topic+".dlq", d.Topic)
	assert.Equal(t, rec.Partition, d.Partition)
	assert.Equal(t, rec.Offset, d.Offset)
	assert.Equal(t, kafka.Message{
		Topic: topic, Partition: original.Partition, Offset: original.Offset,
		Key: "case-9", EventID: "ev-9", Schema: "case-opened-v2",
		Value: []byte(`{"caseId":"case-9"}`), Headers: map[string]string{"x-origin": "filings"},
	}, d.Original)
	assert.Equal(t, "unknown rules version pcourt-rules-1999-01", d.Reason)
	assert.Equal(t, 1, d.Attempts)
	assert.Equal(t, group, d.Group)
	assert.WithinRange(t, d.At, before.Add(-time.Millisecond), time.Now())
	assert.Empty(t, d.ReplayOf)

	replay := d.Replay()
	assert.Equal(t, topic, replay.Topic)
	assert.Equal(t, original.Partition, replay.Partition, "replayed to the partition it was consumed from")
	assert.Equal(t, "case-9", string(replay.Key))
	assert.Equal(t, `{"caseId":"case-9"}`, string(replay.Value))
	got := map[string]string{}
	for _, h := range replay.Headers {
		got[h.Key] = string(h.Value)
	}
	assert.Equal(t, map[string]string{
		kafka.HeaderEventID:     "ev-9",
		kafka.HeaderSchema:      "case-opened-v2",
		"x-origin":              "filings",
		"traceparent":           header(rec, "traceparent"),
		kafka.HeaderDLQReplayOf: d.Ref(),
	}, got)
	assert.Equal(t, d.Ref(), kafka.ReplayedFrom(replay))
	assert.Equal(t, fmt.Sprintf("%s.dlq/%d/%d", topic, rec.Partition, rec.Offset), d.Ref())

	// A replay refused again is a new dead letter that names the one it
	// replayed.
	again := rec
	again.Headers = append(append([]kafkago.Header(nil), rec.Headers...), kafkago.Header{Key: kafka.HeaderDLQReplayOf, Value: []byte(d.Ref())})
	d2, err := kafka.ReadDeadLetter(again)
	require.NoError(t, err)
	assert.Equal(t, d.Ref(), d2.ReplayOf)
	assert.NotContains(t, d2.Original.Headers, kafka.HeaderDLQReplayOf)
}

// A record that does not say where it came from cannot be replayed.
func TestReadDeadLetterRefusesARecordWithoutItsOrigin(t *testing.T) {
	for name, headers := range map[string][]kafkago.Header{
		"no headers": nil,
		"no offset": {
			{Key: kafka.HeaderDLQTopic, Value: []byte("t")}, {Key: kafka.HeaderDLQPartition, Value: []byte("0")},
		},
		"bad partition": {
			{Key: kafka.HeaderDLQTopic, Value: []byte("t")}, {Key: kafka.HeaderDLQPartition, Value: []byte("x")},
			{Key: kafka.HeaderDLQOffset, Value: []byte("3")},
		},
	} {
		_, err := kafka.ReadDeadLetter(kafkago.Message{Topic: "t.dlq", Offset: 7, Headers: headers})
		require.Error(t, err, name)
		assert.True(t, strings.HasPrefix(err.Error(), "t.dlq/0/7 is not a dead letter"), "%s: %v", name, err)
	}
	assert.Empty(t, kafka.ReplayedFrom(kafkago.Message{}))
}
