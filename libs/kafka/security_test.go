package kafka_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafkatest"
)

// Against brokers that want TLS and SCRAM-SHA-512, a producer and a
// consumer with the right settings carry a record end to end; a wrong
// password, plaintext, or a CA that did not issue the brokers' certificate
// is refused.
func TestTLSAndSCRAM(t *testing.T) {
	cluster := kafkatest.StartSecureCluster(t, "pcourt-cases", "right-password")
	brokers := cluster.ListenAddrs()
	good := cluster.Security

	require.NoError(t, kafka.Ping(context.Background(), brokers, good))

	topic := kafka.Topics[0].Name
	producer, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers, Security: good})
	require.NoError(t, err)
	t.Cleanup(func() { _ = producer.Close() })
	require.NoError(t, producer.Publish(context.Background(), kafka.Message{Topic: topic, Key: "case-tls", EventID: "ev-tls", Schema: "s.v1", Value: []byte("sealed")}))

	got := make(chan kafka.Message, 1)
	cfg := consumerConfig(brokers, "g-tls", topic)
	cfg.Security = good
	startConsumer(t, cfg, func(_ context.Context, m kafka.Message) error { got <- m; return nil }, producer, nil)
	select {
	case m := <-got:
		assert.Equal(t, "ev-tls", m.EventID)
		assert.Equal(t, "sealed", string(m.Value))
	case <-time.After(waitFor):
		t.Fatal("the consumer read nothing over TLS and SCRAM")
	}

	otherCA := kafkatest.StartSecureCluster(t, "x", "y").Security.TLSCAFile
	wrongPassword := good
	wrongPassword.SASLPassword = "wrong-password"
	wrongCA := good
	wrongCA.TLSCAFile = otherCA
	noSASL := good
	noSASL.SASLMechanism, noSASL.SASLUsername, noSASL.SASLPassword = "", "", ""
	for _, tt := range []struct {
		name     string
		security kafka.Security
		wantErr  string
	}{
		{"wrong password", wrongPassword, "SASL Authentication Failed"},
		{"plaintext", kafka.Security{}, "reading metadata"},
		{"a CA that did not issue the certificate", wrongCA, "certificate signed by unknown authority"},
		{"TLS without SASL", noSASL, "reading metadata"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			require.ErrorContains(t, kafka.Ping(ctx, brokers, tt.security), tt.wantErr)

			p, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: brokers, Security: tt.security, WriteTimeout: 2 * time.Second})
			require.NoError(t, err)
			defer p.Close()
			require.Error(t, p.Publish(ctx, kafka.Message{Topic: topic, Key: "case-tls", EventID: "ev-refused", Schema: "s.v1"}))
		})
	}
}

func TestSecurityFromEnvAndValidate(t *testing.T) {
	env := map[string]string{
		"KAFKA_TLS": "true", "KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
		"KAFKA_SASL_USERNAME": "cases", "KAFKA_SASL_PASSWORD": "s3cret",
	}
	r := envconf.New(func(k string) string { return env[k] })
	s := kafka.SecurityFromEnv(r)
	require.NoError(t, r.Err())
	require.NoError(t, s.Validate())
	assert.Equal(t, kafka.Security{TLS: true, SASLMechanism: kafka.SCRAMSHA512, SASLUsername: "cases", SASLPassword: "s3cret"}, s)

	notPEM := filepath.Join(t.TempDir(), "ca.crt")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o600))
	for _, tt := range []struct {
		name    string
		s       kafka.Security
		wantErr string
	}{
		{"plaintext", kafka.Security{}, ""},
		{"CA without TLS", kafka.Security{TLSCAFile: "/ca.crt"}, "KAFKA_TLS is not true"},
		{"missing CA file", kafka.Security{TLS: true, TLSCAFile: "/nonexistent/ca.crt"}, "reading the TLS CA file"},
		{"CA file without a certificate", kafka.Security{TLS: true, TLSCAFile: notPEM}, "holds no PEM certificate"},
		{"PLAIN", kafka.Security{SASLMechanism: "PLAIN", SASLUsername: "u", SASLPassword: "p"}, `"PLAIN" is not SCRAM-SHA-256 or SCRAM-SHA-512`},
		{"SCRAM without password", kafka.Security{SASLMechanism: kafka.SCRAMSHA256, SASLUsername: "u"}, "needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD"},
		{"credentials without mechanism", kafka.Security{SASLUsername: "u"}, "KAFKA_SASL_MECHANISM is empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.Validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			_, err = kafka.NewProducer(kafka.ProducerConfig{Brokers: []string{"b:9092"}, Security: tt.s})
			require.ErrorContains(t, err, tt.wantErr, "a producer refuses it too")
		})
	}
}

// A logged configuration never shows the SASL password.
func TestSecurityRedactsThePassword(t *testing.T) {
	s := kafka.Security{SASLMechanism: kafka.SCRAMSHA512, SASLUsername: "cases", SASLPassword: "s3cret"}
	for _, format := range []string{"%v", "%+v", "%#v"} {
		assert.NotContains(t, fmt.Sprintf(format, s), "s3cret", format)
	}
}
