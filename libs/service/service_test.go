package service_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/kafkatest"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/libs/service"
)

func TestBaseIsReadyWhenRedisAndKafkaAnswer(t *testing.T) {
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

	ts := httptest.NewServer(base.Server(nil).Router())
	t.Cleanup(ts.Close)
	resp, err := http.Get(ts.URL + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// A consumer that cannot fetch makes its replica not ready too.
	fetching := errors.New("fetching from case-events: failed to dial")
	withConsumer := httptest.NewServer(base.Server(nil, httpserver.Check{Name: "consumer", Probe: func(context.Context) error { return fetching }}).Router())
	t.Cleanup(withConsumer.Close)
	resp, err = http.Get(withConsumer.URL + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "not ready while the consumer cannot fetch")

	redisSrv.Stop()
	resp, err = http.Get(ts.URL + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "not ready without Redis")
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
