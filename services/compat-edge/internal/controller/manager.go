package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/pcourt/pcourt/services/compat-edge/api/v1alpha1"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
)

// Mode is EDGE_KUBERNETES: whether the compat-controller watches
// CompatibilityFamily resources.
type Mode string

// The modes.
const (
	// Auto watches when the controller finds a cluster (KUBECONFIG, or
	// the in-cluster service account), and otherwise runs the notices
	// alone.
	Auto Mode = "auto"
	// On requires a cluster: the controller refuses to start without one.
	On Mode = "on"
	// Off never watches.
	Off Mode = "off"
)

// Valid reports a known mode.
func (m Mode) Valid() bool { return m == Auto || m == On || m == Off }

// Config is the Kubernetes part of the compat-controller's configuration.
type Config struct {
	Mode Mode
	// Namespace is where the controller watches resources and holds its
	// lease (EDGE_KUBERNETES_NAMESPACE; POD_NAMESPACE, then the service
	// account's namespace).
	Namespace string
	// LeaseName names the leader-election lease (EDGE_KUBERNETES_LEASE):
	// its holder reconciles and sends the notices.
	LeaseName string
}

// DefaultConfig watches when a cluster is found.
func DefaultConfig() Config { return Config{Mode: Auto, LeaseName: "compat-controller"} }

// Validate reports an unusable setting.
func (c Config) Validate() error {
	if !c.Mode.Valid() {
		return fmt.Errorf("EDGE_KUBERNETES=%q is not auto, on or off", c.Mode)
	}
	if c.LeaseName == "" {
		return errors.New("EDGE_KUBERNETES_LEASE must not be empty")
	}
	return nil
}

const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ErrNoCluster is RESTConfig's answer when no cluster is configured.
var ErrNoCluster = errors.New("not in a Kubernetes cluster: neither KUBECONFIG nor an in-cluster service account")

// RESTConfig finds the cluster: the file KUBECONFIG names, or the pod's
// service account. It never falls back to ~/.kube/config, so a developer's
// laptop does not start watching whatever cluster was last used.
func RESTConfig(getenv func(string) string) (*rest.Config, error) {
	if path := getenv("KUBECONFIG"); path != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			return nil, fmt.Errorf("reading KUBECONFIG %s: %w", path, err)
		}
		return cfg, nil
	}
	cfg, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		return nil, ErrNoCluster
	}
	return cfg, err
}

// Namespace returns the namespace to watch: the configured one, else the
// pod's (POD_NAMESPACE, then the service account's), else "default".
func Namespace(configured string, getenv func(string) string) string {
	if configured != "" {
		return configured
	}
	if ns := getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile(serviceAccountNamespace); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b))
	}
	return "default"
}

// Scheme returns a scheme with the built-in types and CompatibilityFamily.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Deps are what the manager drives.
type Deps struct {
	// SaveLayer replaces the CompatibilityFamily layer in the edge's
	// durable store (store.SaveResources).
	SaveLayer func(ctx context.Context, layer map[inventory.Family]policy.Settings) (bool, error)
	// LayerSaved, when set, is told after the layer changed.
	LayerSaved func(ctx context.Context)
	// Scheduler runs on the elected replica only (nil: none).
	Scheduler func(ctx context.Context) error
	Now       func() time.Time
	Logger    *slog.Logger
}

// NewManager builds the manager: on the replica holding the lease, the
// status reconciler, the layer writer and the notice scheduler; the other
// replicas wait to take over. Its metrics and probe listeners are off: the
// controller's admin listener has its own.
func NewManager(restCfg *rest.Config, cfg Config, deps Deps) (manager.Manager, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	log := logr.FromSlogHandler(deps.Logger.Handler())
	ctrl.SetLogger(log)
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                        scheme,
		Logger:                        log,
		Cache:                         cache.Options{DefaultNamespaces: map[string]cache.Config{cfg.Namespace: {}}},
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              cfg.LeaseName,
		LeaderElectionNamespace:       cfg.Namespace,
		LeaderElectionReleaseOnCancel: true,
		// controller-runtime refuses a controller name already registered
		// anywhere in the process, to keep two controllers from reporting
		// one metric. A process here runs one manager with two fixed,
		// distinct names; only tests build a second manager in the same
		// process (the binary's whole-run test after the config test), and
		// those managers never run side by side.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, fmt.Errorf("building the controller manager: %w", err)
	}
	err = ctrl.NewControllerManagedBy(mgr).For(&v1alpha1.CompatibilityFamily{}).Named("compatibilityfamily-status").
		Complete(&StatusReconciler{Client: mgr.GetClient(), Now: deps.Now})
	if err != nil {
		return nil, fmt.Errorf("building the status reconciler: %w", err)
	}
	err = ctrl.NewControllerManagedBy(mgr).For(&v1alpha1.CompatibilityFamily{}).Named("compatibilityfamily-layer").
		Complete(&LayerWriter{Reader: mgr.GetCache(), Namespace: cfg.Namespace, Save: deps.SaveLayer, Saved: deps.LayerSaved, Logger: deps.Logger})
	if err != nil {
		return nil, fmt.Errorf("building the layer writer: %w", err)
	}
	if deps.Scheduler != nil {
		// A RunnableFunc needs the lease: only the elected replica sends.
		if err := mgr.Add(manager.RunnableFunc(deps.Scheduler)); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}
