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

// PolicyFeeder hands the policy the edge serves from the settings of every
// governing, valid CompatibilityFamily in its namespace. It runs on every
// replica and reads the informer cache, so each replica serves from what
// it watches, without a call to the API server per request.
type PolicyFeeder struct {
	// Reader is the manager's cache.
	Reader    client.Reader
	Namespace string
	// Set receives the resource layer (policy.Current.SetResources).
	Set    func(map[inventory.Family]policy.Settings)
	Logger *slog.Logger
}

// Reconcile rebuilds the whole layer, whichever resource changed: there
// are at most a few resources, and a deletion must remove its family.
func (f *PolicyFeeder) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	var all v1alpha1.CompatibilityFamilyList
	if err := f.Reader.List(ctx, &all, client.InNamespace(f.Namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing compatibility families: %w", err)
	}
	f.Set(Layer(all.Items, f.Logger))
	return ctrl.Result{}, nil
}

// Layer returns the settings of the governing resource of each family,
// leaving out the families whose governing resource does not validate
// (logged: the family then falls back to the store and the environment).
func Layer(items []v1alpha1.CompatibilityFamily, logger *slog.Logger) map[inventory.Family]policy.Settings {
	out := map[inventory.Family]policy.Settings{}
	for family, cf := range Winners(items) {
		_, s, err := ToSettings(cf)
		if err != nil {
			logger.Warn("compatibility family resource invalid: the family falls back to the durable store and environment",
				"resource", Source(cf), "family", family, "err", err)
			continue
		}
		out[family] = s
	}
	return out
}
