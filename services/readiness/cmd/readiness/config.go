package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/readiness/internal/store"
)

// config is everything the service reads from its environment.
type config struct {
	Service service.Config

	Enabled    bool
	PublicBase x402.PublicBase
	// Environment is sandbox or live: the report is unauthenticated, so
	// the deployment, not a credential, decides which networks it takes.
	Environment       string
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

		Enabled:     r.Bool("READINESS_ENABLED", true),
		Environment: r.String("READINESS_ENVIRONMENT", x402.EnvironmentSandbox),
		// No default payee: money must never flow to an address nobody chose.
		PayTo:             r.String("READINESS_PAY_TO", ""),
		MaxTimeoutSeconds: r.Int("READINESS_MAX_TIMEOUT_SECONDS", 60),

		FacilitatorURL:     r.String("FACILITATOR_URL", "http://127.0.0.1:8085"),
		FacilitatorAuth:    r.Secret("FACILITATOR_AUTH_HEADER"),
		FacilitatorTimeout: r.Duration("FACILITATOR_TIMEOUT", 10*time.Second),

		PayerCap:          store.Cap{Limit: r.Int("READINESS_PAYER_CAP", 120), Window: r.Duration("READINESS_PAYER_CAP_WINDOW", time.Minute)},
		GlobalCap:         store.Cap{Limit: r.Int("READINESS_GLOBAL_CAP", 60000), Window: r.Duration("READINESS_GLOBAL_CAP_WINDOW", time.Minute)},
		Lease:             r.Duration("READINESS_PAYMENT_LEASE", 30*time.Second),
		ReconcileInterval: r.Duration("READINESS_RECONCILE_INTERVAL", 5*time.Second),
	}
	cfg.Networks = r.List("READINESS_NETWORKS", x402.DefaultNetworks(cfg.Environment))
	publicBase, err := x402.ParsePublicBase(r.String("PUBLIC_BASE_URL", x402.DefaultPublicBaseURL))
	cfg.PublicBase = publicBase
	errs := []error{r.Err(), cfg.Service.Validate()}
	if err != nil {
		errs = append(errs, fmt.Errorf("PUBLIC_BASE_URL: %w", err))
	}
	if err := x402.CheckNetworks(cfg.Environment, cfg.Networks); err != nil {
		errs = append(errs, fmt.Errorf("READINESS_ENVIRONMENT and READINESS_NETWORKS: %w", err))
	}
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
