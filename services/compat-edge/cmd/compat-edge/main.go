// Command compat-edge is the platform's only public ingress: it routes every
// public path to the service that owns it and serves the API document.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/services/compat-edge/internal/httpapi"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
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
	proxy, err := httpapi.NewProxy(routing.NewTable(routing.Families), cfg.Upstreams, cfg.Forwarding, base.Telemetry.Propagator)
	if err != nil {
		return err
	}
	srv := base.Server(nil)
	httpapi.Register(srv.Router(), httpapi.Config{MaxBodyBytes: cfg.Service.HTTP.MaxBodyBytes}, proxy, openAPI)

	return lifecycle.Run(ctx, base.Logger, lifecycle.Component{Name: "http", Run: srv.Run})
}
