package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
)

const openedTopic = "pc.filings.case-opened.v2"

// dlqCLI runs pcadm against the Kafka-protocol test broker at brokers.
func dlqCLI(t *testing.T, brokers []string, args ...string) string {
	t.Helper()
	out, err := dlqRun(brokers, args...)
	require.NoError(t, err, "pcadm %s:\n%s", strings.Join(args, " "), out)
	return out
}

func dlqRun(brokers []string, args ...string) (string, error) {
	var out bytes.Buffer
	err := run(context.Background(), append([]string{"dlq"}, args...), func(k string) string {
		if k == "KAFKA_BROKERS" {
			return strings.Join(brokers, ",")
		}
		return ""
	}, &out)
	return out.String(), err
}

// openings is the cases consumer's handler as the test runs it: it
// refuses, permanent, the openings whose rules version it does not know
// yet, and counts what it handled.
type openings struct {
	mu      sync.Mutex
	known   map[string]bool // rules versions it can open cases under
	handled map[string]int  // by event id
}

func (o *openings) handle(_ context.Context, msg kafka.Message) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	rules := string(msg.Value)
	if !o.known[rules] {
		return kafka.Permanent(errors.New("unknown rules version " + rules))
	}
	o.handled[msg.EventID]++
	return nil
}

func (o *openings) learn(rules string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.known[rules] = true
}

func (o *openings) count(eventID string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.handled[eventID]
}

// The runbook, end to end: a consumer dead-letters the openings it can
// never handle; the operator lists them, fixes the cause (the consumer
// learns the rules version), replays them, and the consumer handles each
// once. A dry run publishes nothing; a replay run again, or after an
// interrupted one, publishes nothing twice.
func TestDeadLettersListedAndReplayedOnce(t *testing.T) {
	brokers := kafkatest.StartBroker(t)
	kafkatest.CreateTopic(t, brokers, openedTopic, 4)
	producer, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers, ClientID: "test"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = producer.Close() })
	cases := &openings{known: map[string]bool{"pcourt-rules-2026-11": true}, handled: map[string]int{}}
	consumer, err := kafka.NewConsumer(kafka.ConsumerConfig{
		Brokers: brokers, ClientID: "cases", GroupID: "cases", Topic: openedTopic,
		RetryBackoff: 10 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond,
		SessionTimeout: 6 * time.Second, RebalanceTimeout: 2 * time.Second,
	}, cases.handle, producer, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = consumer.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })

	publish := func(key, eventID, rules string) {
		require.NoError(t, producer.Publish(context.Background(), kafka.Message{
			Topic: openedTopic, Key: key, EventID: eventID, Schema: "filings-case-opened-v2",
			Value: []byte(rules), Headers: map[string]string{"x-origin": "filings"},
		}))
	}
	publish("case_1", "ev-1", "pcourt-rules-2026-11")
	publish("case_2", "ev-2", "pcourt-rules-2027-01")
	publish("case_3", "ev-3", "pcourt-rules-2027-01")
	require.Eventually(t, func() bool { return cases.count("ev-1") == 1 }, kafkatest.Timeout, 20*time.Millisecond)
	dead := kafkatest.ReadMessages(t, brokers, openedTopic+".dlq", 2)

	out := dlqCLI(t, brokers, "list", "-topic", openedTopic)
	t.Logf("pcadm dlq list:\n%s", out)
	assert.Contains(t, out, "2 dead letters")
	for _, key := range []string{"case_2", "case_3"} {
		line := lineWith(t, out, key)
		assert.Regexp(t, `^\d{4}-\d\d-\d\dT\S+Z\s+\d+:\d+\s+`+key+`\s+ev-\d\s+filings-case-opened-v2\s+`+regexp.QuoteMeta(openedTopic)+`/\d+/\d+\s+cases\s+1\s+-\s+unknown rules version pcourt-rules-2027-01$`, line)
	}
	assert.Equal(t, out, dlqCLI(t, brokers, "list", "-topic", openedTopic+".dlq", "-group", "cases"), "the dead-letter topic named itself, and the group that wrote them")
	assert.Contains(t, dlqCLI(t, brokers, "list", "-topic", openedTopic, "-group", "webhooks"), "0 dead letters")

	// A dry run says what it would do and publishes nothing.
	size := topicSize(t, brokers, openedTopic)
	out = dlqCLI(t, brokers, "replay", "-topic", openedTopic, "-all", "-dry-run")
	assert.Contains(t, out, "would be replayed to "+openedTopic)
	assert.Contains(t, out, "dry run: nothing published")
	assert.Equal(t, size, topicSize(t, brokers, openedTopic))

	// The operator fixes the cause, then replays one dead letter; the run
	// stops there, as an interrupted one would.
	cases.learn("pcourt-rules-2027-01")
	first := dead[0]
	firstEvent := headerOf(first, kafka.HeaderEventID)
	firstAt := first.Topic + "/" + strconv.Itoa(first.Partition) + "/" + strconv.Itoa(int(first.Offset))
	out = dlqCLI(t, brokers, "replay", "-topic", openedTopic, "-offset", strconv.Itoa(first.Partition)+":"+strconv.Itoa(int(first.Offset)))
	assert.Contains(t, out, firstAt+" replayed to "+openedTopic+"/"+headerOf(first, kafka.HeaderDLQPartition)+"/")
	assert.Contains(t, out, "1 replayed")
	require.Eventually(t, func() bool { return cases.count(firstEvent) == 1 }, kafkatest.Timeout, 20*time.Millisecond, "the replayed opening was not handled")

	// Run again for all: the first is not published twice.
	out = dlqCLI(t, brokers, "replay", "-topic", openedTopic, "-all")
	t.Logf("pcadm dlq replay -all:\n%s", out)
	assert.Contains(t, out, firstAt+" already replayed to "+openedTopic+"/")
	assert.Contains(t, out, "1 replayed")
	require.Eventually(t, func() bool { return cases.count("ev-2") == 1 && cases.count("ev-3") == 1 }, kafkatest.Timeout, 20*time.Millisecond)
	assert.Equal(t, size+2, topicSize(t, brokers, openedTopic), "each dead letter published once")

	// And again: nothing left to publish.
	out = dlqCLI(t, brokers, "replay", "-topic", openedTopic, "-key", "case_2", "-key", "case_3")
	assert.Equal(t, 2, strings.Count(out, "already replayed"), out)
	assert.Contains(t, out, "0 replayed")
	assert.Equal(t, size+2, topicSize(t, brokers, openedTopic))

	// The replays carry the opening as it was published, and the list says
	// where each replay went.
	out = dlqCLI(t, brokers, "list", "-topic", openedTopic)
	for _, key := range []string{"case_2", "case_3"} {
		assert.Regexp(t, `\s1\s+`+regexp.QuoteMeta(openedTopic)+`/\d+/\d+\s+unknown rules`, lineWith(t, out, key), "the replay's place")
	}
	records := kafkatest.ReadMessages(t, brokers, openedTopic, int(size+2))
	replays := 0
	for _, rec := range records {
		if from := kafka.ReplayedFrom(rec); from != "" {
			replays++
			assert.Equal(t, "filings", headerOf(rec, "x-origin"))
			assert.Equal(t, "filings-case-opened-v2", headerOf(rec, kafka.HeaderSchema))
			assert.Contains(t, []string{"case_2", "case_3"}, string(rec.Key))
			assert.Empty(t, headerOf(rec, kafka.HeaderDLQReason), "a replay carries none of the dead letter's headers")
		}
	}
	assert.Equal(t, 2, replays)
	assert.Equal(t, 1, cases.count("ev-2"))
	assert.Equal(t, 1, cases.count("ev-3"))
	assert.Equal(t, 1, cases.count("ev-1"), "the opening handled the first time was never replayed")
}

func TestDeadLetterRefusals(t *testing.T) {
	brokers := kafkatest.StartBroker(t)
	for _, args := range [][]string{
		{},
		{"purge", "-topic", "t"},
		{"list"},
		{"replay", "-topic", "t"},
		{"replay", "-topic", "t", "-all", "-key", "case_1"},
		{"replay", "-topic", "t", "-offset", "3"},
		{"replay", "-topic", "t", "-key", "case_none"},
		{"replay", "-topic", "t", "-offset", "0:99"},
	} {
		_, err := dlqRun(brokers, args...)
		require.Error(t, err, strings.Join(args, " "))
	}
	out, err := dlqRun(brokers, "list", "-topic", "never-dead-lettered")
	require.NoError(t, err)
	require.Contains(t, out, "0 dead letters")
}

func lineWith(t *testing.T, out, s string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return strings.TrimSpace(l)
		}
	}
	t.Fatalf("no line with %q in:\n%s", s, out)
	return ""
}

func headerOf(rec kafkago.Message, key string) string {
	for _, h := range rec.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// topicSize is how many records topic's partitions hold.
func topicSize(t *testing.T, brokers []string, topic string) int64 {
	t.Helper()
	conn, err := kafkago.Dial("tcp", brokers[0])
	require.NoError(t, err)
	defer conn.Close()
	partitions, err := conn.ReadPartitions(topic)
	require.NoError(t, err)
	var n int64
	for _, p := range partitions {
		pc, err := kafkago.DialLeader(context.Background(), "tcp", brokers[0], topic, p.ID)
		require.NoError(t, err)
		first, last, err := pc.ReadOffsets()
		pc.Close()
		require.NoError(t, err)
		n += last - first
	}
	return n
}
