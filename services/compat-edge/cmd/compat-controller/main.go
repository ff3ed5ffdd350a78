// Command compat-controller is the compatibility policy's one writer
// outside the admin API, and its mail: on the replica holding the lease it
// watches CompatibilityFamily resources (their status, and their settings
// saved into the edge's durable store, where every edge replica reads them)
// and sends the milestone notices. The edge replicas keep no Kubernetes
// client; this process is the only one with a ServiceAccount token.
//
// Without Kubernetes (make run, EDGE_KUBERNETES=off or no cluster found)
// it runs the notice scheduler alone when SMTP is configured: every
// replica passes, and the atomic claim in Redis sends each notice once.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/mail"
	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/services/compat-edge/internal/controller"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/notice"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "compat-controller: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	base, err := service.Start(ctx, service.Options{
		Name: "compat-controller", Version: version, Config: cfg.Service, FullConfig: cfg, Getenv: getenv, Stdout: stdout,
	})
	if err != nil {
		return err
	}
	defer base.Close()

	st := store.New(base.Redis)
	creds := base.Credentials()
	// The notices decide with the policy the edge serves: the environment
	// and both layers of the durable store.
	current := policy.NewCurrent(cfg.Env, st.LoadLayers, cfg.RefreshInterval, base.Logger)
	if err := current.Refresh(ctx); err != nil {
		base.Logger.Warn("compatibility settings not loaded at start", "err", err)
	}
	// Only Redis decides readiness: the controller neither serves the
	// public API nor reads Kafka.
	srv := httpserver.New(cfg.Service.HTTP, httpserver.Deps{
		Service: base.Name, Logger: base.Logger, Telemetry: base.Telemetry,
		Checks: []httpserver.Check{{Name: "redis", Probe: redisclient.Ping(base.Redis)}},
	})

	var notices func(context.Context) error
	if cfg.Mail.Enabled() {
		notices = (&notice.Scheduler{
			Policy: current.Policy,
			Store:  st,
			Credentials: func(ctx context.Context, publicID string) (notice.Credential, error) {
				cred, err := creds.Get(ctx, publicID)
				if errors.Is(err, auth.ErrNotFound) {
					return notice.Credential{}, notice.ErrUnknownCredential
				}
				if err != nil {
					return notice.Credential{}, err
				}
				return notice.Credential{Partner: cred.PartnerID, Active: cred.Active()}, nil
			},
			Sender:   mail.New(cfg.Mail, time.Now),
			Now:      time.Now,
			GuideURL: cfg.PublicURL + inventory.GuidePath,
			Interval: cfg.NoticeInterval,
			Logger:   base.Logger,
		}).Run
	} else {
		base.Logger.Warn("compatibility notices off: EDGE_SMTP_HOST is not set, no milestone e-mail is sent")
	}
	mgr, err := kubernetesManager(cfg.Kubernetes, getenv, controller.Deps{
		SaveLayer: st.SaveResources,
		LayerSaved: func(ctx context.Context) {
			if err := current.Refresh(ctx); err != nil {
				base.Logger.Warn("compatibility settings not refreshed after the layer changed", "err", err)
			}
		},
		Scheduler: notices, Now: time.Now, Logger: base.Logger,
	}, base.Logger)
	if err != nil {
		return err
	}

	// Stopped in this order: the manager (or the scheduler) first, so the
	// lease is released while the probes still answer; then the probes;
	// then the policy stops refreshing.
	var components []lifecycle.Component
	switch {
	case mgr != nil:
		// The manager runs the reconcilers and the scheduler on the
		// replica holding the lease.
		components = append(components, lifecycle.Component{Name: "kubernetes", Run: mgr.Start})
	case notices != nil:
		// Without a lease every replica passes; the atomic claim in Redis
		// still sends each notice once.
		components = append(components, lifecycle.Component{Name: "notices", Run: notices})
	default:
		base.Logger.Warn("compat-controller has nothing to do: no cluster to watch and no SMTP server; it only answers its probes")
	}
	components = append(components,
		lifecycle.Component{Name: "http", Run: srv.Run},
		lifecycle.Component{Name: "compat-policy", Run: current.Run})
	return lifecycle.Run(ctx, base.Logger, components...)
}

// kubernetesManager returns the CompatibilityFamily manager, or nil when
// the controller does not watch resources (EDGE_KUBERNETES=off, or auto
// outside a cluster); it says which, once, at start.
func kubernetesManager(cfg controller.Config, getenv func(string) string, deps controller.Deps, logger *slog.Logger) (manager.Manager, error) {
	if cfg.Mode == controller.Off {
		logger.Info("compatibility families: Kubernetes off (EDGE_KUBERNETES=off); the policy comes from the admin API's settings and the environment")
		return nil, nil
	}
	restCfg, err := controller.RESTConfig(getenv)
	switch {
	case errors.Is(err, controller.ErrNoCluster) && cfg.Mode == controller.Auto:
		logger.Warn("compatibility families: not in a Kubernetes cluster (no KUBECONFIG, no in-cluster service account); "+
			"CompatibilityFamily resources are not watched and the policy comes from the admin API's settings and the environment",
			"EDGE_KUBERNETES", string(cfg.Mode))
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("EDGE_KUBERNETES=%s: %w", cfg.Mode, err)
	}
	mgr, err := controller.NewManager(restCfg, cfg, deps)
	if err != nil {
		return nil, err
	}
	logger.Info("compatibility families: watching CompatibilityFamily resources; their settings, saved to the durable store, take precedence over the admin API's",
		"namespace", cfg.Namespace, "host", restCfg.Host, "lease", cfg.LeaseName)
	return mgr, nil
}
