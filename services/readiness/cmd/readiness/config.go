package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/services/readiness/internal/store"
)

// config is everything the service reads from its environment.
type config struct {
	Service service.Config

	Enabled           bool
	PublicURL         string
	PayTo             string
	Networks          []string
	MaxTimeoutSeconds int

	FacilitatorURL     string
	FacilitatorAuth    envconf.Secret
	FacilitatorTimeout time.Duration

	PayerCap          store.Cap
	GlobalCap         store.Cap
	Lease             time.Duration
	ReconcileInterval time.Duration
}

func loadConfig(getenv func(string) string) (config, error) {
	r := envconf.New(getenv)
	cfg := config{
		Service: service.ConfigFromEnv(r, ":8081"),

		Enabled:   r.Bool("READINESS_ENABLED", true),
		PublicURL: r.String("READINESS_PUBLIC_URL", ""),
		// No default payee: money must never flow to an address nobody chose.
		PayTo:             r.String("READINESS_PAY_TO", ""),
		Networks:          r.List("READINESS_NETWORKS", []string{"eip155:84532", "eip155:8453"}),
		MaxTimeoutSeconds: r.Int("READINESS_MAX_TIMEOUT_SECONDS", 60),

		FacilitatorURL:     r.String("FACILITATOR_URL", "http://127.0.0.1:8085"),
		FacilitatorAuth:    r.Secret("FACILITATOR_AUTH_HEADER"),
		FacilitatorTimeout: r.Duration("FACILITATOR_TIMEOUT", 10*time.Second),

		PayerCap:          store.Cap{Limit: r.Int("READINESS_PAYER_CAP", 120), Window: r.Duration("READINESS_PAYER_CAP_WINDOW", time.Minute)},
		GlobalCap:         store.Cap{Limit: r.Int("READINESS_GLOBAL_CAP", 60000), Window: r.Duration("READINESS_GLOBAL_CAP_WINDOW", time.Minute)},
		Lease:             r.Duration("READINESS_PAYMENT_LEASE", 30*time.Second),
		ReconcileInterval: r.Duration("READINESS_RECONCILE_INTERVAL", 5*time.Second),
	}
	errs := []error{r.Err(), cfg.Service.Validate()}
	if cfg.PayTo == "" {
		errs = append(errs, errors.New("READINESS_PAY_TO must name the address that receives payments"))
	}
	if cfg.FacilitatorTimeout <= 0 || cfg.Lease <= cfg.FacilitatorTimeout {
		errs = append(errs, errors.New("READINESS_PAYMENT_LEASE must exceed FACILITATOR_TIMEOUT, so a live request is never reconciled under it"))
	}
	if cfg.ReconcileInterval <= 0 {
		errs = append(errs, errors.New("READINESS_RECONCILE_INTERVAL must be positive"))
	}
	if err := errors.Join(errs...); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}
