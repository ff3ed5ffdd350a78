// Command filings owns case drafts from preparation to the confirmation that opens the case.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/reshard"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
	"github.com/pcourt/pcourt/services/filings/internal/filing"
	"github.com/pcourt/pcourt/services/filings/internal/httpapi"
	"github.com/pcourt/pcourt/services/filings/internal/store"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) > 1 && os.Args[1] == "reshard" { // a one-off: docs/redis.md, Resharding
		if err := reshard.Command(ctx, "filings", os.Args[2:], os.Getenv, os.Stdout, store.Reshard); err != nil {
			fmt.Fprintf(os.Stderr, "filings reshard: %v\n", err)
			os.Exit(1)
		}
		return
	}
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
	base, err := service.Start(ctx, service.Options{
		Name: "filings", Version: version, Config: cfg.Service, FullConfig: cfg, Getenv: getenv, Stdout: stdout,
	})
	if err != nil {
		return err
	}
	defer base.Close()
	logger, rdb := base.Logger, base.Redis

	producer, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: cfg.Service.KafkaBrokers, Security: cfg.Service.KafkaSecurity, ClientID: "filings", TracerProvider: base.Telemetry.Tracer})
	if err != nil {
		return err
	}
	defer producer.Close()
	drafts, err := store.NewDrafts(rdb, cfg.Shards, base.Durable)
	if err != nil {
		return err
	}
	relayRedis, err := base.RelayRedis(drafts.Sharding())
	if err != nil {
		return err
	}
	relay, err := outbox.NewRelay(relayRedis, producer, outbox.DefaultRelayConfig(drafts.Sharding(), cfg.Service.PodName), logger, base.Telemetry.Tracer)
	if err != nil {
		return err
	}
	if err := outbox.ObserveBacklog(rdb, drafts.Sharding(), base.Telemetry.Meter); err != nil {
		return err
	}
	facilitatorClient, err := facilitator.NewClient(facilitator.ClientConfig{
		BaseURL: cfg.FacilitatorURL, Authorization: cfg.FacilitatorAuth, Timeout: cfg.FacilitatorTimeout,
	})
	if err != nil {
		return err
	}
	payments, err := journal.New(journal.Config{Owner: filing.FeeOwner, Lease: cfg.FeePaymentLease, Durable: base.Durable}, rdb, facilitatorClient, logger)
	if err != nil {
		return err
	}
	idempotent, err := idempotency.NewJournal(rdb, idempotency.DefaultConfig("pc:filings"), logger)
	if err != nil {
		return err
	}
	rulesVersion, rulesHash, _ := api.Rules()
	credentials := base.Credentials()
	filings := filing.New(filing.Deps{
		Drafts: drafts, Credentials: credentials, Payments: payments, Logger: logger,
		Fees: filing.FeeConfig{PayTo: cfg.FeesPayTo, Networks: cfg.FeesNetworks, MaxTimeoutSeconds: cfg.FeesMaxTimeoutSeconds},
	})
	deps := httpapi.Deps{
		Credentials: credentials,
		Filings:     filings,
		Journal:     idempotent,
		Rules:       draft.Rules{Version: rulesVersion, Hash: rulesHash},
		PublicBase:  cfg.PublicBase,
		Logger:      logger,
	}
	srv := base.Server(httpapi.Problem, base.KafkaCheck())
	httpapi.Register(srv.Router(), deps)
	reconciler := filing.NewFeeReconciler(filings)
	logger.Info("rules pinned for new drafts", "version", rulesVersion, "hash", rulesHash)

	return lifecycle.Run(ctx, logger,
		lifecycle.Component{Name: "http", Run: srv.Run},
		lifecycle.Component{Name: "outbox-relay", Run: relay.Run},
		lifecycle.Component{Name: "fee-reconciler", Run: func(ctx context.Context) error { return reconciler.Run(ctx, cfg.FeeReconcileInterval) }},
	)
}
