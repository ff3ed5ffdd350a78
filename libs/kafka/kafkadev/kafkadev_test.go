package kafkadev_test

import (
	"context"
	"net"
	"strconv"
	"testing"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/kafka/kafkadev"
	"github.com/pcourt/pcourt/libs/kafkatest"
)

// With a data directory, records survive a broker restart, which is what
// the dev stack relies on.
func TestNewClusterPersistsAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	first, err := kafkadev.NewCluster(0, dir)
	require.NoError(t, err)
	w := &kafkago.Writer{
		Addr: kafkago.TCP(first.ListenAddrs()...), Topic: "kept",
		RequiredAcks: kafkago.RequireAll, AllowAutoTopicCreation: true,
	}
	require.NoError(t, w.WriteMessages(context.Background(), kafkago.Message{Key: []byte("k"), Value: []byte("survives")}))
	require.NoError(t, w.Close())
	first.Close()

	second, err := kafkadev.NewCluster(0, dir)
	require.NoError(t, err)
	t.Cleanup(second.Close)
	recs := kafkatest.ReadMessages(t, second.ListenAddrs(), "kept", 1)
	assert.Equal(t, "survives", string(recs[0].Value))
}

// An in-use port is an error, not a silent move to another port: the dev
// stack's configuration names the port.
func TestNewClusterPortInUse(t *testing.T) {
	c, err := kafkadev.NewCluster(0, "")
	require.NoError(t, err)
	t.Cleanup(c.Close)
	_, p, err := net.SplitHostPort(c.ListenAddrs()[0])
	require.NoError(t, err)
	port, err := strconv.Atoi(p)
	require.NoError(t, err)
	_, err = kafkadev.NewCluster(port, "")
	require.Error(t, err)
}
