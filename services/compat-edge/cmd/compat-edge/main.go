// Command compat-edge is the platform's only public ingress: it routes every
// public path to the service that owns it, applies the compatibility policy
// to earlier routes (announcements, brownouts, 410s, the legacy-use
// ledger), and serves the API document and the migration guide.
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

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/services/compat-edge/internal/console"
	"github.com/pcourt/pcourt/services/compat-edge/internal/controller"
	"github.com/pcourt/pcourt/services/compat-edge/internal/httpapi"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/legacyuse"
	"github.com/pcourt/pcourt/services/compat-edge/internal/mail"
	"github.com/pcourt/pcourt/services/compat-edge/internal/notice"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
	"github.com/pcourt/pcourt/services/compat-edge/internal/usage"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "compat-edge: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	base, err := service.Start(ctx, service.Options{
		Name: "compat-edge", Version: version, Config: cfg.Service, FullConfig: cfg, Getenv: getenv, Stdout: stdout,
	})
	if err != nil {
		return err
	}
	defer base.Close()

	doc, err := api.JSON()
	if err != nil {
		return err
	}
	openAPI, err := httpapi.ServedDocument(doc, cfg.PublicURL)
	if err != nil {
		return err
	}
	index, err := inventory.NewIndex(inventory.Routes)
	if err != nil {
		return err
	}
	st := store.New(base.Redis)
	creds := base.Credentials()
	current := policy.NewCurrent(cfg.Compat.Env, st.LoadAll, cfg.Compat.RefreshInterval, base.Logger)
	if err := current.Refresh(ctx); err != nil {
		// The edge still serves: the environment's policy holds until the
		// store answers, at the next refresh.
		base.Logger.Warn("compatibility settings not loaded at start", "err", err)
		current.Log(current.Policy())
	}
	recorder := legacyuse.New(cfg.Compat.LegacyUse, func(ctx context.Context, hash string) (string, error) {
		cred, err := creds.AuthenticateHash(ctx, hash)
		if errors.Is(err, auth.ErrInvalidCredential) {
			return "", legacyuse.ErrUnknownCredential
		}
		return cred.PublicID, err
	}, st.AddUses, base.Logger)

	proxy, err := httpapi.NewProxy(routing.NewTable(routing.Families), cfg.Upstreams, cfg.Forwarding, base.Telemetry.Propagator, httpapi.Compat{
		Index:  index,
		Policy: current.Policy,
		Now:    time.Now,
		Integrations: func(ctx context.Context, hash string) ([]string, error) {
			cred, err := creds.AuthenticateHash(ctx, hash)
			if errors.Is(err, auth.ErrInvalidCredential) {
				return nil, nil // no integration: the base window
			}
			if err != nil {
				return nil, err
			}
			return []string{cred.PublicID, cred.PartnerID}, nil
		},
		Record: recorder.Record,
	})
	if err != nil {
		return err
	}
	cons, err := console.New(cfg.Console, console.Deps{
		Store: console.NewStore(base.Redis), Credentials: creds, Logger: base.Logger,
	})
	if err != nil {
		return err
	}
	srv := base.Server(nil)
	// One path for everything after: the console, routing, the policy, the
	// ledger and the owner.
	srv.Router().Use(httpapi.NormalizePath)
	// The console's API paths and the partner's compatibility usage come
	// before the proxy's /api catch-all.
	srv.Router().Use(cons.API)
	srv.Router().Use((&usage.Reader{Credentials: creds, Uses: st.Uses, Policy: current.Policy}).Serve)
	cons.Register(srv.Router())
	httpapi.Register(srv.Router(), httpapi.Config{MaxBodyBytes: cfg.Service.HTTP.MaxBodyBytes}, proxy, openAPI)
	admin := &httpapi.Admin{Token: cfg.AdminToken, Store: st, Policy: current.Policy, Refresh: current.Refresh, Now: time.Now, Logger: base.Logger}
	srv.HandleAdmin(httpapi.AdminPrefix, admin.Handler())
	if cfg.AdminToken == "" {
		base.Logger.Warn("compatibility admin API refuses every request: EDGE_ADMIN_TOKEN is not set")
	}

	// Stopped in this order: the server drains its requests, then the
	// recorder writes what they left, then the policy stops refreshing.
	components := []lifecycle.Component{
		{Name: "http", Run: srv.Run},
		{Name: "legacy-use", Run: recorder.Run},
		{Name: "compat-policy", Run: current.Run},
	}
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
			GuideURL: cfg.PublicURL + httpapi.GuidePath,
			Interval: cfg.NoticeInterval,
			Logger:   base.Logger,
		}).Run
	} else {
		base.Logger.Warn("compatibility notices off: EDGE_SMTP_HOST is not set, no milestone e-mail is sent")
	}
	mgr, err := kubernetesManager(cfg.Kubernetes, getenv, controller.Deps{
		SetResources: current.SetResources, Scheduler: notices, Now: time.Now, Logger: base.Logger,
	}, base.Logger)
	if err != nil {
		return err
	}
	switch {
	case mgr != nil:
		// The manager runs the scheduler on the replica holding the lease.
		components = append(components, lifecycle.Component{Name: "kubernetes", Run: mgr.Start})
	case notices != nil:
		// Without a lease every replica passes; the atomic claim in Redis
		// still sends each notice once.
		components = append(components, lifecycle.Component{Name: "notices", Run: notices})
	}
	return lifecycle.Run(ctx, base.Logger, components...)
}

// kubernetesManager returns the CompatibilityFamily manager, or nil when
// the edge does not watch resources (EDGE_KUBERNETES=off, or auto outside
// a cluster); it says which, once, at start.
func kubernetesManager(cfg controller.Config, getenv func(string) string, deps controller.Deps, logger *slog.Logger) (manager.Manager, error) {
	if cfg.Mode == controller.Off {
		logger.Info("compatibility families: Kubernetes off (EDGE_KUBERNETES=off); the policy comes from the durable store and the environment")
		return nil, nil
	}
	restCfg, err := controller.RESTConfig(getenv)
	switch {
	case errors.Is(err, controller.ErrNoCluster) && cfg.Mode == controller.Auto:
		logger.Warn("compatibility families: not in a Kubernetes cluster (no KUBECONFIG, no in-cluster service account); "+
			"CompatibilityFamily resources are not watched and the policy comes from the durable store and the environment",
			"EDGE_KUBERNETES", string(cfg.Mode))
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("EDGE_KUBERNETES=%s: %w", cfg.Mode, err)
	}
	mgr, err := controller.NewManager(restCfg, cfg, deps)
	if err != nil {
		return nil, err
	}
	logger.Info("compatibility families: watching CompatibilityFamily resources; they take precedence over the durable store",
		"namespace", cfg.Namespace, "host", restCfg.Host, "lease", cfg.LeaseName)
	return mgr, nil
}
