package main

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/kafka"
)

// freePort returns the first of three consecutive free ports, one per
// broker.
func freePort(t *testing.T) string {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		free := port+2 <= 65535
		for i := 1; i < 3 && free; i++ {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+i))
			if err != nil {
				free = false
				break
			}
			_ = l.Close()
		}
		if free {
			return strconv.Itoa(port)
		}
	}
	t.Fatal("no three consecutive free ports")
	return ""
}

func TestBrokerServesUntilStopped(t *testing.T) {
	port := freePort(t)
	env := map[string]string{
		"KAFKA_LISTEN_ADDR":     "127.0.0.1:" + port,
		"KAFKA_ADVERTISED_ADDR": "localhost:" + port,
		"KAFKA_DATA_DIR":        t.TempDir(),
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() { done <- run(ctx, lookup, &out, func(a string) { ready <- a }) }()
	addr := <-ready
	require.NoError(t, kafka.Ping(context.Background(), []string{addr}, kafka.Security{}))
	cancel()
	require.NoError(t, <-done)
	require.Contains(t, out.String(), "advertised as localhost:"+port)
}

func TestConfigDefaultsAndRefusals(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	c, err := loadConfig(none)
	require.NoError(t, err)
	require.Equal(t, ":9092", c.Listen)
	require.Equal(t, "/data", c.DataDir)

	memory := func(k string) (string, bool) { return "", k == "KAFKA_DATA_DIR" }
	c, err = loadConfig(memory)
	require.NoError(t, err)
	require.Empty(t, c.DataDir, "an empty KAFKA_DATA_DIR keeps the broker in memory")

	bad := func(k string) (string, bool) { return "nope", k == "KAFKA_ADVERTISED_ADDR" }
	_, err = loadConfig(bad)
	require.ErrorContains(t, err, "host:port")
}
