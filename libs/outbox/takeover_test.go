package outbox_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redistest"
)

// appendCaseEvent records one event of caseID, as a service's script does.
var appendCaseEvent = outbox.Script(`outbox_append(KEYS[1], 1) return 1`)

func appendEvents(t *testing.T, rdb redis.UniversalClient, topic, caseID string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		ev := outbox.Event{ID: fmt.Sprintf("ev-%02d", i), Topic: topic, Key: caseID, Schema: "case-event.v1", Payload: []byte(fmt.Sprint(i))}
		require.NoError(t, appendCaseEvent.Run(context.Background(), rdb, []string{sharding.Stream(sharding.Tag(caseID))}, outbox.Args(context.Background(), ev)...).Err())
	}
}

// stalledPublisher holds its first Publish in flight until released, as
// a relay pod that was killed or froze mid-batch holds it; when released,
// the records it held reach the brokers late.
type stalledPublisher struct {
	inner    outbox.Publisher
	inFlight chan []string // the event ids of the stalled batch
	release  chan struct{}
	once     sync.Once
}

func (s *stalledPublisher) Publish(ctx context.Context, msgs ...kafka.Message) error {
	stall := false
	s.once.Do(func() { stall = true })
	if stall {
		ids := make([]string, len(msgs))
		for i, m := range msgs {
			ids[i] = m.EventID
		}
		s.inFlight <- ids
		<-s.release
		// Released long after its tenure: the records still go out, as a
		// produce request already on the wire does.
		return s.inner.Publish(context.WithoutCancel(ctx), msgs...)
	}
	return s.inner.Publish(ctx, msgs...)
}

// syncBuffer is a log sink safe for the relay's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A case's events keep their order on Kafka when the relay holding its
// shard is lost mid-case with a batch in flight: its successor publishes
// from the oldest unpublished event, before the events written since, and
// when the lost holder's batch lands late it only repeats events already
// there; its acknowledgement is refused, so it deletes nothing and stops.
func TestCaseOrderHoldsWhenTheRelayHoldingTheShardIsLostMidCase(t *testing.T) {
	rdb := redistest.NewClient(t)
	brokers := kafkatest.StartBroker(t)
	const topic, caseID = "cases.takeover.v1", "case-1"
	kafkatest.CreateTopic(t, brokers, topic, 3)
	producer := newProducer(t, brokers, nil)

	appendEvents(t, rdb, topic, caseID, 0, 10)

	stalled := &stalledPublisher{inner: producer, inFlight: make(chan []string, 1), release: make(chan struct{})}
	logsA := &syncBuffer{}
	cfgA := relayConfig("relay-a")
	cfgA.Batch = 5
	cfgA.ClaimIdle = 300 * time.Millisecond
	ctxA, stopA := context.WithCancel(context.Background())
	doneA := make(chan error, 1)
	go func() {
		doneA <- newRelay(t, rdb, stalled, cfgA, slog.New(slog.NewTextHandler(logsA, nil)), nil).Run(ctxA)
	}()
	t.Cleanup(func() { stopA(); <-doneA })
	select {
	case ids := <-stalled.inFlight:
		require.Equal(t, []string{"ev-00", "ev-01", "ev-02", "ev-03", "ev-04"}, ids, "the holder's first batch is the oldest events")
	case <-time.After(kafkatest.Timeout):
		t.Fatal("relay-a published nothing")
	}

	stream := sharding.Stream(sharding.Tag(caseID))
	holder, err := outbox.LeaseHolder(context.Background(), rdb, stream)
	require.NoError(t, err)
	require.Equal(t, "relay-a", holder, "the lease names the replica publishing the shard")

	// The case moves on while its relay is lost.
	appendEvents(t, rdb, topic, caseID, 10, 15)

	cfgB := relayConfig("relay-b")
	cfgB.Batch = 5
	cfgB.ClaimIdle = 300 * time.Millisecond
	ctxB, stopB := context.WithCancel(context.Background())
	doneB := make(chan error, 1)
	go func() { doneB <- newRelay(t, rdb, producer, cfgB, discard(), nil).Run(ctxB) }()
	t.Cleanup(func() { stopB(); <-doneB })
	require.Eventually(t, func() bool { return streamLength(t, rdb) == 0 }, kafkatest.Timeout, 20*time.Millisecond, "relay-b took the shard over")
	holder, err = outbox.LeaseHolder(context.Background(), rdb, stream)
	require.NoError(t, err)
	require.Equal(t, "relay-b", holder)
	appendEvents(t, rdb, topic, caseID, 15, 20)
	require.Eventually(t, func() bool { return streamLength(t, rdb) == 0 }, kafkatest.Timeout, 20*time.Millisecond)

	// The lost holder comes back and its stale batch lands.
	close(stalled.release)
	require.Eventually(t, func() bool {
		return bytes.Contains([]byte(logsA.String()), []byte("outbox lease lost while publishing"))
	}, kafkatest.Timeout, 20*time.Millisecond, "relay-a's acknowledgement was not refused")

	recs := kafkatest.ReadMessages(t, brokers, topic, 25)
	var firsts []string
	seen := map[string]bool{}
	partitions := map[int]bool{}
	for _, r := range recs {
		partitions[r.Partition] = true
		id := eventID(r.Headers)
		if !seen[id] {
			seen[id] = true
			firsts = append(firsts, id)
		}
	}
	var want []string
	for i := range 20 {
		want = append(want, fmt.Sprintf("ev-%02d", i))
	}
	require.Len(t, partitions, 1, "one case, one partition")
	assert.Equal(t, want, firsts, "the first copy of each event is in the case's order")
	assert.Len(t, recs, 25, "the five records of the lost batch are the only copies")
}

func eventID(headers []kafkago.Header) string {
	for _, h := range headers {
		if h.Key == kafka.HeaderEventID {
			return string(h.Value)
		}
	}
	return ""
}
