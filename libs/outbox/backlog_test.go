package outbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/kafkatest"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/telemetry/telemetrytest"
)

// TestBacklogIsWhatTheRelayHasYetToPublish appends events with no relay
// running and reads the backlog and the oldest entry's age of each shard
// from /metrics; once a relay has published them, both fall to zero.
func TestBacklogIsWhatTheRelayHasYetToPublish(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	tel := telemetrytest.Setup(t, "orders")
	require.NoError(t, outbox.ObserveBacklog(rdb, sharding, tel.Meter))

	ids := []string{"o-1", "o-2", "o-3", "o-4", "o-5", "o-6"}
	perShard := map[string]float64{}
	for _, id := range ids {
		require.NoError(t, open(ctx, t, rdb, id, "orders.opened"))
		perShard[sharding.Tag(id)]++
	}
	// Age the entries past the id's millisecond resolution; nothing is
	// waited for.
	time.Sleep(20 * time.Millisecond)

	fams := telemetrytest.Scrape(t, tel.MetricsHandler)
	for _, tag := range sharding.Tags() {
		labels := map[string]string{"service": "orders", "outbox": "orders", "shard": tag}
		require.Equal(t, perShard[tag], fams.Value(t, "pcourt_outbox_backlog", labels), "backlog of %s", tag)
		age := fams.Value(t, "pcourt_outbox_oldest_entry_age_seconds", labels)
		if perShard[tag] == 0 {
			require.Zero(t, age, "an empty shard has no oldest entry")
			continue
		}
		require.Greater(t, age, 0.015, "shard %s's oldest entry is as old as it is", tag)
		require.Less(t, age, 60.0)
	}

	brokers := kafkatest.StartBroker(t)
	kafkatest.CreateTopic(t, brokers, "orders.opened", 1) // topics are declared, never created on demand
	relay := newRelay(t, rdb, newProducer(t, brokers, nil), relayConfig("r1"), discard(), nil)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- relay.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, func() bool { return streamLength(t, rdb) == 0 }, 10*time.Second, 10*time.Millisecond)

	fams = telemetrytest.Scrape(t, tel.MetricsHandler)
	for _, tag := range sharding.Tags() {
		labels := map[string]string{"shard": tag}
		require.Zero(t, fams.Value(t, "pcourt_outbox_backlog", labels))
		require.Zero(t, fams.Value(t, "pcourt_outbox_oldest_entry_age_seconds", labels))
	}
}
