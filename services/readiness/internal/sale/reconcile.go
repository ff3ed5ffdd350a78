package sale

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/readiness/internal/store"
)

// ReconcileOnce asks the facilitator again about every payment whose
// settlement outcome is unknown and whose reconcile time has come (pending
// payments, and settling payments whose request outlived its lease), and
// records the answers. It returns how many it resolved.
func (s *Seller) ReconcileOnce(ctx context.Context) (int, error) {
	resolved := 0
	for _, tag := range store.ShardTags() {
		due, err := s.payments.DueForReconciliation(ctx, tag, s.now(), 100)
		if err != nil {
			return resolved, err
		}
		for _, u := range due {
			ok, err := s.reconcile(ctx, u)
			if err != nil {
				s.logger.WarnContext(ctx, "reconciling payment failed; retrying on the next pass", "payment", u.ID, "err", err)
				continue
			}
			if ok {
				resolved++
			}
		}
	}
	return resolved, nil
}

func (s *Seller) reconcile(ctx context.Context, u store.Unfinished) (bool, error) {
	var offer x402.PaymentRequirements
	var payment x402.PaymentPayload
	if err := json.Unmarshal(u.Requirements, &offer); err != nil {
		return false, fmt.Errorf("decoding stored offer: %w", err)
	}
	if err := json.Unmarshal(u.Payload, &payment); err != nil {
		return false, fmt.Errorf("decoding stored payment: %w", err)
	}
	// Settle is idempotent per authorization: if the first attempt reached
	// the facilitator, this returns its outcome instead of settling again.
	settlement, err := s.facilitator.Settle(ctx, x402.SettleRequest{X402Version: x402.Version, PaymentPayload: payment, PaymentRequirements: offer})
	if err != nil {
		return false, err
	}
	if _, err := s.record(ctx, u.ID, u.Fingerprint, settlement, true); err != nil {
		return false, err
	}
	s.logger.InfoContext(ctx, "payment reconciled", "payment", u.ID, "success", settlement.Success, "reason", settlement.ErrorReason)
	return true, nil
}

// RunReconciler reconciles every interval until ctx is cancelled.
func (s *Seller) RunReconciler(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if _, err := s.ReconcileOnce(ctx); err != nil && ctx.Err() == nil {
				s.logger.ErrorContext(ctx, "reconciliation pass failed", "err", err)
			}
		}
	}
}
