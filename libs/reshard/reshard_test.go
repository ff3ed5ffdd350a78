package reshard_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/reshard"
)

// things is a small layout: a thing is its hash thing:<id> and an expiring
// string thing:<id>:lease; every shard has a sorted set "due" of thing ids.
var things = reshard.Layout{
	Service: "things",
	Entity: func(rest string) (string, bool, bool) {
		after, ok := strings.CutPrefix(rest, "thing:")
		if !ok {
			return "", false, false
		}
		id, _, sub := strings.Cut(after, ":")
		return id, !sub, true
	},
	ShardKeys: []reshard.ShardKey{{Name: "due", Kind: reshard.SortedSet, Owner: func(m string) (string, bool) { return m, true }}},
	Markers:   []string{"due-built"},
}

const thingCount = 30

func key(count int, id, suffix string) string {
	return "pc:things:" + (outbox.Sharding{Service: "things", Count: count}).Tag(id) + ":thing:" + id + suffix
}

func writeThings(t *testing.T, rdb redis.UniversalClient, count int) {
	t.Helper()
	ctx := context.Background()
	s := outbox.Sharding{Service: "things", Count: count}
	for i := range thingCount {
		id := fmt.Sprintf("t%02d", i)
		require.NoError(t, rdb.HSet(ctx, key(count, id, ""), "n", i).Err())
		require.NoError(t, rdb.Set(ctx, key(count, id, ":lease"), "held", time.Hour).Err())
		require.NoError(t, rdb.ZAdd(ctx, "pc:things:"+s.Tag(id)+":due", redis.Z{Score: float64(i), Member: id}).Err())
	}
	for _, tag := range s.Tags() {
		require.NoError(t, rdb.Set(ctx, "pc:things:"+tag+":due-built", "1", 0).Err())
	}
}

// checkThings reads every thing at the place count gives it.
func checkThings(t *testing.T, rdb redis.UniversalClient, count int) {
	t.Helper()
	ctx := context.Background()
	s := outbox.Sharding{Service: "things", Count: count}
	for i := range thingCount {
		id := fmt.Sprintf("t%02d", i)
		n, err := rdb.HGet(ctx, key(count, id, ""), "n").Int()
		require.NoError(t, err, id)
		require.Equal(t, i, n)
		ttl, err := rdb.PTTL(ctx, key(count, id, ":lease")).Result()
		require.NoError(t, err)
		require.Greater(t, ttl, 59*time.Minute, "%s's lease keeps its time to live", id)
		require.LessOrEqual(t, ttl, time.Hour)
		score, err := rdb.ZScore(ctx, "pc:things:"+s.Tag(id)+":due", id).Result()
		require.NoError(t, err)
		require.Equal(t, float64(i), score)
	}
}

func TestRunKeepsTimeToLiveAndDeletesMarkers(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	writeThings(t, rdb, 4)
	rep, err := reshard.Run(ctx, rdb, things, 4, 10, reshard.Options{})
	require.NoError(t, err)
	require.Equal(t, thingCount, rep.Entities)
	checkThings(t, rdb, 10)
	markers, err := rdb.Keys(ctx, "pc:things:*:due-built").Result()
	require.NoError(t, err)
	require.Empty(t, markers, "the service rebuilds what the markers said was built")
}

func TestRunRefusesAnUndrainedOutboxOfEitherCount(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	writeThings(t, rdb, 4)
	stream := (outbox.Sharding{Service: "things"}).Stream("{things.07}") // a shard only the new count has
	require.NoError(t, rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"id", "e1"}}).Err())
	_, err := reshard.Run(ctx, rdb, things, 4, 10, reshard.Options{})
	require.ErrorIs(t, err, reshard.ErrOutboxNotEmpty)
	require.Contains(t, err.Error(), stream)
	checkThings(t, rdb, 4)
}

// The subcommand, against a Redis Cluster of three primaries: keys of one
// thing's two tags are on different nodes.
func TestCommandMovesThingsOnACluster(t *testing.T) {
	ctx := context.Background()
	cluster := redistest.StartCluster(t)
	rdb := cluster.Client(t)
	writeThings(t, rdb, 4)
	env := map[string]string{"REDIS_ADDRS": strings.Join(cluster.Addrs, ","), "REDIS_MODE": "cluster"}
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := reshard.Command(ctx, "things", args, func(k string) string { return env[k] }, &out,
			func(ctx context.Context, rdb redis.UniversalClient, from, to int, opts reshard.Options) (reshard.Report, error) {
				return reshard.Run(ctx, rdb, things, from, to, opts)
			})
		return out.String(), err
	}

	_, err := run("-to", "10")
	require.ErrorContains(t, err, "-from and -to are required")

	out, err := run("-from", "4", "-to", "10", "-dry-run")
	require.NoError(t, err)
	require.Contains(t, out, "would move")
	checkThings(t, rdb, 4)

	out, err = run("-from", "4", "-to", "10", "-limit", "3")
	require.NoError(t, err)
	require.Contains(t, out, "stopped at the limit of 3 entities")

	out, err = run("-from", "4", "-to", "10")
	require.NoError(t, err, out)
	checkThings(t, rdb, 10)

	_, err = run("-from", "10", "-to", "3")
	require.NoError(t, err)
	checkThings(t, rdb, 3)
}

func TestRunRefusesKeysTheLayoutDoesNotKnow(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	writeThings(t, rdb, 4)
	require.NoError(t, rdb.Set(ctx, "pc:things:{things.02}:archive-index", "x", 0).Err())
	_, err := reshard.Run(ctx, rdb, things, 4, 10, reshard.Options{})
	require.ErrorIs(t, err, reshard.ErrUnknownKeys)
	require.Contains(t, err.Error(), "pc:things:{things.02}:archive-index")
	checkThings(t, rdb, 4)
}
