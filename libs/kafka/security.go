package kafka

import (
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/scram"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/tlsclient"
)

// SASL mechanisms a Security may name. Only SCRAM: PLAIN sends the
// password itself, and a cluster that offers SCRAM offers it to every
// client the platform runs.
const (
	SCRAMSHA256 = "SCRAM-SHA-256"
	SCRAMSHA512 = "SCRAM-SHA-512"
)

// Security is how every client of the package (Producer, Consumer, Ping)
// reaches the brokers: plaintext when zero, else TLS, SASL/SCRAM or both.
// A production cluster (Strimzi's tls listener with scram-sha-512
// authentication) wants both.
type Security struct {
	// TLS connects with TLS 1.2 or later, verifying the brokers against
	// TLSCAFile (PEM) or, when empty, the system roots.
	TLS           bool
	TLSCAFile     string
	TLSServerName string // overrides the name checked in the certificate
	// SASLMechanism is "" (no SASL), SCRAM-SHA-256 or SCRAM-SHA-512.
	SASLMechanism string
	SASLUsername  string
	SASLPassword  envconf.Secret
}

// SecurityFromEnv reads KAFKA_TLS, KAFKA_TLS_CA_FILE,
// KAFKA_TLS_SERVER_NAME, KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and
// KAFKA_SASL_PASSWORD.
func SecurityFromEnv(r *envconf.Reader) Security {
	return Security{
		TLS:           r.Bool("KAFKA_TLS", false),
		TLSCAFile:     r.String("KAFKA_TLS_CA_FILE", ""),
		TLSServerName: r.String("KAFKA_TLS_SERVER_NAME", ""),
		SASLMechanism: r.String("KAFKA_SASL_MECHANISM", ""),
		SASLUsername:  r.String("KAFKA_SASL_USERNAME", ""),
		SASLPassword:  r.Secret("KAFKA_SASL_PASSWORD"),
	}
}

// Validate reports every unusable setting, reading the CA file so a wrong
// path fails start-up rather than the first connection.
func (s Security) Validate() error {
	var errs []error
	if !s.TLS && (s.TLSCAFile != "" || s.TLSServerName != "") {
		errs = append(errs, errors.New("TLS settings given but KAFKA_TLS is not true"))
	}
	if _, err := s.tlsConfig(); err != nil {
		errs = append(errs, err)
	}
	switch s.SASLMechanism {
	case "":
		if s.SASLUsername != "" || s.SASLPassword != "" {
			errs = append(errs, errors.New("SASL credentials given but KAFKA_SASL_MECHANISM is empty"))
		}
	case SCRAMSHA256, SCRAMSHA512:
		if s.SASLUsername == "" || s.SASLPassword == "" {
			errs = append(errs, fmt.Errorf("SASL mechanism %s needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD", s.SASLMechanism))
		}
	default:
		errs = append(errs, fmt.Errorf("SASL mechanism %q is not %s or %s", s.SASLMechanism, SCRAMSHA256, SCRAMSHA512))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("kafka security: %w", err)
	}
	return nil
}

// tlsConfig is nil for plaintext.
func (s Security) tlsConfig() (*tls.Config, error) {
	return tlsclient.Config(s.TLS, s.TLSCAFile, s.TLSServerName)
}

// mechanism is nil without SASL.
func (s Security) mechanism() (sasl.Mechanism, error) {
	var algo scram.Algorithm
	switch s.SASLMechanism {
	case "":
		return nil, nil
	case SCRAMSHA256:
		algo = scram.SHA256
	case SCRAMSHA512:
		algo = scram.SHA512
	default:
		return nil, fmt.Errorf("SASL mechanism %q is not %s or %s", s.SASLMechanism, SCRAMSHA256, SCRAMSHA512)
	}
	m, err := scram.Mechanism(algo, s.SASLUsername, s.SASLPassword.Reveal())
	if err != nil {
		return nil, fmt.Errorf("kafka security: %w", err)
	}
	return m, nil
}

// connection is a validated Security in the form kafka-go takes.
type connection struct {
	tls  *tls.Config
	sasl sasl.Mechanism
}

func (s Security) connection() (connection, error) {
	if err := s.Validate(); err != nil {
		return connection{}, err
	}
	t, err := s.tlsConfig()
	if err != nil {
		return connection{}, err
	}
	m, err := s.mechanism()
	if err != nil {
		return connection{}, err
	}
	return connection{tls: t, sasl: m}, nil
}

// Transport returns a kafka-go transport that connects as s says, for a
// tool or a reader of the brokers' metadata (consumer lag, pcadm dlq)
// that talks to the cluster beside the producer and the consumer.
func (s Security) Transport(clientID string) (*kafkago.Transport, error) {
	conn, err := s.connection()
	if err != nil {
		return nil, err
	}
	return &kafkago.Transport{ClientID: clientID, TLS: conn.tls, SASL: conn.sasl}, nil
}

// Dialer returns a kafka-go dialer that connects as s says, for a reader
// of one partition (pcadm dlq).
func (s Security) Dialer(clientID string) (*kafkago.Dialer, error) {
	conn, err := s.connection()
	if err != nil {
		return nil, err
	}
	return &kafkago.Dialer{ClientID: clientID, TLS: conn.tls, SASLMechanism: conn.sasl, DualStack: true, Timeout: 10 * time.Second}, nil
}
