package helmcheck_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/tools/helmcheck"
)

// topicValue is one item of the chart's kafka.topics.items.
type topicValue struct {
	Name              string `json:"name"`
	Partitions        int    `json:"partitions"`
	Replicas          int    `json:"replicas"`
	MinInsyncReplicas int    `json:"minInsyncReplicas"`
	RetentionMs       int64  `json:"retentionMs"`
}

func declaredTopics() []topicValue {
	var out []topicValue
	for _, t := range kafka.Topics {
		out = append(out, topicValue{t.Name, t.Partitions, t.ReplicationFactor, t.MinInsyncReplicas, t.Retention.Milliseconds()})
	}
	return out
}

// The chart's topic list is the declared table, item for item: a topic
// added to the code and not to the chart would not exist on a cluster the
// chart sets up, and the services would fail to publish to it.
func TestChartTopicsAreTheDeclaredTopics(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	require.NoError(t, err)
	var values struct {
		Kafka struct {
			Topics struct {
				Items []topicValue `json:"items"`
			} `json:"topics"`
		} `json:"kafka"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &values))
	assert.Equal(t, declaredTopics(), values.Kafka.Topics.Items)
}

// With kafka.topics.create the chart renders one Strimzi KafkaTopic per
// declared topic, labelled for its cluster; the services get the TLS and
// SCRAM settings, the password from a Secret and the CA mounted.
func TestKafkaTopicsAndSecurity(t *testing.T) {
	h := helm(t)
	m := render(t, h, "--set", "kafka.topics.create=true", "--set", "kafka.topics.strimziCluster=events",
		"--set", "kafka.tls.enabled=true", "--set", "kafka.tls.caSecret.name=kafka-ca",
		"--set", "kafka.sasl.mechanism=SCRAM-SHA-512", "--set", "kafka.sasl.username=pcourt",
		"--set", "kafka.sasl.passwordSecret.name=kafka-user")
	var got []topicValue
	for _, kt := range m.KafkaTopics {
		assert.Equal(t, "events", kt.Labels["strimzi.io/cluster"], kt.Name)
		retention, err := strconv.ParseInt(kt.Spec.Config["retention.ms"], 10, 64)
		require.NoError(t, err)
		minInsync, err := strconv.Atoi(kt.Spec.Config["min.insync.replicas"])
		require.NoError(t, err)
		got = append(got, topicValue{kt.Spec.TopicName, kt.Spec.Partitions, kt.Spec.Replicas, minInsync, retention})
	}
	assert.Equal(t, declaredTopics(), got)

	for _, d := range m.Deployments {
		c := d.Spec.Template.Spec.Containers[0]
		e := env(c)
		assert.Equal(t, "true", e["KAFKA_TLS"], d.Name)
		assert.Equal(t, "/etc/pcourt/kafka-ca/ca.crt", e["KAFKA_TLS_CA_FILE"], d.Name)
		assert.Equal(t, "SCRAM-SHA-512", e["KAFKA_SASL_MECHANISM"], d.Name)
		assert.Equal(t, "pcourt", e["KAFKA_SASL_USERNAME"], d.Name)
		var password bool
		for _, v := range c.Env {
			if v.Name == "KAFKA_SASL_PASSWORD" {
				require.NotNil(t, v.ValueFrom, "the password comes from a Secret")
				assert.Equal(t, "kafka-user", v.ValueFrom.SecretKeyRef.Name)
				password = true
			}
		}
		assert.True(t, password, "%s has no KAFKA_SASL_PASSWORD", d.Name)
		var mounted bool
		for _, vm := range c.VolumeMounts {
			mounted = mounted || vm.MountPath == "/etc/pcourt/kafka-ca"
		}
		assert.True(t, mounted, "%s does not mount the Kafka CA", d.Name)
	}

	// Default values render no KafkaTopic, and a SASL mechanism without a
	// password Secret is refused (by values.schema.json, before the
	// template's own check).
	assert.Empty(t, render(t, h).KafkaTopics)
	_, err := helmcheck.Helm(h, "template", "pcourt", chart, "--kube-version", helmcheck.KubeVersion,
		"--set", "kafka.sasl.mechanism=SCRAM-SHA-512", "--set", "kafka.sasl.username=pcourt")
	require.ErrorContains(t, err, "/kafka/sasl/passwordSecret/name")
}

// Every topic a service writes or reads, and each consumed topic's
// dead-letter topic, is declared: with auto-creation off, an undeclared
// one would not exist. The readiness service spells its topic itself.
func TestEveryTopicTheServicesUseIsDeclared(t *testing.T) {
	declared := map[string]bool{}
	for _, tp := range kafka.Topics {
		declared[tp.Name] = true
	}
	for _, name := range []string{
		api.CaseOpenedTopic, api.CaseOpenedTopic + kafka.DeadLetterSuffix,
		api.CaseEventsTopic, api.CaseEventsTopic + kafka.DeadLetterSuffix,
		"pc.readiness.settlements.v1",
	} {
		assert.True(t, declared[name], "%s is not in kafka.Topics", name)
	}
	assert.Len(t, kafka.Topics, 5, "a declared topic no service uses")
}
