// Command cases owns opened cases: the /api/cases, /api/v2/cases and /api/disputes routes, the rules,
// and the hosted respondent page under /respond.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/objectstore"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/reshard"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/services/cases/internal/afterawardflow"
	"github.com/pcourt/pcourt/services/cases/internal/archiveflow"
	"github.com/pcourt/pcourt/services/cases/internal/awardkeys"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/events"
	"github.com/pcourt/pcourt/services/cases/internal/evidenceflow"
	"github.com/pcourt/pcourt/services/cases/internal/httpapi"
	"github.com/pcourt/pcourt/services/cases/internal/respond"
	"github.com/pcourt/pcourt/services/cases/internal/settlementflow"
	"github.com/pcourt/pcourt/services/cases/internal/store"
	"github.com/pcourt/pcourt/services/cases/internal/tribunalflow"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) > 1 && os.Args[1] == "reshard" { // a one-off: docs/redis.md, Resharding
		if err := reshard.Command(ctx, "cases", os.Args[2:], os.Getenv, os.Stdout, store.Reshard); err != nil {
			fmt.Fprintf(os.Stderr, "cases reshard: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "cases: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	base, err := service.Start(ctx, service.Options{
		Name: "cases", Version: version, Config: cfg.Service, FullConfig: cfg, Getenv: getenv, Stdout: stdout,
	})
	if err != nil {
		return err
	}
	defer base.Close()
	logger, rdb := base.Logger, base.Redis

	producer, err := kafka.NewProducer(kafka.ProducerConfig{Brokers: cfg.Service.KafkaBrokers, Security: cfg.Service.KafkaSecurity, ClientID: "cases", TracerProvider: base.Telemetry.Tracer})
	if err != nil {
		return err
	}
	defer producer.Close()
	cases, err := store.NewCases(rdb, cfg.Shards, base.Durable)
	if err != nil {
		return err
	}
	// The case list's index is written with every change; a store from
	// before it gets its existing cases indexed once.
	if err := cases.IndexExisting(ctx); err != nil {
		return err
	}
	// One use-case layer serves every way in: the case-opened consumer
	// opens through it, the API and the hosted page act through it.
	flow := caseflow.New(cases, nil)
	relayRedis, err := base.RelayRedis(cases.Sharding())
	if err != nil {
		return err
	}
	relay, err := outbox.NewRelay(relayRedis, producer, outbox.DefaultRelayConfig(cases.Sharding(), cfg.Service.PodName), logger, base.Telemetry.Tracer)
	if err != nil {
		return err
	}
	if err := outbox.ObserveBacklog(rdb, cases.Sharding(), base.Telemetry.Meter); err != nil {
		return err
	}
	opened, err := kafka.NewConsumer(kafka.ConsumerConfig{
		Brokers: cfg.Service.KafkaBrokers, Security: cfg.Service.KafkaSecurity, ClientID: "cases", GroupID: cfg.CaseOpenedGroup, Topic: api.CaseOpenedTopic,
		CommitInterval: cfg.Service.KafkaCommitInterval,
	}, events.NewOpened(flow, logger).Handle, producer, logger, base.Telemetry.Tracer)
	if err != nil {
		return err
	}
	if err := opened.ObserveLag(base.Telemetry.Meter); err != nil {
		return err
	}
	// Awards are signed with the ring's current key; every key it ever
	// used stays published at GET /api/awards/keys.
	keys, err := awardkeys.Load(ctx, rdb, cfg.AwardKeys, time.Now())
	if err != nil {
		return err
	}
	// The decision acts through the same flow; its deadlines (assignment
	// from the tribunal pool, review windows) join the procedure's scan.
	decision := tribunalflow.New(flow, cases, base.Credentials(), keys, nil)
	// Exhibits' files live in object storage; Redis keeps their metadata
	// and digests, in the case record.
	files, err := objectstore.New(ctx, cfg.Evidence)
	if err != nil {
		return err
	}
	logger.Info("evidence store", "store", cfg.Evidence.Describe(), "spool", cfg.SpoolDir)
	// Closed cases are archived out of Redis into the same store after
	// their retention (docs/archiving.md); the store reads them back
	// through the same Load, so every route serves them as before.
	cases.ReadArchivesFrom(files)
	archiver := archiveflow.New(cases, files, cfg.Archive, cfg.Service.PodName, logger, nil)
	exhibits := evidenceflow.New(flow, cases, files, cfg.SpoolDir, nil)
	// After the award: post-award requests, finality (its Ticker joins
	// the scan) and executions. The x402r rail refunds an award's payment
	// to the original payer; without one configured the x402r mode is
	// unavailable (a nil interface, never a typed nil).
	refundRail, err := newRefundRail(cfg.Refunds, logger)
	if err != nil {
		return err
	}
	var refunds afterawardflow.Refunds
	if refundRail != nil {
		refunds = refundRail
	}
	// Appeal fees are paid through the platform's one x402 settlement
	// journal (or invoiced when no payee is configured).
	feeJournal, err := newAppealFeeJournal(cfg.AppealFees, rdb, base.Durable, logger)
	if err != nil {
		return err
	}
	var payments afterawardflow.Payments
	if feeJournal != nil {
		payments = feeJournal
	}
	afterAward := afterawardflow.New(afterawardflow.Config{Flow: flow, Cases: cases, Tribunal: decision, Refunds: refunds,
		Payments: payments, Fees: cfg.AppealFees.fees()})
	// Settlement binding: its record's consent award has its artifacts made
	// by the decision, as every award's are. Its reviewer is assigned by
	// the decision's ticker.
	settled := settlementflow.New(flow, decision, nil)
	scheduler := caseflow.NewScheduler(cases, cfg.Scheduler, logger, nil, decision.Ticker(), afterAward.Ticker())
	if err := scheduler.Instrument(base.Telemetry.Meter); err != nil {
		return err
	}

	idempotent, err := idempotency.NewJournal(rdb, cfg.Idempotency, logger)
	if err != nil {
		return err
	}
	srv := base.Server(httpapi.Problem, base.KafkaCheck(), httpserver.Check{Name: "case-opened-consumer", Probe: opened.Probe, Advisory: true})
	httpapi.Register(srv.Router(), httpapi.Deps{
		Credentials: base.Credentials(),
		Cases:       cases,
		Flow:        flow,
		Journal:     idempotent,
		Logger:      logger,
		Tribunal:    decision,
		AwardKeys:   keys,
		Evidence:    exhibits,
		Signer:      keys,
		AfterAward:  afterAward,
		PublicBase:  cfg.PublicBase,
		Settlement:  settled,
	})
	// The hosted respondent page acts through the same flow as the API, so
	// the docket records the same events whichever way the respondent came.
	if err := respond.Register(srv.Router(), cfg.Respond, respond.Deps{Cases: cases, Flow: flow, Logger: logger, Exhibits: exhibits, Credentials: base.Credentials()}); err != nil {
		return err
	}
	components := []lifecycle.Component{
		{Name: "http", Run: srv.Run},
		{Name: "case-opened-consumer", Run: opened.Run},
		{Name: "deadline-scheduler", Run: scheduler.Run},
		{Name: "outbox-relay", Run: relay.Run},
		{Name: "case-archiver", Run: archiver.Run},
	}
	if feeJournal != nil {
		components = append(components, lifecycle.Component{Name: "fee-reconciler", Run: runFeeReconciler(feeJournal, afterAward, cfg.AppealFees.ReconcileInterval)})
	}
	return lifecycle.Run(ctx, logger, components...)
}
