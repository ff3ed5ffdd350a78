// Package lifecycle runs a service's long-lived components (HTTP server,
// outbox relay, Kafka consumers) together: they stop together when the
// process is told to stop, and when any one of them fails.
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

// Run starts every component and waits for all of them. The first failure
// cancels the others; its error is returned.
func Run(ctx context.Context, logger *slog.Logger, components ...Component) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for _, c := range components {
		wg.Go(func() {
			logger.Info("component started", "component", c.Name)
			err := c.Run(ctx)
			if err != nil {
				logger.Error("component failed", "component", c.Name, "err", err)
				cancel(fmt.Errorf("%s: %w", c.Name, err))
				return
			}
			logger.Info("component stopped", "component", c.Name)
		})
	}
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil && cause != context.Canceled {
		return cause
	}
	return nil
}
