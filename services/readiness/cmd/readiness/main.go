// Command readiness sells the paid dispute-readiness report
// (POST /api/x402/dispute-readiness) over x402 v2.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/logging"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/telemetry"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/services/readiness/internal/httpapi"
	"github.com/pcourt/pcourt/services/readiness/internal/readiness"
	"github.com/pcourt/pcourt/services/readiness/internal/sale"
	"github.com/pcourt/pcourt/services/readiness/internal/store"
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
	producer, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: cfg.KafkaBrokers, ClientID: "readiness", TracerProvider: tel.Tracer})
	if err != nil {
		return err
	}
	defer producer.Close()
	facilitatorClient, err := facilitator.NewClient(facilitator.ClientConfig{
		BaseURL: cfg.FacilitatorURL, Authorization: cfg.FacilitatorAuth, Timeout: cfg.FacilitatorTimeout,
	})
	if err != nil {
		return err
	}

	table := readiness.DefaultRuleTable()
	requestSchema, err := api.Schema("ReadinessRequest")
	if err != nil {
		return err
	}
	challenge, err := httpapi.NewChallenge(cfg.Networks, cfg.PayTo, cfg.MaxTimeoutSeconds, requestSchema, table)
	if err != nil {
		return err
	}
	seller := sale.NewSeller(sale.Config{Table: table, Lease: cfg.Lease, Resource: cfg.PublicURL + httpapi.Path},
		store.NewPayments(rdb), store.NewCaps(rdb, cfg.PayerCap, cfg.GlobalCap), facilitatorClient, logger, nil)
	relay := outbox.NewRelay(rdb, producer, outbox.DefaultRelayConfig(store.Sharding, cfg.PodName), logger, tel.Tracer)

	srv := httpserver.New(cfg.HTTP, httpserver.Deps{
		Service:   "readiness",
		Logger:    logger,
		Telemetry: tel,
		Mapper:    httpapi.Problem,
		Checks: []httpserver.Check{
			{Name: "redis", Probe: redisclient.Ping(rdb)},
			{Name: "kafka", Probe: func(ctx context.Context) error { return kafka.Ping(ctx, cfg.KafkaBrokers) }},
		},
	})
	httpapi.NewHandler(httpapi.Config{Enabled: cfg.Enabled, PublicURL: cfg.PublicURL}, challenge, seller, logger).Register(srv.Router())
	logger.Info("rules loaded", "version", table.Version, "hash", table.Hash())

	return lifecycle.Run(ctx, logger,
		lifecycle.Component{Name: "http", Run: srv.Run},
		lifecycle.Component{Name: "outbox-relay", Run: relay.Run},
		lifecycle.Component{Name: "reconciler", Run: func(ctx context.Context) error { return seller.RunReconciler(ctx, cfg.ReconcileInterval) }},
	)
}

// shutdown runs a deferred stop step and logs, rather than loses, its error.
func shutdown(logger *slog.Logger, what string, fn func(context.Context) error) {
	if err := fn(context.Background()); err != nil {
		logger.Error("shutdown failed", "component", what, "err", err)
	}
}
