// Command readiness sells the paid dispute-readiness report (POST /api/x402/dispute-readiness) over x402 v2.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/logging"
	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/telemetry"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "readiness: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	logger := logging.New(stdout, "readiness", logging.ParseLevel(cfg.LogLevel))
	logger.Info("starting", "version", version, "config", cfg)

	tel, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: "readiness", ServiceVersion: version}, getenv)
	if err != nil {
		return err
	}
	defer shutdown(logger, "telemetry", tel.Shutdown)

	rdb := redisclient.New(cfg.Redis)
	defer rdb.Close()

	srv := httpserver.New(cfg.HTTP, httpserver.Deps{
		Service:   "readiness",
		Logger:    logger,
		Telemetry: tel,
		Checks: []httpserver.Check{
			{Name: "redis", Probe: redisclient.Ping(rdb)},
			{Name: "kafka", Probe: func(ctx context.Context) error { return kafka.Ping(ctx, cfg.KafkaBrokers) }},
		},
	})

	return lifecycle.Run(ctx, logger, lifecycle.Component{Name: "http", Run: srv.Run})
}

// shutdown runs a deferred stop step and logs, rather than loses, its error.
func shutdown(logger *slog.Logger, what string, fn func(context.Context) error) {
	if err := fn(context.Background()); err != nil {
		logger.Error("shutdown failed", "component", what, "err", err)
	}
}
