// Package webhookstest runs the real webhooks service in-process for the
// tests of other modules (the partner console's): its public HTTP API, a
// sender, a recovery worker and the case-event fan-out, over the caller's
// Redis and credential store. Nothing is imitated: the routes, checks,
// storage, signing and HTTP attempts are the service's own. What differs
// from a deployment is said on Options.
package webhookstest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/kafka"
	"github.com/pcourt/pcourt/services/webhooks/internal/dispatch"
	"github.com/pcourt/pcourt/services/webhooks/internal/egress"
	"github.com/pcourt/pcourt/services/webhooks/internal/endpoints"
	"github.com/pcourt/pcourt/services/webhooks/internal/events"
	"github.com/pcourt/pcourt/services/webhooks/internal/httpapi"
	"github.com/pcourt/pcourt/services/webhooks/internal/keys"
	"github.com/pcourt/pcourt/services/webhooks/internal/recovery"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// Options are a test's departures from the deployed defaults.
type Options struct {
	// Attempts is how many attempts a delivery gets (default 17), and
	// RetryBase the wait before the first retry (default 30 s): a test
	// lowers both to see deliveries fail for good within seconds.
	Attempts  int
	RetryBase time.Duration
	// Logger receives the service's logs; nil discards them.
	Logger *slog.Logger
}

// Service is a running webhooks service.
type Service struct {
	// URL is the base URL of its HTTP API (/api/webhooks/... under it).
	URL    string
	fanout *events.Fanout
}

// Start runs the service until the test ends. Sandbox endpoints may use
// http:// and deliveries may reach 127.0.0.0/8, where a test's receivers
// listen; the signing keys are ephemeral; the sender polls every 50 ms; the
// breaker opens only after 1000 consecutive failures, so a test's retries
// are not held back.
func Start(t testing.TB, rdb redis.UniversalClient, creds *auth.Store, opts Options) *Service {
	t.Helper()
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cfg := dispatch.DefaultConfig()
	cfg.Poll = 50 * time.Millisecond
	cfg.Breaker.FailureThreshold = 1000
	if opts.Attempts > 0 {
		cfg.Schedule.MaxAttempts = opts.Attempts
	}
	if opts.RetryBase > 0 {
		cfg.Schedule.Base = opts.RetryBase
		cfg.Schedule.MaxDelay = max(cfg.Schedule.MaxDelay, opts.RetryBase)
		cfg.Schedule.MinAfterThrottle = opts.RetryBase
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("webhookstest: %v", err)
	}
	ks, err := keys.Ephemeral(time.Now())
	if err != nil {
		t.Fatalf("webhookstest: signing keys: %v", err)
	}
	ring, err := keys.New(keys.DefaultConfig(cfg.RetryHorizon()), ks...)
	if err != nil {
		t.Fatalf("webhookstest: key ring: %v", err)
	}
	eps := store.NewEndpoints(rdb)
	deliveries := store.NewDeliveries(rdb, store.DeliveriesConfig{Shards: 2, Retention: 24 * time.Hour})
	recoveries := store.NewRecoveries(rdb, 24*time.Hour)
	journal, err := idempotency.NewJournal(rdb, idempotency.DefaultConfig("pc:wh"), logger)
	if err != nil {
		t.Fatalf("webhookstest: idempotency journal: %v", err)
	}
	policy := egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	// The tests' receivers listen on loopback and stand for partners'
	// receivers on public addresses, whose answers a delivery record
	// keeps: the sender dials them without the dial guard, whose
	// allowlist would withhold their answers (the guard has its own tests
	// in this service and in tools/devstack). Like the guarded clients,
	// this one never follows a redirect.
	public := &http.Client{Timeout: cfg.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	sender := dispatch.New(cfg, deliveries, eps, ring, dispatch.Clients{Sandbox: public, Live: public}, logger, nil, nil)
	rcfg := recovery.DefaultConfig()
	rcfg.Poll = 50 * time.Millisecond
	worker := recovery.NewWorker(rcfg, recoveries, deliveries, eps, logger, nil, sender.Nudge)

	srv := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "webhooks", Logger: logger, Mapper: httpapi.Problem})
	httpapi.Register(srv.Router(), httpapi.Deps{
		Credentials: creds, Endpoints: eps, Deliveries: deliveries, Recoveries: recoveries, Journal: journal,
		URLRules: endpoints.URLRules{AllowHTTP: true, CheckAddr: policy.CheckFor},
		Keys:     ring, Logger: logger, Health: cfg.Health,
	})
	ts := httptest.NewServer(srv.Router())

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { _ = sender.Run(ctx); done <- struct{}{} }()
	go func() { _ = worker.Run(ctx); done <- struct{}{} }()
	t.Cleanup(func() {
		cancel()
		<-done
		<-done
		ts.Close()
	})
	return &Service{URL: ts.URL, fanout: &events.Fanout{Endpoints: eps, Deliveries: deliveries, Logger: logger, Now: time.Now, Scheduled: sender.Nudge}}
}

// Recipient is a partner an event is for.
type Recipient struct {
	Tenant, Environment, PartnerID string
}

// Event is a case event as the cases service publishes it.
type Event struct {
	EventID        string
	Sequence       int64
	Type           string // a case-event-v2 type: opened, answer_filed, ...
	CaseID         string
	ExternalCaseID string
	OccurredAt     time.Time
}

// Publish hands a pc.cases.events.v2 record to the service's fan-out, the
// handler its Kafka consumer calls: one delivery per subscribed, enabled
// endpoint of each recipient is scheduled and sent by the sender. The
// broker and the cases service are not part of this; the record is the one
// they carry (api/events/cases-event-envelope-v2.schema.json).
func (s *Service) Publish(ctx context.Context, ev Event, to ...Recipient) error {
	rs := make([]events.Recipient, 0, len(to))
	for _, r := range to {
		rs = append(rs, events.Recipient{Tenant: r.Tenant, Environment: r.Environment, PartnerID: r.PartnerID})
	}
	body, err := json.Marshal(events.Body{SchemaVersion: events.BodySchema, EventID: ev.EventID, Sequence: ev.Sequence, Type: ev.Type,
		OccurredAt: ev.OccurredAt.UTC().Format("2006-01-02T15:04:05.000Z"), CaseID: ev.CaseID, ExternalCaseID: ev.ExternalCaseID})
	if err != nil {
		return err
	}
	env, err := json.Marshal(events.Envelope{SchemaVersion: events.EnvelopeSchema, Recipients: rs, Event: body})
	if err != nil {
		return err
	}
	return s.fanout.Handle(ctx, kafka.Message{Topic: events.Topic, Key: ev.CaseID, EventID: ev.EventID, Schema: events.EnvelopeSchema, Value: env})
}
