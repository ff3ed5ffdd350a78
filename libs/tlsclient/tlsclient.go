// Package tlsclient builds the TLS configuration of a client of the
// platform's infrastructure (Redis, the Kafka brokers) from the settings
// each reads from its environment: one way to verify a server, TLS 1.2 at
// least, against a CA file or the system roots.
package tlsclient

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// Config returns nil when TLS is off (plaintext). With TLS on, the server
// is verified against the PEM certificates of caFile, or the system roots
// when caFile is empty, under serverName when it is set (otherwise the
// dialled host's name).
func Config(enabled bool, caFile, serverName string) (*tls.Config, error) {
	if !enabled {
		return nil, nil
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("reading the TLS CA file: %w", err)
		}
		t.RootCAs = x509.NewCertPool()
		if !t.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
		}
	}
	return t, nil
}
