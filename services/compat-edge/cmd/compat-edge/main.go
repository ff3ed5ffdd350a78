// Command compat-edge is the platform's only public ingress: it routes every
// public path to the service that owns it, applies the compatibility policy
// to earlier routes (announcements, brownouts, 410s, the legacy-use
// ledger), and serves the API document and the migration guide. It has no
// Kubernetes client: the compat-controller writes the CompatibilityFamily
// resources' settings into the durable store the edge refreshes from, and
// sends the milestone notices.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/services/compat-edge/internal/admin"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/legacyuse"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/proxy"
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
	openAPI, err := proxy.ServedDocument(doc, cfg.PublicURL)
	if err != nil {
		return err
	}
	index, err := inventory.NewIndex(inventory.Routes)
	if err != nil {
		return err
	}
	st := store.New(base.Redis)
	creds := base.Credentials()
	current := policy.NewCurrent(cfg.Compat.Env, st.LoadLayers, cfg.Compat.RefreshInterval, base.Logger)
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

	forward, err := proxy.NewProxy(routing.NewTable(routing.Families), cfg.Upstreams, cfg.Forwarding, base.Telemetry.Propagator, proxy.Compat{
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
	srv := base.Server(nil)
	// The edge's own answers, on gin: the usage read, the API document,
	// the guide, the probes and the 404s, each on its path's one normal
	// form.
	srv.Router().Use(proxy.NormalizePath)
	srv.Router().Use((&usage.Reader{Credentials: creds, Uses: st.Uses, Policy: current.Policy}).Serve)
	proxy.Register(srv.Router(), forward, openAPI)
	if err := proxy.RegisterResourceMetadata(srv.Router(), cfg.PublicURL); err != nil {
		return err
	}
	// The proxy path, on the edge's own public server, which hands the
	// rest to gin.
	srv.SetPublic(proxy.NewServer(proxy.ServerDeps{
		Platform: srv.Platform(), Proxy: forward, Routes: cfg.Routes,
		Own: srv.Router(), OwnPaths: []string{usage.Path},
	}))
	adminAPI := &admin.API{Token: cfg.AdminToken, Store: st, Policy: current.Policy, Refresh: current.Refresh, Now: time.Now, Logger: base.Logger}
	srv.HandleAdmin(admin.Prefix, adminAPI.Handler())
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
	return lifecycle.Run(ctx, base.Logger, components...)
}
