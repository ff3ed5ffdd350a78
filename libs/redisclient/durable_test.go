package redisclient_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/telemetry/telemetrytest"
)

var setScript = redis.NewScript(`return redis.call('SET', KEYS[1], ARGV[1])`)

func durable(t *testing.T, cfg redisclient.DurableConfig) (*redisclient.Durable, *bytes.Buffer) {
	t.Helper()
	require.NoError(t, cfg.Validate())
	var log bytes.Buffer
	return redisclient.NewDurable(cfg, slog.New(slog.NewJSONHandler(&log, nil))), &log
}

func set(d *redisclient.Durable, rdb redis.UniversalClient, key, value string) (redisclient.Confirmation, error) {
	return d.Write(context.Background(), rdb, key, func(s redis.Scripter) error {
		return setScript.Run(context.Background(), s, []string{key}, value).Err()
	})
}

// A write under REDIS_DURABLE_WRITES=wait is answered once its replica has
// it; with the replica gone the write still stands, and what it lacked is
// said in the log and the confirmation, never as a failed write.
func TestDurableWriteWaitsForTheReplica(t *testing.T) {
	primary := redistest.Start(t)
	replica := redistest.StartReplica(t, primary)
	rdb := primary.Client(t)
	d, log := durable(t, redisclient.DurableConfig{Mode: redisclient.DurableWait, Replicas: 1, Timeout: 300 * time.Millisecond})
	tel := telemetrytest.Setup(t, "cases")
	require.NoError(t, d.Instrument(tel.Meter))

	got, err := set(d, rdb, "pc:test:{a}:opened", "1")
	require.NoError(t, err)
	require.Equal(t, redisclient.Confirmation{Waited: true, Replicas: 1}, got)
	// The replica holds it the moment the write is answered: no polling.
	require.Equal(t, "1", replica.Client(t).Get(context.Background(), "pc:test:{a}:opened").Val())
	require.Empty(t, log.String())

	replica.Stop()
	start := time.Now()
	got, err = set(d, rdb, "pc:test:{a}:paid", "1")
	require.NoError(t, err, "the write happened; the shortfall is not an error")
	require.Equal(t, redisclient.Confirmation{Waited: true, Replicas: 0, Short: true}, got)
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "it waited the whole timeout")
	require.Equal(t, "1", rdb.Get(context.Background(), "pc:test:{a}:paid").Val())
	require.Contains(t, log.String(), `"msg":"durable write short"`)
	require.Contains(t, log.String(), `"replicas_wanted":1,"replicas":0`)

	// Each wait is counted by its result, the short one for its alert.
	fams := telemetrytest.Scrape(t, tel.MetricsHandler)
	require.Equal(t, 1.0, fams.Value(t, "pcourt_redis_durable_writes_total", map[string]string{"service": "cases", "result": "confirmed"}))
	require.Equal(t, 1.0, fams.Value(t, "pcourt_redis_durable_writes_total", map[string]string{"result": "short"}))
}

// A write that fails is the caller's error, and nothing is waited for.
func TestDurableWriteReturnsTheWritesError(t *testing.T) {
	rdb := redistest.NewClient(t)
	d, _ := durable(t, redisclient.DurableConfig{Mode: redisclient.DurableWait, Replicas: 1, Timeout: 5 * time.Second})
	start := time.Now()
	got, err := d.Write(context.Background(), rdb, "k", func(s redis.Scripter) error {
		return redis.NewScript(`return redis.error_reply('refused')`).Run(context.Background(), s, []string{"k"}).Err()
	})
	require.ErrorContains(t, err, "refused")
	require.Equal(t, redisclient.Confirmation{}, got)
	require.Less(t, time.Since(start), time.Second)
}

// Off (and a nil *Durable) writes through the pooled client and waits for
// nothing.
func TestDurableWriteOff(t *testing.T) {
	rdb := redistest.NewClient(t)
	for _, d := range []*redisclient.Durable{nil, redisclient.NewDurable(redisclient.DurableConfig{Mode: redisclient.DurableOff}, slog.Default())} {
		got, err := set(d, rdb, "k", "v")
		require.NoError(t, err)
		require.Equal(t, redisclient.Confirmation{}, got)
		require.Equal(t, "v", rdb.Get(context.Background(), "k").Val())
	}
}

// In a cluster the WAIT goes to the primary that took the write, on the
// connection that wrote: each primary's replica confirms its own keys,
// and losing one replica shorts only the writes of its primary's slots.
func TestDurableWriteInAClusterWaitsOnTheKeysPrimary(t *testing.T) {
	cluster := redistest.StartClusterWithReplicas(t)
	rdb := cluster.Client(t)
	ctx := context.Background()
	d, _ := durable(t, redisclient.DurableConfig{Mode: redisclient.DurableWait, Replicas: 1, Timeout: 300 * time.Millisecond})

	// One key on each primary.
	keyOn := map[string]string{}
	for i := 0; len(keyOn) < len(cluster.Addrs); i++ {
		key := "pc:test:{" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "}:k"
		node, err := rdb.MasterForKey(ctx, key)
		require.NoError(t, err)
		if _, seen := keyOn[node.Options().Addr]; !seen {
			keyOn[node.Options().Addr] = key
		}
	}
	for _, key := range keyOn {
		got, err := set(d, rdb, key, "1")
		require.NoError(t, err)
		require.Equal(t, redisclient.Confirmation{Waited: true, Replicas: 1}, got, key)
	}

	lost := cluster.Addrs[1]
	cluster.Replicas[lost].Stop()
	for primary, key := range keyOn {
		got, err := set(d, rdb, key, "2")
		require.NoError(t, err)
		require.Equal(t, primary == lost, got.Short, "%s on %s", key, primary)
		require.Equal(t, "2", rdb.Get(ctx, key).Val())
	}
}

// WAITAOF needs Redis 7.2 with appendonly yes: a deployment configured for
// it on a server that cannot is refused at start, naming the server.
func TestCheckDurableRefusesWaitAOFWhereTheServerCannot(t *testing.T) {
	rdb := redistest.NewClient(t)
	ctx := context.Background()
	require.NoError(t, redisclient.CheckDurable(ctx, rdb, redisclient.DurableConfig{Mode: redisclient.DurableWait, Replicas: 1, Timeout: time.Second}, slog.Default()))
	// The test servers run without an append-only file (and Debian's 7.0
	// knows no WAITAOF): either way the server refuses.
	err := redisclient.CheckDurable(ctx, rdb, redisclient.DurableConfig{Mode: redisclient.DurableWaitAOF, Timeout: time.Second}, slog.Default())
	require.ErrorContains(t, err, "REDIS_DURABLE_WRITES=waitaof needs Redis 7.2")
	require.ErrorContains(t, err, rdb.Options().Addr)
}

func TestDurableConfigFromEnv(t *testing.T) {
	cfg := fromEnv(map[string]string{})
	require.Equal(t, redisclient.DurableConfig{Mode: "off", Replicas: 1, Timeout: 500 * time.Millisecond}, cfg.Durable)
	cfg = fromEnv(map[string]string{"REDIS_DURABLE_WRITES": "waitaof", "REDIS_DURABLE_REPLICAS": "2", "REDIS_DURABLE_TIMEOUT": "1s"})
	require.NoError(t, cfg.Validate())
	for env, want := range map[string]string{
		"REDIS_DURABLE_WRITES=sync":                          "not off, wait or waitaof",
		"REDIS_DURABLE_WRITES=wait,REDIS_DURABLE_REPLICAS=0": "at least 1",
		"REDIS_DURABLE_WRITES=wait,REDIS_DURABLE_TIMEOUT=0s": "between 1ms and 10s",
	} {
		vars := map[string]string{}
		for _, kv := range bytes.Split([]byte(env), []byte(",")) {
			k, v, _ := bytes.Cut(kv, []byte("="))
			vars[string(k)] = string(v)
		}
		require.ErrorContains(t, fromEnv(vars).Validate(), want, env)
	}
}
