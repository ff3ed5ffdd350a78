package kafkatest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/kafka/kafkadev"
)

// SecureCluster is a test cluster whose listeners want TLS and
// SASL/SCRAM-SHA-512, as a production cluster's do.
type SecureCluster struct {
	*kfake.Cluster
	// Security is what a client needs to connect: TLS verified against
	// the cluster's own CA (written to a file, as a mounted secret would
	// be) and the user's SCRAM-SHA-512 credentials.
	Security kafka.Security
}

// StartSecureCluster starts a cluster like StartBroker's whose brokers
// serve TLS with a certificate for 127.0.0.1 issued by a CA made for the
// test and accept only the SCRAM-SHA-512 user user/password.
func StartSecureCluster(tb testing.TB, user, password string) SecureCluster {
	tb.Helper()
	caPEM, serverCert := issueCertificates(tb)
	caFile := filepath.Join(tb.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, caPEM, 0o600); err != nil {
		tb.Fatalf("kafkatest: %v", err)
	}
	security := kafka.Security{
		TLS: true, TLSCAFile: caFile,
		SASLMechanism: kafka.SCRAMSHA512, SASLUsername: user, SASLPassword: envconf.Secret(password),
	}
	c := StartCluster(tb, kafkadev.Config{
		Options: []kfake.Opt{
			kfake.TLS(&tls.Config{Certificates: []tls.Certificate{serverCert}, MinVersion: tls.VersionTLS12}),
			kfake.EnableSASL(),
			kfake.Superuser(kafka.SCRAMSHA512, user, password),
		},
		Security: security,
	})
	return SecureCluster{Cluster: c, Security: security}
}

// issueCertificates makes a CA and a server certificate for 127.0.0.1
// signed by it, returning the CA in PEM and the server's key pair.
func issueCertificates(tb testing.TB) ([]byte, tls.Certificate) {
	tb.Helper()
	fail := func(err error) {
		if err != nil {
			tb.Fatalf("kafkatest: issuing certificates: %v", err)
		}
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	fail(err)
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kafkatest CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	fail(err)
	ca, err = x509.ParseCertificate(caDER)
	fail(err)

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	fail(err)
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	fail(err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}
}
