package main

import (
	"crypto/ecdsa"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
	"github.com/pcourt/pcourt/services/cases/internal/rails"
)

// refundRailConfig configures the x402r refund rail (docs/executions.md).
// The rail is optional: without an operator key it is off, and executions
// in the x402r mode are refused as unavailable rather than faked.
type refundRailConfig struct {
	// OperatorKey is the refund operator's secp256k1 private key, 64 hex
	// digits with or without 0x (X402R_OPERATOR_KEY). Empty: the rail is off.
	OperatorKey envconf.Secret
	// Networks are the CAIP-2 networks refunds are paid on
	// (X402R_NETWORKS); the operator must hold USDC on each.
	Networks []string
	// The facilitator refunds settle through, configured as filings
	// configures its own (FACILITATOR_URL, FACILITATOR_AUTH_HEADER,
	// FACILITATOR_TIMEOUT). The URL has no default here: a rail that pays
	// must name where it pays.
	FacilitatorURL     string
	FacilitatorAuth    envconf.Secret
	FacilitatorTimeout time.Duration
}

func refundRailFromEnv(r *envconf.Reader) refundRailConfig {
	return refundRailConfig{
		OperatorKey:        r.Secret("X402R_OPERATOR_KEY"),
		Networks:           r.List("X402R_NETWORKS", x402.DefaultNetworks(x402.EnvironmentSandbox)),
		FacilitatorURL:     r.String("FACILITATOR_URL", ""),
		FacilitatorAuth:    r.Secret("FACILITATOR_AUTH_HEADER"),
		FacilitatorTimeout: r.Duration("FACILITATOR_TIMEOUT", facilitator.DefaultClientTimeout),
	}
}

// enabled reports whether the rail is configured.
func (c refundRailConfig) enabled() bool { return c.OperatorKey.Reveal() != "" }

// Validate reports an unusable rail configuration; an absent one is fine.
func (c refundRailConfig) Validate() error {
	if !c.enabled() {
		return nil
	}
	var errs []error
	key, err := c.operatorKey()
	if err != nil {
		errs = append(errs, err)
	}
	if err := (rails.Config{Networks: c.Networks}).Validate(); err != nil {
		errs = append(errs, fmt.Errorf("X402R_NETWORKS: %w", err))
	}
	if c.FacilitatorURL == "" {
		errs = append(errs, errors.New("FACILITATOR_URL is required when X402R_OPERATOR_KEY is set"))
	}
	if c.FacilitatorTimeout <= 0 {
		errs = append(errs, errors.New("FACILITATOR_TIMEOUT must be positive"))
	}
	// The public development keys belong to everyone: money on a main
	// network must never sit behind one.
	if key != nil && isDevKey(key) {
		for _, n := range c.Networks {
			if a, ok := x402.USDC(n); ok && !a.Testnet {
				errs = append(errs, fmt.Errorf("X402R_OPERATOR_KEY is a public development key; it may not refund on %s", n))
			}
		}
	}
	return errors.Join(errs...)
}

func (c refundRailConfig) operatorKey() (*ecdsa.PrivateKey, error) {
	key, err := crypto.HexToECDSA(strings.TrimPrefix(c.OperatorKey.Reveal(), "0x"))
	if err != nil {
		// The cause would quote the key's digits; it is not repeated.
		return nil, errors.New("X402R_OPERATOR_KEY is not a secp256k1 private key in hex")
	}
	return key, nil
}

func isDevKey(key *ecdsa.PrivateKey) bool {
	addr := crypto.PubkeyToAddress(key.PublicKey)
	for _, a := range localfacilitator.DevAccounts() {
		if a.Address == addr {
			return true
		}
	}
	return false
}

// newRefundRail returns the x402r refund rail, or nil when it is not
// configured. cfg has been validated. A caller that keeps it behind an
// interface must keep nil as a nil interface, not as a typed nil pointer,
// or "off" would look configured.
func newRefundRail(cfg refundRailConfig, logger *slog.Logger) (*rails.X402Refunds, error) {
	if !cfg.enabled() {
		logger.Info("x402r refund rail off: X402R_OPERATOR_KEY is not set; x402r executions answer unavailable")
		return nil, nil
	}
	key, err := cfg.operatorKey()
	if err != nil {
		return nil, err
	}
	client, err := facilitator.NewClient(facilitator.ClientConfig{
		BaseURL: cfg.FacilitatorURL, Authorization: cfg.FacilitatorAuth, Timeout: cfg.FacilitatorTimeout,
	})
	if err != nil {
		return nil, err
	}
	rail, err := rails.NewX402Refunds(rails.Config{Networks: cfg.Networks}, client, key)
	if err != nil {
		return nil, err
	}
	logger.Info("x402r refund rail on", "operator", rail.Operator(), "networks", cfg.Networks, "facilitator", cfg.FacilitatorURL)
	return rail, nil
}
