package kafka_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
)

// Records published on one key arrive in publish order with their platform
// headers, even when the topic has many partitions and the producer batches
// several keys per call.
func TestPublishConsumeKeepsHeadersAndPerKeyOrder(t *testing.T) {
	brokers := kafkatest.StartBroker(t)
	const topic = "cases.events"
	kafkatest.CreateTopic(t, brokers, topic, 10)
	producer := newProducer(t, brokers, nil)

	var want []kafka.Message
	const ordered, others = 100, 30
	for i := range ordered {
		want = append(want, kafka.Message{
			Topic:   topic,
			Key:     "case-1",
			EventID: fmt.Sprintf("ev-case-1-%03d", i),
			Schema:  "cases.updated.v1",
			Value:   []byte(strconv.Itoa(i)),
			Headers: map[string]string{"x-origin": "test"},
		})
		if i < others {
			want = append(want, kafka.Message{
				Topic:   topic,
				Key:     fmt.Sprintf("case-other-%d", i),
				EventID: fmt.Sprintf("ev-other-%03d", i),
				Schema:  "cases.created.v1",
				Value:   []byte("other"),
			})
		}
	}
	ctx := context.Background()
	for batch := range chunk(want, 13) {
		require.NoError(t, producer.Publish(ctx, batch...))
	}

	var rec recorder
	startConsumer(t, consumerConfig(brokers, "g-order", topic), rec.handle, producer, nil)
	got := rec.waitMessages(t, len(want))

	// Every message arrives once with its headers; trace headers are not
	// leaked into Headers.
	byEvent := cmpopts.SortSlices(func(a, b kafka.Message) bool { return a.EventID < b.EventID })
	ignoreLocation := cmpopts.IgnoreFields(kafka.Message{}, "Partition", "Offset")
	if diff := cmp.Diff(want, got, byEvent, ignoreLocation, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("consumed messages differ (-published +consumed):\n%s", diff)
	}

	// The one key kept its order, so it stayed on one partition.
	var seq []int
	partitions := map[int]bool{}
	for _, m := range got {
		if m.Key == "case-1" {
			n, err := strconv.Atoi(string(m.Value))
			require.NoError(t, err)
			seq = append(seq, n)
			partitions[m.Partition] = true
		}
	}
	for i, n := range seq {
		require.Equal(t, i, n, "message %d of key case-1 out of order: %v", i, seq)
	}
	assert.Len(t, partitions, 1, "one key must map to one partition")

	// The other keys spread over more than one partition, or the order
	// above would prove nothing about keying.
	spread := map[int]bool{}
	for _, m := range got {
		spread[m.Partition] = true
	}
	assert.Greater(t, len(spread), 1, "all keys landed on one partition")
}

func chunk(msgs []kafka.Message, size int) func(func([]kafka.Message) bool) {
	return func(yield func([]kafka.Message) bool) {
		for len(msgs) > 0 {
			n := min(size, len(msgs))
			if !yield(msgs[:n]) {
				return
			}
			msgs = msgs[n:]
		}
	}
}

// An invalid message fails the whole call before anything is written.
func TestPublishRejectsInvalidMessages(t *testing.T) {
	brokers := kafkatest.StartBroker(t)
	const topic = "validation"
	kafkatest.CreateTopic(t, brokers, topic, 1)
	producer := newProducer(t, brokers, nil)
	valid := kafka.Message{Topic: topic, Key: "k", EventID: "ev-valid", Schema: "s.v1", Value: []byte("v")}

	tests := []struct {
		name    string
		mutate  func(*kafka.Message)
		wantErr string
	}{
		{"no topic", func(m *kafka.Message) { m.Topic = "" }, "topic is empty"},
		{"no event id", func(m *kafka.Message) { m.EventID = "" }, "event id is empty"},
		{"no schema", func(m *kafka.Message) { m.Schema = "" }, "schema is empty"},
		{"managed event id header", func(m *kafka.Message) { m.Headers = map[string]string{kafka.HeaderEventID: "x"} }, `header "pc-event-id" is managed`},
		{"managed traceparent header", func(m *kafka.Message) { m.Headers = map[string]string{"traceparent": "x"} }, `header "traceparent" is managed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := valid
			bad.EventID = "ev-bad"
			tt.mutate(&bad)
			err := producer.Publish(context.Background(), valid, bad)
			require.ErrorContains(t, err, tt.wantErr)
			require.ErrorContains(t, err, "message 1")
		})
	}

	// None of the valid companions above were written: the first record on
	// the single partition is the marker published last.
	marker := valid
	marker.EventID = "ev-marker"
	require.NoError(t, producer.Publish(context.Background(), marker))
	recs := kafkatest.ReadMessages(t, brokers, topic, 1)
	assert.Equal(t, "ev-marker", header(recs[0], kafka.HeaderEventID))
	assert.Equal(t, int64(0), recs[0].Offset)
}

// A failed write names the message that failed.
func TestPublishErrorNamesFailedMessage(t *testing.T) {
	producer := newProducer(t, []string{closedAddr(t)}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := producer.Publish(ctx, kafka.Message{Topic: "t", Key: "case-9", EventID: "ev-lost", Schema: "s.v1"})
	require.Error(t, err)
	assert.ErrorContains(t, err, `"ev-lost"`)
	assert.ErrorContains(t, err, "to t key \"case-9\"")
}

func TestProducerConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     kafka.ProducerConfig
		wantErr string
	}{
		{"minimal", kafka.ProducerConfig{Brokers: []string{"b:9092"}}, ""},
		{"no brokers", kafka.ProducerConfig{}, "no brokers"},
		{"empty broker", kafka.ProducerConfig{Brokers: []string{"b:9092", ""}}, "broker 1 is empty"},
		{"negative batch timeout", kafka.ProducerConfig{Brokers: []string{"b:9092"}, BatchTimeout: -1}, "batch timeout"},
		{"negative write timeout", kafka.ProducerConfig{Brokers: []string{"b:9092"}, WriteTimeout: -1}, "write timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			_, newErr := kafka.NewProducer(tt.cfg)
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.NoError(t, newErr)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			require.ErrorContains(t, newErr, tt.wantErr, "NewProducer must validate")
		})
	}
}
