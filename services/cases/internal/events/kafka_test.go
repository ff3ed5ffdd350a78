package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/events"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// openedPayload is today's case-opened fixture for another case; every
// second case's respondent confirmed the draft.
func openedPayload(t testing.TB, i int) (id string, payload []byte) {
	t.Helper()
	raw, err := os.ReadFile("testdata/case-opened-today.json")
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	id = fmt.Sprintf("case_%04d", i)
	m["eventId"] = "case-opened:" + id
	m["caseId"] = id
	if i%2 == 0 {
		m["participants"].([]any)[1].(map[string]any)["joined"] = true
		m["confirmations"].([]any)[1].(map[string]any)["status"] = "confirmed"
	}
	payload, err = json.Marshal(m)
	require.NoError(t, err)
	return id, payload
}

// consume runs a fresh consumer group over the whole topic until it has
// handled want records, then stops it.
func consume(t *testing.T, brokers []string, group string, h *events.Opened, want int64) {
	t.Helper()
	var handled atomic.Int64
	dlq, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers})
	require.NoError(t, err)
	defer dlq.Close()
	c, err := kafka.NewConsumer(kafka.ConsumerConfig{
		Brokers: brokers, GroupID: group, Topic: api.CaseOpenedTopic, StartOffset: kafka.FirstOffset,
		HeartbeatInterval: 200 * time.Millisecond, SessionTimeout: 6 * time.Second, RebalanceTimeout: 2 * time.Second,
	}, func(ctx context.Context, m kafka.Message) error {
		if err := h.Handle(ctx, m); err != nil {
			return err
		}
		handled.Add(1)
		return nil
	}, dlq, discard(), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	require.Eventually(t, func() bool { return handled.Load() >= want }, kafkatest.Timeout, 20*time.Millisecond, "group %s", group)
	cancel()
	require.NoError(t, <-done)
}

type snapshot struct {
	cases  map[string]procedure.Case
	docket map[string][]json.RawMessage
}

func snap(t testing.TB, cases *store.Cases, ids []string) snapshot {
	t.Helper()
	s := snapshot{cases: map[string]procedure.Case{}, docket: map[string][]json.RawMessage{}}
	for _, id := range ids {
		l, err := cases.Load(context.Background(), id)
		require.NoError(t, err)
		s.cases[id] = l.Case
		s.docket[id], err = cases.Docket(context.Background(), id, 1, 100)
		require.NoError(t, err)
	}
	return s
}

// Publish N case-opened facts, consume them, replay the topic from offset 0
// twice: the cases are the same and the events topic holds exactly one
// opened event per case.
func TestConsumeAndReplayCaseOpened(t *testing.T) {
	brokers := kafkatest.StartBroker(t)
	kafkatest.CreateTopic(t, brokers, api.CaseOpenedTopic, 4)
	kafkatest.CreateTopic(t, brokers, api.CaseEventsTopic, 4)
	rdb := redistest.NewClient(t)
	cases := newCases(t, rdb)
	handler := events.NewOpened(caseflow.New(cases, nil), discard())
	_, envelopeSchema := schemas(t)

	producer, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers})
	require.NoError(t, err)
	t.Cleanup(func() { _ = producer.Close() })
	const n = 10
	var ids []string
	var msgs []kafka.Message
	for i := range n {
		id, payload := openedPayload(t, i)
		ids = append(ids, id)
		msgs = append(msgs, kafka.Message{Topic: api.CaseOpenedTopic, Key: id, EventID: "case-opened:" + id, Schema: api.CaseOpenedSchema, Value: payload})
	}
	require.NoError(t, producer.Publish(context.Background(), msgs...))

	consume(t, brokers, "cases-1", handler, n)
	first := snap(t, cases, ids)
	consume(t, brokers, "cases-replay-1", handler, n)
	consume(t, brokers, "cases-replay-2", handler, n)
	again := snap(t, cases, ids)
	require.Empty(t, cmp.Diff(first.cases, again.cases), "a replay changes no case")
	require.Equal(t, first.docket, again.docket, "a replay records no event")

	relayCfg := outbox.DefaultRelayConfig(testSharding, "test")
	relayCfg.ClaimIdle = 200 * time.Millisecond
	relay, err := outbox.NewRelay(rdb, producer, relayCfg, discard(), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	relayed := make(chan error, 1)
	go func() { relayed <- relay.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-relayed })

	want := n + n/2 // opened for each; stage_opened where the respondent had confirmed
	records := kafkatest.ReadMessages(t, brokers, api.CaseEventsTopic, want)
	opened := map[string]int{}
	for _, r := range records {
		require.NoError(t, validate(t, envelopeSchema, r.Value), "%s", r.Value)
		var env events.Envelope
		require.NoError(t, json.Unmarshal(r.Value, &env))
		var b events.Body
		require.NoError(t, json.Unmarshal(env.Event, &b))
		require.Equal(t, b.CaseID, string(r.Key), "keyed by case id")
		headers := map[string]string{}
		for _, h := range r.Headers {
			headers[h.Key] = string(h.Value)
		}
		require.Equal(t, b.EventID, headers[kafka.HeaderEventID])
		require.Equal(t, api.CaseEventEnvelopeSchema, headers[kafka.HeaderSchema])
		require.NotEmpty(t, env.Recipients)
		if b.Type == "opened" {
			opened[b.CaseID]++
			require.Equal(t, int64(1), b.Sequence)
		}
	}
	require.Len(t, opened, n)
	for id, count := range opened {
		require.Equal(t, 1, count, id)
	}
	require.Eventually(t, func() bool {
		var total int64
		for _, s := range testSharding.Streams() {
			l, err := rdb.XLen(context.Background(), s).Result()
			require.NoError(t, err)
			total += l
		}
		return total == 0
	}, kafkatest.Timeout, 20*time.Millisecond, "the relay drained the outbox")
	require.Equal(t, int64(want), topicSize(t, brokers, api.CaseEventsTopic), "nothing more than the openings was published")
}

// topicSize sums the end offsets of every partition (one broker leads all).
func topicSize(t testing.TB, brokers []string, topic string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kafkatest.Timeout)
	defer cancel()
	conn, err := kafkago.DialContext(ctx, "tcp", brokers[0])
	require.NoError(t, err)
	defer conn.Close()
	parts, err := conn.ReadPartitions(topic)
	require.NoError(t, err)
	var total int64
	for _, p := range parts {
		leader, err := kafkago.DialLeader(ctx, "tcp", brokers[0], topic, p.ID)
		require.NoError(t, err)
		last, err := leader.ReadLastOffset()
		leader.Close()
		require.NoError(t, err)
		total += last
	}
	return total
}

// A record that can never open a case (it does not decode, names another
// schema, or its rules version is unknown) fails permanent: the consumer
// dead-letters it at once. A store outage is not permanent: it is waited
// out.
func TestAnOpeningThatCanNeverSucceedIsPermanent(t *testing.T) {
	rdb := redistest.NewClient(t)
	handler := events.NewOpened(caseflow.New(newCases(t, rdb), nil), discard())
	payload, err := os.ReadFile("testdata/case-opened-v2.json")
	require.NoError(t, err)
	unknownRules := strings.Replace(string(payload), `"pcourt-rules-2026-11"`, `"pcourt-rules-1999-01"`, 1)
	require.NotEqual(t, string(payload), unknownRules)
	for name, msg := range map[string]kafka.Message{
		"not json":      {Schema: api.CaseOpenedSchema, Value: []byte("{")},
		"other schema":  {Schema: "filings-case-opened-v1", Value: payload},
		"unknown rules": {Schema: api.CaseOpenedSchema, Value: []byte(unknownRules)},
	} {
		err := handler.Handle(context.Background(), msg)
		require.Error(t, err, name)
		require.True(t, kafka.IsPermanent(err), "%s: %v", name, err)
	}

	require.NoError(t, rdb.Close())
	err = handler.Handle(context.Background(), kafka.Message{Schema: api.CaseOpenedSchema, Value: payload})
	require.Error(t, err)
	require.False(t, kafka.IsPermanent(err), "Redis away is an outage, retried: %v", err)
}

// newCases is the store of cases as the service runs it by default: 16
// shards, no durable-write confirmation.
func newCases(tb testing.TB, rdb redis.UniversalClient) *store.Cases {
	tb.Helper()
	cases, err := store.NewCases(rdb, outbox.DefaultShards, nil)
	require.NoError(tb, err)
	return cases
}

// testSharding is the layout newCases gives the store.
var testSharding = outbox.Sharding{Service: "cases", Count: outbox.DefaultShards}
