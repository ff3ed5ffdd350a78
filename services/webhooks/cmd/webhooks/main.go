// Command webhooks owns partner endpoints, verification keys and signed case-event deliveries.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/services/webhooks/internal/dispatch"
	"github.com/pcourt/pcourt/services/webhooks/internal/egress"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/events"
	"github.com/pcourt/pcourt/services/webhooks/internal/httpapi"
	"github.com/pcourt/pcourt/services/webhooks/internal/keys"
	"github.com/pcourt/pcourt/services/webhooks/internal/recovery"
	"github.com/pcourt/pcourt/services/webhooks/internal/selfservice"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "webhooks: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	base, err := service.Start(ctx, service.Options{
		Name: "webhooks", Version: version, Config: cfg.Service, FullConfig: cfg, Getenv: getenv, Stdout: stdout,
	})
	if err != nil {
		return err
	}
	defer base.Close()
	logger, rdb := base.Logger, base.Redis

	ring, err := loadKeys(cfg, logger)
	if err != nil {
		return err
	}
	policy := egress.Policy{Allow: cfg.EgressAllow}
	if len(policy.Allow) > 0 {
		logger.Warn("egress allowlist opens internal addresses to sandbox deliveries (never live; their answers are not recorded)", "cidrs", fmt.Sprint(policy.Allow))
	}
	timeout, idle := cfg.Dispatch.Timeout, cfg.Dispatch.Concurrency
	clients := dispatch.Clients{
		Sandbox: egress.NewClient(egress.NewDialer(policy.ForEnvironment("sandbox"), nil, timeout), timeout, idle),
		Live:    egress.NewClient(egress.NewDialer(policy.ForEnvironment("live"), nil, timeout), timeout, idle),
	}
	eps := store.NewEndpoints(rdb)
	deliveries := store.NewDeliveries(rdb, cfg.Deliveries)
	recoveries := store.NewRecoveries(rdb, cfg.Deliveries.Retention)

	producer, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: cfg.Service.KafkaBrokers, Security: cfg.Service.KafkaSecurity, ClientID: "webhooks", TracerProvider: base.Telemetry.Tracer})
	if err != nil {
		return err
	}
	defer producer.Close()
	sender := dispatch.New(cfg.Dispatch, deliveries, eps, ring, clients, logger, nil, nil)
	if err := sender.Instrument(base.Telemetry.Tracer, base.Telemetry.Meter); err != nil {
		return err
	}
	recoverer := recovery.NewWorker(recovery.DefaultConfig(), recoveries, deliveries, eps, logger, nil, sender.Nudge)
	fanout := &events.Fanout{Endpoints: eps, Deliveries: deliveries, Logger: logger, Now: time.Now, Scheduled: sender.Nudge}
	consumer, err := kafka.NewConsumer(kafka.ConsumerConfig{
		Brokers: cfg.Service.KafkaBrokers, Security: cfg.Service.KafkaSecurity, ClientID: "webhooks", GroupID: cfg.ConsumerGroup, Topic: events.Topic,
		CommitInterval: cfg.Service.KafkaCommitInterval,
	}, fanout.Handle, producer, logger, base.Telemetry.Tracer)
	if err != nil {
		return err
	}
	if err := consumer.ObserveLag(base.Telemetry.Meter); err != nil {
		return err
	}

	idempotent, err := idempotency.NewJournal(rdb, idempotency.DefaultConfig("pc:wh"), logger)
	if err != nil {
		return err
	}
	srv := base.Server(httpapi.Problem, base.KafkaCheck(), httpserver.Check{Name: "case-events-consumer", Probe: consumer.Probe, Advisory: true})
	useCases := selfservice.New(selfservice.Deps{
		Endpoints:  eps,
		Deliveries: deliveries,
		Recoveries: recoveries,
		URLRules:   endpoints.URLRules{AllowHTTP: cfg.AllowHTTP, CheckAddr: policy.CheckFor},
		Health:     cfg.Dispatch.Health,
		EventTypes: httpapi.EventTypes,
		Logger:     logger,
	})
	httpapi.Register(srv.Router(), httpapi.Deps{
		Credentials: base.Credentials(),
		UseCases:    useCases,
		Journal:     idempotent,
		Keys:        ring,
	})

	return lifecycle.Run(ctx, logger,
		lifecycle.Component{Name: "http", Run: srv.Run},
		lifecycle.Component{Name: "case-events-consumer", Run: consumer.Run},
		lifecycle.Component{Name: "sender", Run: sender.Run},
		lifecycle.Component{Name: "recovery-worker", Run: recoverer.Run},
		lifecycle.Component{Name: "signing-keys", Run: func(ctx context.Context) error { return ring.Watch(ctx, cfg.KeyReload) }},
	)
}

// loadKeys reads the signing keys, reloaded from their directory while the
// service runs, or in development makes throwaway ones and says so loudly:
// nothing outside this process can verify them later.
func loadKeys(cfg config, logger *slog.Logger) (*keys.Live, error) {
	var ring *keys.Live
	if cfg.SigningKeysDir != "" {
		var err error
		if ring, err = keys.NewLive(cfg.Keys, cfg.SigningKeysDir, logger); err != nil {
			return nil, err
		}
	} else {
		ks, err := keys.Ephemeral(time.Now())
		if err != nil {
			return nil, err
		}
		logger.Warn("EPHEMERAL WEBHOOK SIGNING KEYS: generated at start for development; every restart publishes new keys; never use in production")
		r, err := keys.New(cfg.Keys, ks...)
		if err != nil {
			return nil, err
		}
		ring = keys.Static(r, logger)
	}
	now := time.Now()
	for _, env := range []signature.Environment{signature.Live, signature.Sandbox} {
		for _, st := range ring.States(env, now) {
			logger.Info("webhook signing key", "environment", env, "kid", st.ID, "state", st.State)
		}
		if _, err := ring.Signer(env, now); err != nil {
			logger.Warn("no active webhook signing key; deliveries of this environment wait", "environment", env)
		}
	}
	return ring, nil
}
