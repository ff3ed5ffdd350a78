package main

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/services/webhooks/internal/dispatch"
	"github.com/pcourt/pcourt/services/webhooks/internal/keys"
	"github.com/pcourt/pcourt/services/webhooks/internal/store"
)

// config is everything the service reads from its environment.
type config struct {
	Service service.Config

	// SigningKeysDir holds <kid>.pem or <kid>.seed files (a mounted Secret).
	SigningKeysDir string
	// DevEphemeralKeys generates throwaway keys at start when no directory
	// is set; development only.
	DevEphemeralKeys bool
	Keys             keys.Config
	// KeyReload is how often the key directory is read again: a rotated
	// Secret takes effect within it (plus the kubelet's sync delay).
	KeyReload time.Duration
	// AllowHTTP lets sandbox endpoints use http:// (never live).
	AllowHTTP bool
	// EgressAllow lists CIDRs deliveries may reach although they are
	// internal (dev: 127.0.0.0/8). Empty by default.
	EgressAllow   []netip.Prefix
	Dispatch      dispatch.Config
	Deliveries    store.DeliveriesConfig
	ConsumerGroup string
}

func loadConfig(getenv func(string) string) (config, error) {
	r := envconf.New(getenv)
	d := dispatch.DefaultConfig()
	d.Timeout = r.Duration("WEBHOOK_ATTEMPT_TIMEOUT", d.Timeout)
	d.Lease = r.Duration("WEBHOOK_SEND_LEASE", d.Lease)
	d.Concurrency = r.Int("WEBHOOK_SEND_CONCURRENCY", d.Concurrency)
	d.Health.DisableAfter = r.Duration("WEBHOOK_DISABLE_AFTER", d.Health.DisableAfter)
	// The retry schedule, the sender's poll and the breaker keep their
	// deployed defaults; a test stack (the console's) shortens them to see
	// deliveries fail for good within seconds.
	d.Poll = r.Duration("WEBHOOK_SEND_POLL", d.Poll)
	d.Schedule.MaxAttempts = r.Int("WEBHOOK_MAX_ATTEMPTS", d.Schedule.MaxAttempts)
	d.Schedule.Base = r.Duration("WEBHOOK_RETRY_BASE", d.Schedule.Base)
	d.Breaker.FailureThreshold = r.Int("WEBHOOK_BREAKER_THRESHOLD", d.Breaker.FailureThreshold)
	kc := keys.DefaultConfig(d.RetryHorizon())
	kc.LeadTime = r.Duration("WEBHOOK_KEY_LEAD_TIME", kc.LeadTime)
	kc.RetiredGrace = r.Duration("WEBHOOK_KEY_RETIRED_GRACE", kc.RetiredGrace)
	dc := store.DefaultDeliveriesConfig()
	dc.Shards = r.Int("WEBHOOK_SCHEDULE_SHARDS", dc.Shards)
	dc.Retention = r.Duration("WEBHOOK_DELIVERY_RETENTION", dc.Retention)
	cfg := config{
		Service:          service.ConfigFromEnv(r, ":8084"),
		SigningKeysDir:   r.String("WEBHOOK_SIGNING_KEYS_DIR", ""),
		DevEphemeralKeys: r.Bool("WEBHOOK_DEV_EPHEMERAL_KEYS", false),
		Keys:             kc,
		KeyReload:        r.Duration("WEBHOOK_KEY_RELOAD", 30*time.Second),
		AllowHTTP:        r.Bool("WEBHOOK_ALLOW_HTTP_SANDBOX", false),
		Dispatch:         d,
		Deliveries:       dc,
		ConsumerGroup:    r.String("WEBHOOK_CONSUMER_GROUP", "webhooks"),
	}
	errs := []error{r.Err(), cfg.Service.Validate(), cfg.Dispatch.Validate(), cfg.Keys.Validate(d.RetryHorizon())}
	for _, s := range r.List("WEBHOOK_EGRESS_ALLOW_CIDRS", nil) {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("WEBHOOK_EGRESS_ALLOW_CIDRS: %w", err))
			continue
		}
		cfg.EgressAllow = append(cfg.EgressAllow, p.Masked())
	}
	if cfg.SigningKeysDir == "" && !cfg.DevEphemeralKeys {
		errs = append(errs, errors.New("WEBHOOK_SIGNING_KEYS_DIR is required (or WEBHOOK_DEV_EPHEMERAL_KEYS=true in development)"))
	}
	if cfg.KeyReload < time.Second {
		errs = append(errs, errors.New("WEBHOOK_KEY_RELOAD must be at least 1s"))
	}
	if dc.Shards < 1 || dc.Retention < 24*time.Hour {
		errs = append(errs, errors.New("WEBHOOK_SCHEDULE_SHARDS must be positive and WEBHOOK_DELIVERY_RETENTION at least 24h"))
	}
	if err := errors.Join(errs...); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}
