package kafka_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafka/kafkadev"
	"github.com/pcourt/pcourt/libs/kafkatest"
)

// failCoordinatorLookups makes the next n FindCoordinator requests answer
// COORDINATOR_NOT_AVAILABLE, as while a coordinator moves or starts.
func failCoordinatorLookups(c interface {
	ControlKey(int16, func(kmsg.Request) (kmsg.Response, error, bool))
	KeepControl()
}, n int32) *atomic.Int32 {
	var failed atomic.Int32
	c.ControlKey(kmsg.FindCoordinator.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		if failed.Load() >= n {
			return nil, nil, false
		}
		c.KeepControl()
		failed.Add(1)
		r := req.(*kmsg.FindCoordinatorRequest)
		resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.Version = r.Version
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		for _, key := range r.CoordinatorKeys {
			co := kmsg.NewFindCoordinatorResponseCoordinator()
			co.Key, co.ErrorCode = key, kerr.CoordinatorNotAvailable.Code
			resp.Coordinators = append(resp.Coordinators, co)
		}
		return resp, nil, true
	})
	return &failed
}

// On a three-broker cluster whose partition leaders move while records
// are written and read, and whose group coordinator is unavailable and
// then answers NOT_COORDINATOR to a join, the producer and the consumer
// carry on: every record is handled, and each case's records reach the
// handler first in the order they were published (at least once: a
// record may come again, never ahead of a later one's first delivery).
func TestProducerAndConsumerCarryOnThroughLeaderMovesAndCoordinatorErrors(t *testing.T) {
	cluster := kafkatest.StartCluster(t, kafkadev.Config{})
	brokers := cluster.ListenAddrs()
	topic := kafka.Topics[0]
	producer := newProducer(t, brokers, nil)

	lookups := failCoordinatorLookups(cluster, 3)
	var joinsRefused atomic.Int32
	cluster.ControlKey(kmsg.JoinGroup.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		if !joinsRefused.CompareAndSwap(0, 1) {
			return nil, nil, false
		}
		r := req.(*kmsg.JoinGroupRequest)
		resp := r.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.Version = r.Version
		resp.ErrorCode = kerr.NotCoordinator.Code
		return resp, nil, true
	})

	got := &recorder{}
	startConsumer(t, consumerConfig(brokers, "g-faults", topic.Name), got.handle, producer, nil)

	const cases, rounds = 8, 5
	var want []string
	for round := range rounds {
		for c := range cases {
			id := fmt.Sprintf("ev-%d-%d", c, round)
			want = append(want, id)
			require.NoError(t, producer.Publish(context.Background(), kafka.Message{
				Topic: topic.Name, Key: fmt.Sprintf("case-%d", c), EventID: id, Schema: "s.v1",
			}), "publishing through leader moves")
		}
		// Every partition's leader moves to the next broker.
		for p := range topic.Partitions {
			leader := cluster.LeaderFor(topic.Name, int32(p))
			require.NoError(t, cluster.MoveTopicPartition(topic.Name, int32(p), (leader+1)%kafkadev.Brokers))
		}
	}

	got.waitMessages(t, len(want))
	assert.EqualValues(t, 3, lookups.Load(), "the coordinator lookups failed")
	assert.EqualValues(t, 1, joinsRefused.Load(), "a join was refused")

	firstRound := map[string]int{} // case key → next round expected
	seen := map[string]bool{}
	for _, m := range got.messages() {
		if seen[m.EventID] {
			continue // a redelivery: allowed, at least once
		}
		seen[m.EventID] = true
		var c, round int
		_, err := fmt.Sscanf(m.EventID, "ev-%d-%d", &c, &round)
		require.NoError(t, err)
		assert.Equal(t, firstRound[m.Key], round, "case %s: %s came out of order", m.Key, m.EventID)
		firstRound[m.Key] = round + 1
	}
	assert.Len(t, seen, len(want), "every record was handled")
}
