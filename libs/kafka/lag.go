package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// lagTimeout bounds one scrape's requests to the brokers.
const lagTimeout = 3 * time.Second

// ObserveLag exports pcourt_kafka_consumer_lag{topic, group, partition}:
// per partition, the messages between the group's committed offset and
// the partition's end, read from the brokers at scrape time (metadata,
// the group's committed offsets, the partitions' first and last offsets).
// It is the group's lag, not this replica's: it counts what a stuck
// handler holds and what a consumer that is not running has not read,
// which the reader's own statistics (the lag of the last fetched batch,
// for whichever partition fetched last) would not. Every replica reports
// the same figures; alerts take the max. A partition the group never
// committed counts every message retained.
func (c *Consumer) ObserveLag(mp metric.MeterProvider) error {
	m := mp.Meter(tracerName)
	lag, err := m.Int64ObservableGauge("pcourt.kafka.consumer.lag",
		metric.WithUnit("{message}"),
		metric.WithDescription("Messages of a partition the consumer group has not committed yet."))
	if err != nil {
		return err
	}
	transport, err := c.cfg.Security.Transport(c.cfg.ClientID)
	if err != nil {
		return err
	}
	client := &kafkago.Client{Addr: kafkago.TCP(c.cfg.Brokers...), Transport: transport}
	_, err = m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, lagTimeout)
		defer cancel()
		lags, err := groupLag(ctx, client, c.cfg.Topic, c.cfg.GroupID)
		if err != nil {
			return fmt.Errorf("reading the lag of group %s on %s: %w", c.cfg.GroupID, c.cfg.Topic, err)
		}
		for partition, n := range lags {
			o.ObserveInt64(lag, n, metric.WithAttributes(
				attribute.String("topic", c.cfg.Topic),
				attribute.String("group", c.cfg.GroupID),
				attribute.String("partition", strconv.Itoa(partition)),
			))
		}
		return nil
	}, lag)
	return err
}

// groupLag returns the lag of group on every partition of topic.
func groupLag(ctx context.Context, client *kafkago.Client, topic, group string) (map[int]int64, error) {
	meta, err := client.Metadata(ctx, &kafkago.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, err
	}
	var partitions []int
	for _, t := range meta.Topics {
		if t.Name != topic {
			continue
		}
		if t.Error != nil {
			return nil, t.Error
		}
		for _, p := range t.Partitions {
			partitions = append(partitions, p.ID)
		}
	}
	if len(partitions) == 0 {
		return nil, nil // the topic does not exist yet: nothing to lag behind
	}
	committed, err := client.OffsetFetch(ctx, &kafkago.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: partitions}})
	if err != nil {
		return nil, err
	}
	// A group that never committed is unknown to some brokers (kfake,
	// newer Kafka versions): it has committed nothing, on every partition.
	if committed.Error != nil && !errors.Is(committed.Error, kafkago.GroupIdNotFound) {
		return nil, committed.Error
	}
	reqs := make([]kafkago.OffsetRequest, 0, 2*len(partitions))
	for _, p := range partitions {
		reqs = append(reqs, kafkago.FirstOffsetOf(p), kafkago.LastOffsetOf(p))
	}
	ends, err := client.ListOffsets(ctx, &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{topic: reqs}})
	if err != nil {
		return nil, err
	}
	at := map[int]int64{}
	for _, p := range committed.Topics[topic] {
		if p.Error != nil && !errors.Is(p.Error, kafkago.GroupIdNotFound) {
			return nil, p.Error
		}
		at[p.Partition] = p.CommittedOffset
	}
	out := make(map[int]int64, len(partitions))
	for _, p := range ends.Topics[topic] {
		if p.Error != nil {
			return nil, p.Error
		}
		from, ok := at[p.Partition]
		if !ok || from < 0 {
			from = p.FirstOffset
		}
		out[p.Partition] = max(0, p.LastOffset-from)
	}
	return out, nil
}
