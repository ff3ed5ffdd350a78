package outbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/kafkatest"
	"github.com/pcourt/pcourt/libs/redistest"
)

var stateOnly = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.error_reply('order exists')
end
redis.call('HSET', KEYS[1], 'status', 'open')
return 1
`)

// BenchmarkStateChangeWithEvent is a state change that records its event in
// the same Lua step; BenchmarkStateChangeAlone is the same change without it.
// The ratio is what transactional publishing costs the writer.
func BenchmarkStateChangeWithEvent(b *testing.B) {
	rdb := redistest.NewClient(b)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		if err := open(ctx, b, rdb, fmt.Sprintf("b-%09d", i), "orders.bench.v1"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStateChangeAlone(b *testing.B) {
	rdb := redistest.NewClient(b)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		id := fmt.Sprintf("b-%09d", i)
		if err := stateOnly.Run(ctx, rdb, []string{"pc:orders:" + sharding.Tag(id) + ":order:" + id}).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRelayThroughput relays b.N events from Redis to a kfake broker
// with one relay replica and reports events per second.
func BenchmarkRelayThroughput(b *testing.B) {
	rdb := redistest.NewClient(b)
	brokers := kafkatest.StartBroker(b)
	kafkatest.CreateTopic(b, brokers, "orders.relay.bench.v1", 10)
	ctx := context.Background()
	for i := range b.N {
		if err := open(ctx, b, rdb, fmt.Sprintf("r-%09d", i), "orders.relay.bench.v1"); err != nil {
			b.Fatal(err)
		}
	}
	producer := newProducer(b, brokers, nil)
	relayCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	b.ResetTimer()
	start := time.Now()
	relay := newRelay(b, rdb, producer, relayConfig("bench"), discard(), nil)
	go func() { done <- relay.Run(relayCtx) }()
	deadline := start.Add(2 * time.Minute)
	for streamLength(b, rdb) > 0 {
		if time.Now().After(deadline) {
			b.Fatal("relay did not drain the outbox within 2 minutes")
		}
		time.Sleep(time.Millisecond) // polling the stream's length; nothing to wait on
	}
	elapsed := time.Since(start)
	b.StopTimer()
	stop()
	<-done
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
}
