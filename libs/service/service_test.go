package service_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/kafkatest"
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
	base, err := service.Start(context.Background(), "test", "v1", cfg, cfg, getenv, &logs)
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
