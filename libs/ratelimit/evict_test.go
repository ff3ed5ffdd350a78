package ratelimit

import (
	"hash/maphash"
	"strconv"
	"testing"
	"time"
)

func TestIdleKeysDoNotGrowMemory(t *testing.T) {
	l := New(nil, "test:rl")
	now := time.Now()
	l.now = func() time.Time { return now }
	// Every key live (a lease that has not lapsed): the shards still stay
	// within their bound, dropping a quarter when one is full.
	for i := range 2 * shardCount * maxKeysPerShard {
		ls := l.lease("addr:" + strconv.Itoa(i))
		ls.lapses = now.Add(time.Hour)
	}
	total := 0
	for i := range l.shards {
		n := len(l.shards[i].leases)
		if n > maxKeysPerShard {
			t.Fatalf("shard %d holds %d entries, more than %d", i, n, maxKeysPerShard)
		}
		total += n
	}
	if total < shardCount*maxKeysPerShard/2 {
		t.Fatalf("only %d entries kept: the shards should fill before dropping", total)
	}
	// Once they lapse, a shard that fills drops them all at its next new key.
	now = now.Add(2 * time.Hour)
	s := &l.shards[maphashIndex(l, "next")]
	for i := 0; len(s.leases) < maxKeysPerShard; i++ {
		if key := "next:" + strconv.Itoa(i); maphashIndex(l, key) == maphashIndex(l, "next") {
			l.lease(key) // a new lease has not been granted: it lapsed too
		}
	}
	l.lease("next")
	if n := len(s.leases); n != 1 {
		t.Fatalf("a full shard of lapsed leases keeps %d entries after a new key, want 1", n)
	}
}

func maphashIndex(l *Limiter, key string) uint64 { return maphash.String(l.seed, key) % shardCount }
