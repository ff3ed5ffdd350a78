package kafkadev_test

import (
	"context"
	"net"
	"strconv"
	"testing"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafka/kafkadev"
	"github.com/pcourt/pcourt/libs/kafkatest"
)

func publish(t *testing.T, brokers []string, topic, value string) error {
	t.Helper()
	p, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers})
	require.NoError(t, err)
	defer p.Close()
	return p.Publish(context.Background(), kafka.Message{Topic: topic, Key: "case-1", EventID: "ev-" + value, Schema: "s.v1", Value: []byte(value)})
}

// The dev cluster has three brokers and the declared topics with their
// partitions, replication factor and configs, as an operator creates
// them; a topic nobody declared is not created by a producer naming it.
func TestStartCreatesTheDeclaredTopicsOnThreeBrokers(t *testing.T) {
	c, err := kafkadev.Start(kafkadev.Config{Topics: kafka.Topics})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	require.Len(t, brokers, kafkadev.Brokers)

	client := &kafkago.Client{Addr: kafkago.TCP(brokers...)}
	meta, err := client.Metadata(context.Background(), &kafkago.MetadataRequest{})
	require.NoError(t, err)
	assert.Len(t, meta.Brokers, 3)
	byName := map[string]kafkago.Topic{}
	for _, tp := range meta.Topics {
		byName[tp.Name] = tp
	}
	leaders := map[int]bool{}
	for _, want := range kafka.Topics {
		got, ok := byName[want.Name]
		require.True(t, ok, "topic %s not created", want.Name)
		require.Len(t, got.Partitions, want.Partitions, want.Name)
		for _, p := range got.Partitions {
			assert.Len(t, p.Replicas, want.ReplicationFactor, "%s/%d", want.Name, p.ID)
			leaders[p.Leader.ID] = true
		}
		configs, err := client.DescribeConfigs(context.Background(), &kafkago.DescribeConfigsRequest{
			Resources: []kafkago.DescribeConfigRequestResource{{ResourceType: kafkago.ResourceTypeTopic, ResourceName: want.Name,
				ConfigNames: []string{"min.insync.replicas", "retention.ms"}}},
		})
		require.NoError(t, err)
		got2 := map[string]string{}
		for _, e := range configs.Resources[0].ConfigEntries {
			got2[e.ConfigName] = e.ConfigValue
		}
		assert.Equal(t, want.Configs(), got2, want.Name)
	}
	assert.Len(t, leaders, 3, "partition leaders spread over the three brokers")

	require.ErrorContains(t, publish(t, brokers, "undeclared", "v"), "Unknown Topic Or Partition")
	require.NoError(t, publish(t, brokers, kafka.Topics[0].Name, "v"))
}

// With a data directory, records survive a restart, which is what the dev
// stack relies on, and the second start keeps the topics it finds.
func TestStartPersistsAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	topic := kafka.Topics[0].Name
	first, err := kafkadev.Start(kafkadev.Config{DataDir: dir, Topics: kafka.Topics})
	require.NoError(t, err)
	require.NoError(t, publish(t, first.ListenAddrs(), topic, "survives"))
	first.Close()

	second, err := kafkadev.Start(kafkadev.Config{DataDir: dir, Topics: kafka.Topics})
	require.NoError(t, err)
	t.Cleanup(second.Close)
	recs := kafkatest.ReadMessages(t, second.ListenAddrs(), topic, 1)
	assert.Equal(t, "survives", string(recs[0].Value))
}

// An in-use port is an error, not a silent move to another port: the dev
// stack's configuration names the port.
func TestStartPortInUse(t *testing.T) {
	c, err := kafkadev.Start(kafkadev.Config{})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	_, p, err := net.SplitHostPort(c.ListenAddrs()[0])
	require.NoError(t, err)
	port, err := strconv.Atoi(p)
	require.NoError(t, err)
	_, err = kafkadev.Start(kafkadev.Config{Ports: []int{port, 0, 0}})
	require.Error(t, err)
}

// A served cluster listens where it is told, one port per broker, and
// names the advertised host in its metadata, so clients in other
// containers reach every broker by a name.
func TestServedAdvertisesItsName(t *testing.T) {
	port := freePorts(t)
	c, err := kafkadev.Served("127.0.0.1:"+strconv.Itoa(port), "localhost:"+strconv.Itoa(port), kafkadev.Config{DataDir: t.TempDir(), Topics: kafka.Topics})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	want := []string{"localhost:" + strconv.Itoa(port), "localhost:" + strconv.Itoa(port+1), "localhost:" + strconv.Itoa(port+2)}
	require.Equal(t, want, c.ListenAddrs())

	conn, err := kafkago.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	brokers, err := conn.Brokers()
	require.NoError(t, err)
	require.Len(t, brokers, 3)
	for _, b := range brokers {
		assert.Equal(t, "localhost", b.Host)
	}

	require.NoError(t, publish(t, want[:1], kafka.Topics[0].Name, "v"))
	recs := kafkatest.ReadMessages(t, want[:1], kafka.Topics[0].Name, 1)
	assert.Equal(t, "v", string(recs[0].Value))
}

func TestServedRefusesABadAdvertisedAddress(t *testing.T) {
	_, err := kafkadev.Served("127.0.0.1:9092", "no-port", kafkadev.Config{})
	require.ErrorContains(t, err, "host:port")
}

// freePorts returns the first of three consecutive free ports.
func freePorts(t *testing.T) int {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		ok := port+2 <= 65535
		for i := 1; i < 3 && ok; i++ {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+i))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return port
		}
	}
	t.Fatal("no three consecutive free ports")
	return 0
}
