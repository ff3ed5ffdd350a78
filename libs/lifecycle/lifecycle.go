// Package lifecycle runs a service's long-lived components (HTTP server,
// Kafka consumers, outbox relay) together: they stop together when the
// process is told to stop, and when any one of them fails, one after the
// other in the order they were given.
package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// Component is one long-lived part of a service. Run blocks until ctx is
// cancelled (returning nil after a clean stop) or the component fails.
type Component struct {
	Name string
	Run  func(ctx context.Context) error
}

// Run starts every component and waits for all of them. When ctx ends or a
// component fails, Run stops the components in the order given, each only
// after the one before it has returned. A service lists its HTTP server
// first (stop accepting, drain requests), then its consumers, then its
// outbox relay, so the relay still publishes what the drained requests
// and consumers wrote; the caller closes its clients after Run returns.
// The first failure is returned.
func Run(ctx context.Context, logger *slog.Logger, components ...Component) error {
	var (
		once     sync.Once
		firstErr error
		failed   = make(chan struct{})
	)
	fail := func(err error) {
		once.Do(func() {
			firstErr = err
			close(failed)
		})
	}

	cancels := make([]context.CancelFunc, len(components))
	dones := make([]chan struct{}, len(components))
	for i, c := range components {
		// Each component has its own context, so that stopping one does
		// not stop the ones after it.
		cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		cancels[i], dones[i] = cancel, make(chan struct{})
		go func() {
			defer close(dones[i])
			logger.Info("component started", "component", c.Name)
			if err := c.Run(cctx); err != nil {
				logger.Error("component failed", "component", c.Name, "err", err)
				fail(fmt.Errorf("%s: %w", c.Name, err))
				return
			}
			logger.Info("component stopped", "component", c.Name)
		}()
	}

	select {
	case <-ctx.Done():
		logger.Info("shutting down")
	case <-failed:
		logger.Info("shutting down after a failure")
	}
	for i, c := range components {
		cancels[i]()
		<-dones[i]
		logger.Debug("component shut down", "component", c.Name)
	}
	return firstErr
}
