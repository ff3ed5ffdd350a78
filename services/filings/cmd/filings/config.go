package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/libs/x402"
)

// config is everything the service reads from its environment.
type config struct {
	Service service.Config
	// Shards is how many hash tags drafts are spread over (FILINGS_SHARDS,
	// 1..1024): part of the data layout, changed only by `filings reshard`
	// (docs/redis.md).
	Shards int

	PublicBase            x402.PublicBase
	FeesPayTo             string
	FeesNetworks          map[string][]string // by environment
	FeesMaxTimeoutSeconds int
	FeePaymentLease       time.Duration
	FeeReconcileInterval  time.Duration
	FacilitatorURL        string
	FacilitatorAuth       envconf.Secret
	FacilitatorTimeout    time.Duration
}

func loadConfig(getenv func(string) string) (config, error) {
	r := envconf.New(getenv)
	cfg := config{
		Service: service.ConfigFromEnv(r, ":8082"),
		Shards:  r.Int("FILINGS_SHARDS", outbox.DefaultShards),

		// Without a payee, fees cannot be paid with x402 and are invoiced.
		FeesPayTo: r.String("FEES_PAY_TO", ""),
		FeesNetworks: map[string][]string{
			x402.EnvironmentSandbox: r.List("FEES_SANDBOX_NETWORKS", x402.DefaultNetworks(x402.EnvironmentSandbox)),
			x402.EnvironmentLive:    r.List("FEES_LIVE_NETWORKS", x402.DefaultNetworks(x402.EnvironmentLive)),
		},
		FeesMaxTimeoutSeconds: r.Int("FEES_MAX_TIMEOUT_SECONDS", 300),
		FeePaymentLease:       r.Duration("FEE_PAYMENT_LEASE", 30*time.Second),
		FeeReconcileInterval:  r.Duration("FEE_RECONCILE_INTERVAL", 5*time.Second),
		FacilitatorURL:        r.String("FACILITATOR_URL", "http://127.0.0.1:8085"),
		FacilitatorAuth:       r.Secret("FACILITATOR_AUTH_HEADER"),
		FacilitatorTimeout:    r.Duration("FACILITATOR_TIMEOUT", 10*time.Second),
	}
	publicBase, err := x402.ParsePublicBase(r.String("PUBLIC_BASE_URL", x402.DefaultPublicBaseURL))
	cfg.PublicBase = publicBase
	errs := []error{r.Err(), cfg.Service.Validate()}
	if err != nil {
		errs = append(errs, fmt.Errorf("PUBLIC_BASE_URL: %w", err))
	}
	// A draft's fee is offered and accepted on its environment's networks
	// only: test tokens never pay a live fee, real money never a sandbox one.
	for _, env := range []string{x402.EnvironmentSandbox, x402.EnvironmentLive} {
		if err := x402.CheckNetworks(env, cfg.FeesNetworks[env]); err != nil {
			errs = append(errs, fmt.Errorf("FEES_%s_NETWORKS: %w", strings.ToUpper(env), err))
		}
	}
	if cfg.FeesPayTo != "" && (!strings.HasPrefix(cfg.FeesPayTo, "0x") || !common.IsHexAddress(cfg.FeesPayTo)) {
		errs = append(errs, fmt.Errorf("FEES_PAY_TO=%q is not a 0x address", cfg.FeesPayTo))
	}
	if cfg.Shards < 1 || cfg.Shards > 1024 {
		errs = append(errs, fmt.Errorf("FILINGS_SHARDS must be in 1..1024, got %d", cfg.Shards))
	}
	if cfg.FeePaymentLease <= cfg.FacilitatorTimeout || cfg.FeeReconcileInterval <= 0 {
		errs = append(errs, errors.New("FEE_PAYMENT_LEASE must exceed FACILITATOR_TIMEOUT and FEE_RECONCILE_INTERVAL be positive"))
	}
	if err := errors.Join(errs...); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}
