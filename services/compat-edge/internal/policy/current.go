package policy

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
)

// Layers are the family settings the durable store holds, by who wrote
// them: the administrator through the admin API, and the compat-controller
// from the CompatibilityFamily resources. Overlay decides between them.
type Layers struct {
	// Admin is what the admin API saved.
	Admin map[inventory.Family]Settings
	// Resources are the settings of every governing, valid
	// CompatibilityFamily resource, as the controller last wrote them.
	Resources map[inventory.Family]Settings
}

// Current is the policy in force: built from the environment and the
// durable store's two layers (the admin API's and the CompatibilityFamily
// resources', which take precedence: Overlay); read by every request
// without a lock. The store is read every interval, so a change by either
// writer acts on every replica within it.
type Current struct {
	env      Env
	load     func(context.Context) (Layers, error)
	interval time.Duration
	logger   *slog.Logger
	p        atomic.Pointer[Policy]

	mu    sync.Mutex                    // serialises refreshes
	built map[inventory.Family]Settings // the layer the policy in force was built from
}

// NewCurrent returns a Current that, until its first refresh, holds the
// environment's policy alone.
func NewCurrent(env Env, load func(context.Context) (Layers, error), interval time.Duration, logger *slog.Logger) *Current {
	c := &Current{env: env, load: load, interval: interval, logger: logger}
	c.p.Store(Resolve(env, nil))
	return c
}

// Policy returns the policy in force.
func (c *Current) Policy() *Policy { return c.p.Load() }

// Refresh reads the durable layers and swaps the policy when their
// combination changed. On failure the policy in force stays: an
// unreachable store neither announces nor retires anything new.
func (c *Current) Refresh(ctx context.Context) error {
	layers, err := c.load(ctx)
	if err != nil {
		return fmt.Errorf("loading compatibility settings: %w", err)
	}
	layer := Overlay(layers.Resources, layers.Admin)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.built != nil && reflect.DeepEqual(layer, c.built) {
		return nil
	}
	c.built = layer
	p := Resolve(c.env, layer)
	c.p.Store(p)
	c.Log(p)
	return nil
}

// Log writes the policy's windows, one line per family.
func (c *Current) Log(p *Policy) {
	for _, w := range p.Windows() {
		attrs := []any{"family", w.Family, "enabled", p.Enabled, "ga", w.GA.String(), "source", w.Source, "stage", w.Stage,
			"brownouts", len(w.Brownouts), "extensions", len(w.Extensions)}
		if w.Invalid != "" {
			c.logger.Warn("compatibility date invalid: nothing announced for the family", append(attrs, "invalid", w.Invalid)...)
			continue
		}
		c.logger.Info("compatibility window", attrs...)
	}
}

// Run refreshes every interval until ctx ends.
func (c *Current) Run(ctx context.Context) error {
	t := time.NewTicker(c.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := c.Refresh(ctx); err != nil {
				c.logger.Warn("compatibility settings not refreshed; the policy in force stays", "err", err)
			}
		}
	}
}
