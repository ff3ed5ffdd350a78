// Command console is the partner console: the pages a partner's engineer
// signs into with a single-use link, and the links API its backend mints
// them with. The edge routes /console/ and /api/console/ here; every page
// calls the public API back through the edge (CONSOLE_API_URL) with a
// short-lived credential of the partner, as the partner's backend would,
// so the console reaches nothing the partner could not reach itself.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/services/console/internal/console"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "console: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	base, err := service.Start(ctx, service.Options{
		Name: "console", Version: version, Config: cfg.Service, FullConfig: cfg, Getenv: getenv, Stdout: stdout,
	})
	if err != nil {
		return err
	}
	defer base.Close()

	cons, err := console.New(cfg.Console, console.Deps{
		Store: console.NewStore(base.Redis), Credentials: base.Credentials(), Logger: base.Logger,
	})
	if err != nil {
		return err
	}
	srv := base.Server(nil)
	cons.Register(srv.Router())

	return lifecycle.Run(ctx, base.Logger, lifecycle.Component{Name: "http", Run: srv.Run})
}
