package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// pingTimeout bounds a Ping whose ctx has no deadline, so a broker that
// accepts connections but never answers cannot hang a readiness probe.
const pingTimeout = 5 * time.Second

// Ping dials the brokers in turn, with security's TLS and SASL, and reads
// cluster metadata from the first that answers; it fails only if none
// does. Readiness probes use it.
func Ping(ctx context.Context, brokers []string, security Security) error {
	if err := validateBrokers(brokers); err != nil {
		return fmt.Errorf("pinging kafka: %w", err)
	}
	conn, err := security.connection()
	if err != nil {
		return fmt.Errorf("pinging kafka: %w", err)
	}
	dialer := &kafkago.Dialer{ClientID: defaultClientID, TLS: conn.tls, SASLMechanism: conn.sasl}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, pingTimeout)
		defer cancel()
	}
	var errs []error
	for _, addr := range brokers {
		err := pingBroker(ctx, dialer, addr)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("pinging kafka: %w", errors.Join(errs...))
}

// pingBroker asks one broker for the broker list, bounded by ctx.
func pingBroker(ctx context.Context, dialer *kafkago.Dialer, addr string) error {
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	// kafka-go connections honour deadlines, not contexts: cancel the read
	// by moving the deadline to now.
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	if _, err := conn.Brokers(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("reading metadata: %w", ctx.Err())
		}
		return fmt.Errorf("reading metadata: %w", err)
	}
	return nil
}
