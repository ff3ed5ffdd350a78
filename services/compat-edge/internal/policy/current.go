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

// Current is the policy in force: built from the environment, the durable
// store and, on Kubernetes, the CompatibilityFamily resources; read by
// every request without a lock. The store is read every interval; the
// resources are handed in by the controller whenever its cache changes
// (SetResources), and take precedence over the store (Overlay).
type Current struct {
	env      Env
	load     func(context.Context) (map[inventory.Family]Settings, error)
	interval time.Duration
	logger   *slog.Logger
	p        atomic.Pointer[Policy]

	mu        sync.Mutex // serialises rebuilds
	durable   map[inventory.Family]Settings
	resources map[inventory.Family]Settings
	built     map[inventory.Family]Settings // the layer the policy in force was built from
}

// NewCurrent returns a Current that, until its first refresh, holds the
// environment's policy alone.
func NewCurrent(env Env, load func(context.Context) (map[inventory.Family]Settings, error), interval time.Duration, logger *slog.Logger) *Current {
	c := &Current{env: env, load: load, interval: interval, logger: logger}
	c.p.Store(Resolve(env, nil))
	return c
}

// Policy returns the policy in force.
func (c *Current) Policy() *Policy { return c.p.Load() }

// Refresh reads the durable layer and swaps the policy when it changed. On
// failure the policy in force stays: an unreachable store neither
// announces nor retires anything new.
func (c *Current) Refresh(ctx context.Context) error {
	durable, err := c.load(ctx)
	if err != nil {
		return fmt.Errorf("loading compatibility settings: %w", err)
	}
	if durable == nil {
		durable = map[inventory.Family]Settings{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.durable = durable
	c.rebuild()
	return nil
}

// SetResources replaces the CompatibilityFamily layer: the settings of
// every valid resource, by family. nil removes the layer.
func (c *Current) SetResources(resources map[inventory.Family]Settings) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if resources == nil {
		resources = map[inventory.Family]Settings{}
	}
	c.resources = resources
	c.rebuild()
}

// rebuild swaps the policy when the combined layer changed; c.mu held.
func (c *Current) rebuild() {
	layer := Overlay(c.resources, c.durable)
	if c.built != nil && reflect.DeepEqual(layer, c.built) {
		return
	}
	c.built = layer
	p := Resolve(c.env, layer)
	c.p.Store(p)
	c.Log(p)
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
