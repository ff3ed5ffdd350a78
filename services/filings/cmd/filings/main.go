// Command filings owns case drafts from preparation to the confirmation that opens the case.
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
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/logging"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/telemetry"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
	"github.com/pcourt/pcourt/services/filings/internal/httpapi"
	"github.com/pcourt/pcourt/services/filings/internal/store"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "filings: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	logger := logging.New(stdout, "filings", logging.ParseLevel(cfg.LogLevel))
	logger.Info("starting", "version", version, "config", cfg)

	tel, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: "filings", ServiceVersion: version}, getenv)
	if err != nil {
		return err
	}
	defer shutdown(logger, "telemetry", tel.Shutdown)

	rdb := redisclient.New(cfg.Redis)
	defer rdb.Close()

	credentials := auth.NewStore(rdb, auth.DefaultStoreConfig())
	producer, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: cfg.KafkaBrokers, ClientID: "filings", TracerProvider: tel.Tracer})
	if err != nil {
		return err
	}
	defer producer.Close()
	relay := outbox.NewRelay(rdb, producer, outbox.DefaultRelayConfig(store.Sharding, cfg.PodName), logger, tel.Tracer)
	rulesVersion, rulesHash, _ := api.Rules()

	srv := httpserver.New(cfg.HTTP, httpserver.Deps{
		Service:   "filings",
		Logger:    logger,
		Telemetry: tel,
		Mapper:    httpapi.Problem,
		Checks: []httpserver.Check{
			{Name: "redis", Probe: redisclient.Ping(rdb)},
			{Name: "kafka", Probe: func(ctx context.Context) error { return kafka.Ping(ctx, cfg.KafkaBrokers) }},
		},
	})
	facilitatorClient, err := facilitator.NewClient(facilitator.ClientConfig{
		BaseURL: cfg.FacilitatorURL, Authorization: cfg.FacilitatorAuth, Timeout: cfg.FacilitatorTimeout,
	})
	if err != nil {
		return err
	}
	deps := httpapi.Deps{
		Credentials: credentials,
		Drafts:      store.NewDrafts(rdb),
		Journal:     idempotency.NewJournal(rdb, idempotency.DefaultConfig("pc:filings"), logger),
		Rules:       draft.Rules{Version: rulesVersion, Hash: rulesHash},
		Fees: httpapi.FeePayments{
			PayTo: cfg.FeesPayTo, Networks: cfg.FeesNetworks, MaxTimeoutSeconds: cfg.FeesMaxTimeoutSeconds,
			Facilitator: facilitatorClient, Lease: cfg.FeePaymentLease,
		},
		Logger: logger,
	}
	httpapi.Register(srv.Router(), deps)
	reconciler := httpapi.NewFeeReconciler(deps)
	logger.Info("rules pinned for new drafts", "version", rulesVersion, "hash", rulesHash)

	return lifecycle.Run(ctx, logger,
		lifecycle.Component{Name: "http", Run: srv.Run},
		lifecycle.Component{Name: "outbox-relay", Run: relay.Run},
		lifecycle.Component{Name: "fee-reconciler", Run: func(ctx context.Context) error { return reconciler.Run(ctx, cfg.FeeReconcileInterval) }},
	)
}

// shutdown runs a deferred stop step and logs, rather than loses, its error.
func shutdown(logger *slog.Logger, what string, fn func(context.Context) error) {
	if err := fn(context.Background()); err != nil {
		logger.Error("shutdown failed", "component", what, "err", err)
	}
}
