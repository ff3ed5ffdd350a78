package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/service"
)

// The API needs Redis alone: Kafka and a consumer that cannot fetch are
// reported (degraded) and never take the pod out of its endpoints; Redis
// away does.
func TestBaseIsReadyWhileRedisAnswersWhateverKafkaDoes(t *testing.T) {
	redisSrv := redistest.Start(t)
	brokers := kafkatest.StartBroker(t)
	env := map[string]string{"REDIS_ADDRS": redisSrv.Addr, "KAFKA_BROKERS": brokers[0], "REDIS_PASSWORD": "s3cr3t-password"}
	getenv := func(k string) string { return env[k] }
	cfg := service.ConfigFromEnv(envconf.New(getenv), "127.0.0.1:0")
	require.NoError(t, cfg.Validate())

	var logs bytes.Buffer
	base, err := service.Start(context.Background(), service.Options{Name: "test", Version: "v1", Config: cfg, FullConfig: cfg, Getenv: getenv, Stdout: &logs})
	require.NoError(t, err)
	t.Cleanup(base.Close)
	require.Contains(t, logs.String(), `"msg":"starting"`)
	require.NotContains(t, logs.String(), "s3cr3t-password", "secrets never reach the log")

	readyz := func(url string) (int, string) {
		resp, err := http.Get(url + "/readyz")
		require.NoError(t, err)
		defer resp.Body.Close()
		var body struct{ Status string }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return resp.StatusCode, body.Status
	}
	ts := httptest.NewServer(base.Server(nil, base.KafkaCheck()).Router())
	t.Cleanup(ts.Close)
	status, word := readyz(ts.URL)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "ready", word)

	// A consumer that cannot fetch, and brokers that do not answer, are
	// reported; the API keeps serving.
	fetching := errors.New("fetching from case-events: failed to dial")
	withConsumer := httptest.NewServer(base.Server(nil, base.KafkaCheck(), httpserver.Check{Name: "consumer", Advisory: true, Probe: func(context.Context) error { return fetching }}).Router())
	t.Cleanup(withConsumer.Close)
	status, word = readyz(withConsumer.URL)
	require.Equal(t, http.StatusOK, status, "still ready while the consumer cannot fetch")
	require.Equal(t, "degraded", word)

	env["KAFKA_BROKERS"] = "127.0.0.1:1"
	away, err := service.Start(context.Background(), service.Options{Name: "test", Version: "v1", Config: service.ConfigFromEnv(envconf.New(getenv), "127.0.0.1:0"), Getenv: getenv, Stdout: io.Discard})
	require.NoError(t, err)
	t.Cleanup(away.Close)
	brokerless := httptest.NewServer(away.Server(nil, away.KafkaCheck()).Router())
	t.Cleanup(brokerless.Close)
	status, word = readyz(brokerless.URL)
	require.Equal(t, http.StatusOK, status, "still ready while Kafka is away: writes land in the outbox")
	require.Equal(t, "degraded", word)

	redisSrv.Stop()
	status, word = readyz(ts.URL)
	require.Equal(t, http.StatusServiceUnavailable, status, "not ready without Redis")
	require.Equal(t, "unavailable", word)
}

func TestConfigNamesWhatIsMissing(t *testing.T) {
	cfg := service.ConfigFromEnv(envconf.New(func(string) string { return "" }), "")
	require.ErrorContains(t, cfg.Validate(), "address")
}

// Shutdown: /readyz fails the moment draining starts (on the admin
// listener, which keeps answering while the public one drains), the
// in-flight request finishes, and only then do consumers and the relay
// stop, in that order.
func TestShutdownIsOrderedAndReadinessFailsFirst(t *testing.T) {
	redisSrv := redistest.Start(t)
	brokers := kafkatest.StartBroker(t)
	env := map[string]string{"REDIS_ADDRS": redisSrv.Addr, "KAFKA_BROKERS": brokers[0]}
	getenv := func(k string) string { return env[k] }
	cfg := service.ConfigFromEnv(envconf.New(getenv), "127.0.0.1:0")
	require.NoError(t, cfg.Validate())
	base, err := service.Start(context.Background(), service.Options{Name: "test", Version: "v1", Config: cfg, FullConfig: cfg, Getenv: getenv, Stdout: io.Discard})
	require.NoError(t, err)
	t.Cleanup(base.Close)

	srv := base.Server(nil)
	entered, release := make(chan struct{}), make(chan struct{})
	srv.Router().GET("/slow", func(c *gin.Context) {
		close(entered)
		<-release
		c.String(http.StatusOK, "finished")
	})
	addr, err := srv.Listen()
	require.NoError(t, err)
	admin := "http://" + srv.AdminAddr().String()

	var mu sync.Mutex
	var stopped []string
	worker := func(name string) lifecycle.Component {
		return lifecycle.Component{Name: name, Run: func(ctx context.Context) error {
			<-ctx.Done()
			mu.Lock()
			defer mu.Unlock()
			stopped = append(stopped, name)
			return nil
		}}
	}
	httpStopped := func(ctx context.Context) error {
		err := srv.Run(ctx)
		mu.Lock()
		defer mu.Unlock()
		stopped = append(stopped, "http")
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- lifecycle.Run(ctx, base.Logger,
			lifecycle.Component{Name: "http", Run: httpStopped}, worker("consumer"), worker("outbox-relay"))
	}()

	readyz := func() int {
		resp, err := http.Get(admin + "/readyz")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Eventually(t, func() bool { return readyz() == http.StatusOK }, 5*time.Second, 10*time.Millisecond)

	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + addr.String() + "/slow")
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- string(b)
	}()
	<-entered
	cancel() // SIGTERM with a request in flight

	require.Eventually(t, func() bool { return readyz() == http.StatusServiceUnavailable }, 5*time.Second, 5*time.Millisecond,
		"readiness fails as soon as draining starts")
	mu.Lock()
	require.Empty(t, stopped, "nothing else stops while HTTP drains")
	mu.Unlock()

	close(release)
	require.Equal(t, "finished", <-got)
	require.NoError(t, <-done)
	require.Equal(t, []string{"http", "consumer", "outbox-relay"}, stopped)
}

// Redis is the store of record: a policy that may evict keys is logged at
// start and reported by the advisory check redis-eviction (degraded, still
// ready: the API works until memory fills, and then refuses writes rather
// than lose any only under noeviction).
func TestBaseReportsAnEvictingRedis(t *testing.T) {
	redisSrv := redistest.Start(t)
	require.NoError(t, redisSrv.Client(t).ConfigSet(context.Background(), "maxmemory-policy", "volatile-lru").Err())
	env := map[string]string{"REDIS_ADDRS": redisSrv.Addr}
	getenv := func(k string) string { return env[k] }
	var logs bytes.Buffer
	base, err := service.Start(context.Background(), service.Options{Name: "test", Version: "v1", Config: service.ConfigFromEnv(envconf.New(getenv), "127.0.0.1:0"), Getenv: getenv, Stdout: &logs})
	require.NoError(t, err)
	t.Cleanup(base.Close)
	require.Contains(t, logs.String(), `"msg":"redis may evict records: maxmemory-policy must be noeviction (docs/redis.md)"`)
	require.Contains(t, logs.String(), `has \"volatile-lru\"`)

	ts := httptest.NewServer(base.Server(nil).Router())
	t.Cleanup(ts.Close)
	readyz := func() (int, map[string]any) {
		resp, err := http.Get(ts.URL + "/readyz")
		require.NoError(t, err)
		defer resp.Body.Close()
		var body map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		return resp.StatusCode, body
	}
	status, body := readyz()
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "degraded", body["status"])
	require.Equal(t, map[string]any{"redis": "ok", "redis-eviction": "unavailable"}, body["checks"])

	require.NoError(t, redisSrv.Client(t).ConfigSet(context.Background(), "maxmemory-policy", "noeviction").Err())
	status, body = readyz()
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "ready", body["status"])
}

// REDIS_DURABLE_WRITES=waitaof on a server that cannot confirm it stops
// the start, naming the server: a deployment must not believe its records
// safer than they are.
func TestStartRefusesDurableWritesTheServerCannotGive(t *testing.T) {
	redisSrv := redistest.Start(t)
	env := map[string]string{"REDIS_ADDRS": redisSrv.Addr, "REDIS_DURABLE_WRITES": "waitaof", "REDIS_DURABLE_REPLICAS": "0"}
	getenv := func(k string) string { return env[k] }
	cfg := service.ConfigFromEnv(envconf.New(getenv), "127.0.0.1:0")
	require.NoError(t, cfg.Validate())
	_, err := service.Start(context.Background(), service.Options{Name: "test", Version: "v1", Config: cfg, Getenv: getenv, Stdout: io.Discard})
	require.ErrorContains(t, err, "REDIS_DURABLE_WRITES=waitaof needs Redis 7.2")
	require.ErrorContains(t, err, redisSrv.Addr)
}

// A service writing to its process output (a file, a pipe) logs in
// batches: a warning brings every line before it out at once, and Close
// writes the rest (logging.Batch's contract, docs/observability.md).
func TestAServiceLogsToItsOutputInBatches(t *testing.T) {
	redisSrv := redistest.Start(t)
	env := map[string]string{"REDIS_ADDRS": redisSrv.Addr}
	getenv := func(k string) string { return env[k] }
	out, err := os.CreateTemp(t.TempDir(), "stdout")
	require.NoError(t, err)
	t.Cleanup(func() { out.Close() })
	base, err := service.Start(context.Background(), service.Options{Name: "test", Version: "v1", Config: service.ConfigFromEnv(envconf.New(getenv), "127.0.0.1:0"), Getenv: getenv, Stdout: out})
	require.NoError(t, err)
	written := func() string {
		b, err := os.ReadFile(out.Name())
		require.NoError(t, err)
		return string(b)
	}

	base.Logger.Info("an access line")
	base.Logger.Warn("a warning")
	require.Contains(t, written(), `"msg":"starting"`)
	require.Contains(t, written(), `"msg":"an access line"`, "a warning brings out the lines before it")
	require.Contains(t, written(), `"msg":"a warning"`)

	base.Logger.Info("the last line")
	base.Close()
	require.Contains(t, written(), `"msg":"the last line"`, "Close writes what is left")
}

// The relay's idle reads block on their connections, one per shard; on
// its own client they never take the connections requests need. The
// request pool here is smaller than the shard count, as a one-CPU pod's
// is (ten connections, sixteen shards): on the shared pool every command
// would queue behind a read waiting out its Block.
func TestTheRelaysIdleReadsNeverTakeTheRequestsConnections(t *testing.T) {
	redisSrv := redistest.Start(t)
	brokers := kafkatest.StartBroker(t)
	env := map[string]string{"REDIS_ADDRS": redisSrv.Addr, "KAFKA_BROKERS": brokers[0], "REDIS_POOL_SIZE": "4"}
	getenv := func(k string) string { return env[k] }
	cfg := service.ConfigFromEnv(envconf.New(getenv), "127.0.0.1:0")
	require.NoError(t, cfg.Validate())
	base, err := service.Start(context.Background(), service.Options{Name: "test", Version: "v1", Config: cfg, FullConfig: cfg, Getenv: getenv, Stdout: io.Discard})
	require.NoError(t, err)
	t.Cleanup(base.Close)

	sharding := outbox.Sharding{Service: "test", Count: outbox.DefaultShards}
	relayRedis, err := base.RelayRedis(sharding)
	require.NoError(t, err)
	_, err = base.RelayRedis(sharding)
	require.Error(t, err, "one relay client per service")
	producer, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers, ClientID: "test"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = producer.Close() })
	relayCfg := outbox.DefaultRelayConfig(sharding, "pod-a")
	relayCfg.Block = 5 * time.Second
	relay, err := outbox.NewRelay(relayRedis, producer, relayCfg, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	relayDone := make(chan struct{})
	go func() { _ = relay.Run(ctx); close(relayDone) }()
	t.Cleanup(func() { stop(); <-relayDone })

	// Every shard's read is waiting once the relay holds all sixteen leases.
	require.Eventually(t, func() bool {
		return relayRedis.PoolStats().TotalConns == uint32(len(sharding.Streams()))
	}, 10*time.Second, 20*time.Millisecond, "the relay reads every shard on its own connections")
	for i := range 8 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := base.Redis.Set(ctx, "request-path", i, 0).Err()
		cancel()
		require.NoError(t, err, "a request's command runs while every shard's read waits")
	}
}
