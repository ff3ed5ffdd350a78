package controller

import (
	"context"
	"fmt"
	"log/slog"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/pcourt/pcourt/services/compat-edge/api/v1alpha1"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
)

// LayerWriter writes the settings of every governing, valid
// CompatibilityFamily in its namespace into the edge's durable store (the
// CompatibilityFamily layer, store.SaveResources), where every edge
// replica reads them at its next policy refresh and lays them over the
// admin API's settings (policy.Overlay). It runs on the elected replica
// only: the edge itself has no Kubernetes client.
type LayerWriter struct {
	// Reader is the manager's cache.
	Reader    client.Reader
	Namespace string
	// Save replaces the layer and reports whether it changed
	// (store.SaveResources): writing the same layer again changes nothing.
	Save func(ctx context.Context, layer map[inventory.Family]policy.Settings) (bool, error)
	// Saved, when set, is told after the layer changed (the controller's
	// own policy refreshes at once, so its notices follow).
	Saved  func(ctx context.Context)
	Logger *slog.Logger
}

// Reconcile rebuilds and saves the whole layer, whichever resource
// changed: there are at most a few resources, and a deletion must remove
// its family. A failed save is retried by the manager with backoff.
func (w *LayerWriter) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	var all v1alpha1.CompatibilityFamilyList
	if err := w.Reader.List(ctx, &all, client.InNamespace(w.Namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing compatibility families: %w", err)
	}
	layer := Layer(all.Items, w.Logger)
	changed, err := w.Save(ctx, layer)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("saving the CompatibilityFamily layer: %w", err)
	}
	if changed {
		families := make([]string, 0, len(layer))
		for _, f := range inventory.Families {
			if s, ok := layer[f]; ok {
				families = append(families, string(f)+"="+s.Source)
			}
		}
		w.Logger.Info("compatibility families: the CompatibilityFamily layer saved; edge replicas apply it at their next refresh",
			"families", families)
		if w.Saved != nil {
			w.Saved(ctx)
		}
	}
	return ctrl.Result{}, nil
}

// Layer returns the settings of the governing resource of each family,
// leaving out the families whose governing resource does not validate
// (logged: the family then falls back to the admin API's settings and the
// environment).
func Layer(items []v1alpha1.CompatibilityFamily, logger *slog.Logger) map[inventory.Family]policy.Settings {
	out := map[inventory.Family]policy.Settings{}
	for family, cf := range Winners(items) {
		_, s, err := ToSettings(cf)
		if err != nil {
			logger.Warn("compatibility family resource invalid: the family falls back to the admin API's settings and the environment",
				"resource", Source(cf), "family", family, "err", err)
			continue
		}
		out[family] = s
	}
	return out
}
