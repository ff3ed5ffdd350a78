// Command readiness sells the paid dispute-readiness report
// (POST /api/x402/dispute-readiness) over x402 v2.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/libs/x402/journal"
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
	base, err := service.Start(ctx, service.Options{
		Name: "readiness", Version: version, Config: cfg.Service, FullConfig: cfg, Getenv: getenv, Stdout: stdout,
	})
	if err != nil {
		return err
	}
	defer base.Close()
	logger, rdb := base.Logger, base.Redis

	producer, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: cfg.Service.KafkaBrokers, Security: cfg.Service.KafkaSecurity, ClientID: "readiness", TracerProvider: base.Telemetry.Tracer})
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
	discovery, err := discoveryFromOpenAPI()
	if err != nil {
		return err
	}
	challenge, err := httpapi.NewChallenge(cfg.Networks, cfg.PayTo, cfg.MaxTimeoutSeconds, discovery)
	if err != nil {
		return err
	}
	seller, err := sale.NewSeller(sale.Config{Table: table, Lease: cfg.Lease, Resource: httpapi.Path, ResourceURL: cfg.PublicBase.URL(httpapi.Path), Durable: base.Durable},
		rdb, store.NewCaps(rdb, cfg.PayerCap, cfg.GlobalCap), facilitatorClient, logger, nil)
	if err != nil {
		return err
	}
	// Settlement events are recorded in the settlement journal's outbox,
	// in the same step as the settlement; readiness is the service that
	// appends there, so it relays it.
	relayRedis, err := base.RelayRedis(journal.Sharding)
	if err != nil {
		return err
	}
	relay, err := outbox.NewRelay(relayRedis, producer, outbox.DefaultRelayConfig(journal.Sharding, cfg.Service.PodName), logger, base.Telemetry.Tracer)
	if err != nil {
		return err
	}
	if err := outbox.ObserveBacklog(rdb, journal.Sharding, base.Telemetry.Meter); err != nil {
		return err
	}

	srv := base.Server(httpapi.Problem, base.KafkaCheck())
	httpapi.NewHandler(httpapi.Config{Enabled: cfg.Enabled, PublicBase: cfg.PublicBase}, challenge, seller, logger).Register(srv.Router())
	logger.Info("rules loaded", "version", table.Version, "hash", table.Hash())

	return lifecycle.Run(ctx, logger,
		lifecycle.Component{Name: "http", Run: srv.Run},
		lifecycle.Component{Name: "outbox-relay", Run: relay.Run},
		lifecycle.Component{Name: "reconciler", Run: func(ctx context.Context) error { return seller.RunReconciler(ctx, cfg.ReconcileInterval) }},
	)
}

// discoveryFromOpenAPI reads what x402 discovery publishes from the OpenAPI
// document: the request schema and the example exchange.
func discoveryFromOpenAPI() (httpapi.Discovery, error) {
	var d httpapi.Discovery
	var err1, err2, err3 error
	d.RequestSchema, err1 = api.Schema("ReadinessRequest")
	d.ExampleRequest, err2 = api.Example("ReadinessRequestExample")
	d.ExampleResponse, err3 = api.Example("ReadinessReportExample")
	return d, errors.Join(err1, err2, err3)
}
