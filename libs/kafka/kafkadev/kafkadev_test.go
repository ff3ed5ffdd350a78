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

// A served broker listens where it is told and names the advertised
// address in its metadata, so clients in other containers reach it by a
// name; records persist in its data directory as with NewCluster.
func TestServedAdvertisesItsName(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, port, err := net.SplitHostPort(ln.Addr().String())
	require.NoError(t, err)
	require.NoError(t, ln.Close())

	c, err := kafkadev.Served("127.0.0.1:"+port, "localhost:"+port, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(c.Close)
	require.Equal(t, []string{"localhost:" + port}, c.ListenAddrs())

	conn, err := kafkago.Dial("tcp", "127.0.0.1:"+port)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	brokers, err := conn.Brokers()
	require.NoError(t, err)
	require.Len(t, brokers, 1)
	assert.Equal(t, "localhost", brokers[0].Host)
	assert.Equal(t, port, strconv.Itoa(brokers[0].Port))

	w := &kafkago.Writer{Addr: kafkago.TCP("localhost:" + port), Topic: "served", RequiredAcks: kafkago.RequireAll, AllowAutoTopicCreation: true}
	require.NoError(t, w.WriteMessages(context.Background(), kafkago.Message{Key: []byte("k"), Value: []byte("v")}))
	require.NoError(t, w.Close())
	recs := kafkatest.ReadMessages(t, []string{"localhost:" + port}, "served", 1)
	assert.Equal(t, "v", string(recs[0].Value))
}

func TestServedRefusesABadAdvertisedAddress(t *testing.T) {
	_, err := kafkadev.Served("127.0.0.1:0", "no-port", "")
	require.ErrorContains(t, err, "host:port")
}
