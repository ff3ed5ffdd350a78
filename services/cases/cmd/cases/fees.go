package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/services/cases/internal/afterawardflow"
)

// appealFeeConfig configures collecting appeal fees with x402, with the
// settings filings reads for filing fees (FEES_*, FEE_*): one payee and
// one set of networks for every fee of the platform. Without FEES_PAY_TO
// appeal fees are invoiced (docs/after-award.md, "Appeals").
type appealFeeConfig struct {
	PayTo             string
	Networks          map[string][]string
	MaxTimeoutSeconds int
	PaymentLease      time.Duration
	ReconcileInterval time.Duration
	// The facilitator fees settle through (FACILITATOR_*), required with
	// a payee.
	FacilitatorURL     string
	FacilitatorAuth    envconf.Secret
	FacilitatorTimeout time.Duration
}

func appealFeesFromEnv(r *envconf.Reader) appealFeeConfig {
	return appealFeeConfig{
		PayTo: r.String("FEES_PAY_TO", ""),
		Networks: map[string][]string{
			x402.EnvironmentSandbox: r.List("FEES_SANDBOX_NETWORKS", x402.DefaultNetworks(x402.EnvironmentSandbox)),
			x402.EnvironmentLive:    r.List("FEES_LIVE_NETWORKS", x402.DefaultNetworks(x402.EnvironmentLive)),
		},
		MaxTimeoutSeconds:  r.Int("FEES_MAX_TIMEOUT_SECONDS", 300),
		PaymentLease:       r.Duration("FEE_PAYMENT_LEASE", 30*time.Second),
		ReconcileInterval:  r.Duration("FEE_RECONCILE_INTERVAL", 5*time.Second),
		FacilitatorURL:     r.String("FACILITATOR_URL", ""),
		FacilitatorAuth:    r.Secret("FACILITATOR_AUTH_HEADER"),
		FacilitatorTimeout: r.Duration("FACILITATOR_TIMEOUT", facilitator.DefaultClientTimeout),
	}
}

func (c appealFeeConfig) enabled() bool { return c.PayTo != "" }

// Validate reports an unusable configuration; an absent payee is fine.
func (c appealFeeConfig) Validate() error {
	if !c.enabled() {
		return nil
	}
	var errs []error
	if !strings.HasPrefix(c.PayTo, "0x") || !common.IsHexAddress(c.PayTo) {
		errs = append(errs, fmt.Errorf("FEES_PAY_TO=%q is not a 0x address", c.PayTo))
	}
	// Test tokens never pay a live fee, real money never a sandbox one.
	for _, env := range []string{x402.EnvironmentSandbox, x402.EnvironmentLive} {
		if err := x402.CheckNetworks(env, c.Networks[env]); err != nil {
			errs = append(errs, fmt.Errorf("FEES_%s_NETWORKS: %w", strings.ToUpper(env), err))
		}
	}
	if c.FacilitatorURL == "" {
		errs = append(errs, errors.New("FACILITATOR_URL is required when FEES_PAY_TO is set"))
	}
	if c.PaymentLease <= c.FacilitatorTimeout || c.ReconcileInterval <= 0 {
		errs = append(errs, errors.New("FEE_PAYMENT_LEASE must exceed FACILITATOR_TIMEOUT and FEE_RECONCILE_INTERVAL be positive"))
	}
	return errors.Join(errs...)
}

// fees returns the flow's fee configuration.
func (c appealFeeConfig) fees() afterawardflow.FeeConfig {
	return afterawardflow.FeeConfig{PayTo: c.PayTo, Networks: c.Networks, MaxTimeoutSeconds: c.MaxTimeoutSeconds}
}

// newAppealFeeJournal returns the settlement journal appeal fees are paid
// through, or nil when they are invoiced. cfg has been validated.
func newAppealFeeJournal(cfg appealFeeConfig, rdb redis.UniversalClient, durable *redisclient.Durable, logger *slog.Logger) (*journal.Journal, error) {
	if !cfg.enabled() {
		logger.Info("appeal fees invoiced: FEES_PAY_TO is not set")
		return nil, nil
	}
	client, err := facilitator.NewClient(facilitator.ClientConfig{
		BaseURL: cfg.FacilitatorURL, Authorization: cfg.FacilitatorAuth, Timeout: cfg.FacilitatorTimeout,
	})
	if err != nil {
		return nil, err
	}
	logger.Info("appeal fees paid with x402", "pay_to", cfg.PayTo, "facilitator", cfg.FacilitatorURL)
	return journal.New(journal.Config{Owner: afterawardflow.FeeOwner, Lease: cfg.PaymentLease, Durable: durable}, rdb, client, logger)
}

// runFeeReconciler finishes appeal fee payments nobody waits for.
func runFeeReconciler(payments *journal.Journal, flow *afterawardflow.Service, interval time.Duration) func(context.Context) error {
	return func(ctx context.Context) error { return payments.RunReconciler(ctx, interval, flow.FulfilFee) }
}
