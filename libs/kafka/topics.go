package kafka

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Topic is one topic as a cluster must hold it before any service starts:
// producers never create topics (auto-creation would give the broker's
// defaults, typically one partition and one replica), so whoever runs the
// cluster creates these, the chart as Strimzi KafkaTopic resources and the
// dev broker at its start.
type Topic struct {
	Name string
	// Partitions bounds how many consumers of a group share the topic's
	// work. It is part of the data layout: adding partitions moves keys to
	// other partitions, so a case's later events could overtake its
	// earlier ones while both are unread. Grow it only with consumers
	// caught up.
	Partitions int
	// ReplicationFactor is how many brokers hold each partition.
	ReplicationFactor int
	// MinInsyncReplicas is how many of them must have a record before a
	// producer asking for all acknowledgements (ours do) is told it is
	// written: with 3 and 2, one broker may be away without stopping
	// writes, and an acknowledged record survives the loss of any one.
	MinInsyncReplicas int
	// Retention is how long records are kept, read or not.
	Retention time.Duration
}

// Configs returns the topic-level settings a broker or Strimzi takes,
// by their Kafka names.
func (t Topic) Configs() map[string]string {
	return map[string]string{
		"min.insync.replicas": strconv.Itoa(t.MinInsyncReplicas),
		"retention.ms":        strconv.FormatInt(t.Retention.Milliseconds(), 10),
	}
}

// Validate reports a topic no cluster should be given.
func (t Topic) Validate() error {
	var errs []error
	if t.Name == "" {
		errs = append(errs, errors.New("name is empty"))
	}
	if t.Partitions < 1 {
		errs = append(errs, fmt.Errorf("partitions %d below 1", t.Partitions))
	}
	if t.ReplicationFactor < 1 {
		errs = append(errs, fmt.Errorf("replication factor %d below 1", t.ReplicationFactor))
	}
	if t.MinInsyncReplicas < 1 || t.MinInsyncReplicas > t.ReplicationFactor {
		errs = append(errs, fmt.Errorf("min.insync.replicas %d outside 1..%d", t.MinInsyncReplicas, t.ReplicationFactor))
	}
	if t.Retention < time.Hour {
		errs = append(errs, fmt.Errorf("retention %v below an hour", t.Retention))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("topic %q: %w", t.Name, err)
	}
	return nil
}

// Every declared topic is replicated three times and needs two in-sync
// replicas: a broker may restart or fail without stopping a producer, and
// no acknowledged record rests on one disk.
const (
	replicas   = 3
	minInsync  = 2
	day        = 24 * time.Hour
	eventsKept = 14 * day // a consumer may be away this long and catch up
	deadKept   = 30 * day // time to look at a dead letter and replay it
)

// Topics is every topic the services write or read, dead-letter topics
// included (a consumer dead-letters to its topic's name plus
// DeadLetterSuffix). The names are the ones in api/events.go and the
// services' events packages; a test in tools/kafka-broker holds them
// equal, and tools/helmcheck holds the chart's kafka.topics equal to this
// table.
var Topics = []Topic{
	// filings → cases: one record per opened case, keyed by case id.
	{Name: "pc.filings.case-opened.v2", Partitions: 12, ReplicationFactor: replicas, MinInsyncReplicas: minInsync, Retention: eventsKept},
	{Name: "pc.filings.case-opened.v2" + DeadLetterSuffix, Partitions: 3, ReplicationFactor: replicas, MinInsyncReplicas: minInsync, Retention: deadKept},
	// cases → webhooks: every case event, keyed by case id.
	{Name: "pc.cases.events.v2", Partitions: 12, ReplicationFactor: replicas, MinInsyncReplicas: minInsync, Retention: eventsKept},
	{Name: "pc.cases.events.v2" + DeadLetterSuffix, Partitions: 3, ReplicationFactor: replicas, MinInsyncReplicas: minInsync, Retention: deadKept},
	// readiness: settled payments, keyed by payer, for ledgers downstream.
	{Name: "pc.readiness.settlements.v1", Partitions: 6, ReplicationFactor: replicas, MinInsyncReplicas: minInsync, Retention: eventsKept},
}

// DeadLetterSuffix names a topic's dead-letter topic: a Consumer's default
// DeadLetterTopic is its Topic plus this.
const DeadLetterSuffix = ".dlq"
