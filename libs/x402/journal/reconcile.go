package journal

import (
	"context"
	"time"

	"github.com/pcourt/pcourt/libs/x402"
)

// ReconcileOnce finishes the owner's payments nobody is waiting for, shard
// by shard: a settlement whose outcome is unknown (pending, or settling
// past its lease) is asked of the facilitator again, which answers a
// repeat with the original outcome; a settled payment not yet fulfilled is
// handed to fulfil, then marked fulfilled. fulfil may be nil when
// FulfilledOnSettle is set. It returns how many payments it finished.
func (j *Journal) ReconcileOnce(ctx context.Context, now time.Time, fulfil func(context.Context, Record) error) (int, error) {
	done := 0
	for _, tag := range Sharding.Tags() {
		due, err := j.due(ctx, tag, now, 100)
		if err != nil {
			return done, err
		}
		for _, r := range due {
			if err := j.finish(ctx, r, fulfil); err != nil {
				j.logger.WarnContext(ctx, "reconciling payment failed; retrying on the next pass", "payment", r.ID, "ref", r.Ref, "err", err)
				continue
			}
			done++
		}
	}
	return done, nil
}

func (j *Journal) finish(ctx context.Context, r Record, fulfil func(context.Context, Record) error) error {
	if r.State == Settling || r.State == Pending {
		s, err := j.facilitator.Settle(ctx, x402.SettleRequest{X402Version: x402.Version, PaymentPayload: r.Payment, PaymentRequirements: r.Offer})
		if err != nil {
			return err
		}
		if err := j.record(ctx, r, s, true); err != nil {
			return err
		}
		j.logger.InfoContext(ctx, "payment reconciled", "payment", r.ID, "ref", r.Ref, "success", s.Success, "reason", s.ErrorReason)
		if !s.Success || j.cfg.FulfilledOnSettle {
			return nil
		}
		if r, err = j.Get(ctx, r.ID); err != nil {
			return err
		}
	}
	if r.State != Settled {
		return nil
	}
	if fulfil != nil {
		if err := fulfil(ctx, r); err != nil {
			return err
		}
	}
	return j.Fulfilled(ctx, r.ID)
}

// RunReconciler reconciles every interval until ctx is cancelled.
func (j *Journal) RunReconciler(ctx context.Context, interval time.Duration, fulfil func(context.Context, Record) error) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if _, err := j.ReconcileOnce(ctx, time.Now(), fulfil); err != nil && ctx.Err() == nil {
				j.logger.ErrorContext(ctx, "reconciliation pass failed", "err", err)
			}
		}
	}
}
