package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
	"github.com/pcourt/pcourt/services/filings/internal/store"
)

// FeeReconciler finishes fee payments nobody is waiting for: a settlement
// whose outcome was unknown is asked again (the facilitator answers a repeat
// with the original outcome), and a settled fee is marked paid on its draft,
// opening a ready_to_open draft. A case it opens mints no show-once
// capabilities, since no caller is there to receive them.
type FeeReconciler struct {
	h *handlers
}

// NewFeeReconciler returns the reconciler for the same dependencies as Register.
func NewFeeReconciler(d Deps) *FeeReconciler {
	return &FeeReconciler{h: newHandlers(d)}
}

// Run reconciles every interval until ctx is cancelled.
func (r *FeeReconciler) Run(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if _, err := r.Once(ctx); err != nil && ctx.Err() == nil {
				r.h.logger.ErrorContext(ctx, "fee reconciliation pass failed", "err", err)
			}
		}
	}
}

// Once runs one pass and returns how many payments it finished.
func (r *FeeReconciler) Once(ctx context.Context) (int, error) {
	done := 0
	for _, tag := range store.ShardTags() {
		ids, err := r.h.drafts.UnfinishedFeePayments(ctx, tag, r.h.now(), 100)
		if err != nil {
			return done, err
		}
		for _, id := range ids {
			if err := r.finish(ctx, id); err != nil {
				r.h.logger.WarnContext(ctx, "reconciling fee payment failed; retrying on the next pass", "draft", id, "err", err)
				continue
			}
			done++
		}
	}
	return done, nil
}

func (r *FeeReconciler) finish(ctx context.Context, draftID string) error {
	p, err := r.h.drafts.FeePayment(ctx, draftID)
	if err != nil {
		return err
	}
	if p.State == store.FeeSettling || p.State == store.FeePending {
		var offer x402.PaymentRequirements
		var payment x402.PaymentPayload
		if err := errors.Join(json.Unmarshal(p.Offer, &offer), json.Unmarshal(p.Payload, &payment)); err != nil {
			return fmt.Errorf("decoding stored payment: %w", err)
		}
		settlement, err := r.h.fees.Facilitator.Settle(ctx, x402.SettleRequest{X402Version: x402.Version, PaymentPayload: payment, PaymentRequirements: offer})
		if err != nil {
			return err
		}
		raw, _ := json.Marshal(settlement)
		if err := r.h.drafts.RecordFeeSettlement(ctx, draftID, p.PaymentID, settlement.Success, raw, settlement.ErrorReason); err != nil {
			return err
		}
		if !settlement.Success {
			r.h.logger.InfoContext(ctx, "fee payment refused on reconciliation", "draft", draftID, "reason", settlement.ErrorReason)
			return nil
		}
	}
	if err := r.h.applyUnattended(ctx, draftID, func(d draft.Draft) (draft.Outcome, error) { return d.WithFeePaid(r.h.now()) }); err != nil && !errors.Is(err, draft.ErrFeeAlreadyPaid) {
		return err
	}
	return r.h.drafts.MarkFeeApplied(ctx, draftID, p.PaymentID)
}

// applyUnattended is apply for acts with no caller waiting: the same
// optimistic loop, and an opening without secrets.
func (h *handlers) applyUnattended(ctx context.Context, draftID string, act func(draft.Draft) (draft.Outcome, error)) error {
	for range maxConfirmAttempts {
		loaded, err := h.drafts.Load(ctx, draftID)
		if err != nil {
			return err
		}
		var d draft.Draft
		if err := json.Unmarshal(loaded.Record, &d); err != nil {
			return err
		}
		outcome, err := act(d)
		if err != nil {
			return err
		}
		record, err := json.Marshal(outcome.Draft)
		if err != nil {
			return err
		}
		var opening *store.Opening
		if outcome.Opened {
			if _, _, opening, err = h.opening(outcome.Draft, false); err != nil {
				return err
			}
		}
		err = h.drafts.Save(ctx, draftID, loaded.Version, record, string(outcome.Draft.Status()), opening)
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		return err
	}
	return errBusy
}
