package kafka

import (
	"context"
	"errors"
	"fmt"

	kafkago "github.com/segmentio/kafka-go"
)

// CreateTopics creates topics through the CreateTopics API, as an operator
// would, with their partitions, replication factor and configs; a topic
// that exists already is left as it is. The dev broker creates the
// declared Topics with it; a production cluster gets them from the
// chart's KafkaTopic resources instead.
func CreateTopics(ctx context.Context, brokers []string, security Security, topics ...Topic) error {
	if err := validateBrokers(brokers); err != nil {
		return fmt.Errorf("creating topics: %w", err)
	}
	conn, err := security.connection()
	if err != nil {
		return fmt.Errorf("creating topics: %w", err)
	}
	req := &kafkago.CreateTopicsRequest{}
	for _, t := range topics {
		if err := t.Validate(); err != nil {
			return fmt.Errorf("creating topics: %w", err)
		}
		tc := kafkago.TopicConfig{Topic: t.Name, NumPartitions: t.Partitions, ReplicationFactor: t.ReplicationFactor}
		for k, v := range t.Configs() {
			tc.ConfigEntries = append(tc.ConfigEntries, kafkago.ConfigEntry{ConfigName: k, ConfigValue: v})
		}
		req.Topics = append(req.Topics, tc)
	}
	transport := &kafkago.Transport{ClientID: defaultClientID, TLS: conn.tls, SASL: conn.sasl}
	defer transport.CloseIdleConnections()
	client := &kafkago.Client{Addr: kafkago.TCP(brokers...), Transport: transport}
	resp, err := client.CreateTopics(ctx, req)
	if err != nil {
		return fmt.Errorf("creating topics: %w", err)
	}
	var errs []error
	for name, err := range resp.Errors {
		if err != nil && !errors.Is(err, kafkago.TopicAlreadyExists) {
			errs = append(errs, fmt.Errorf("topic %s: %w", name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("creating topics: %w", err)
	}
	return nil
}
