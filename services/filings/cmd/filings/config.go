package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/service"
)

// config is everything the service reads from its environment.
type config struct {
	Service service.Config

	FeesPayTo             string
	FeesNetworks          []string
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

		// Without a payee, fees cannot be paid with x402 and are invoiced.
		FeesPayTo:             r.String("FEES_PAY_TO", ""),
		FeesNetworks:          r.List("FEES_NETWORKS", []string{"eip155:84532", "eip155:8453"}),
		FeesMaxTimeoutSeconds: r.Int("FEES_MAX_TIMEOUT_SECONDS", 300),
		FeePaymentLease:       r.Duration("FEE_PAYMENT_LEASE", 30*time.Second),
		FeeReconcileInterval:  r.Duration("FEE_RECONCILE_INTERVAL", 5*time.Second),
		FacilitatorURL:        r.String("FACILITATOR_URL", "http://127.0.0.1:8085"),
		FacilitatorAuth:       r.Secret("FACILITATOR_AUTH_HEADER"),
		FacilitatorTimeout:    r.Duration("FACILITATOR_TIMEOUT", 10*time.Second),
	}
	errs := []error{r.Err(), cfg.Service.Validate()}
	if cfg.FeesPayTo != "" && (!strings.HasPrefix(cfg.FeesPayTo, "0x") || !common.IsHexAddress(cfg.FeesPayTo)) {
		errs = append(errs, fmt.Errorf("FEES_PAY_TO=%q is not a 0x address", cfg.FeesPayTo))
	}
	if cfg.FeePaymentLease <= cfg.FacilitatorTimeout || cfg.FeeReconcileInterval <= 0 {
		errs = append(errs, errors.New("FEE_PAYMENT_LEASE must exceed FACILITATOR_TIMEOUT and FEE_RECONCILE_INTERVAL be positive"))
	}
	if err := errors.Join(errs...); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}
