package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
	"github.com/pcourt/pcourt/services/filings/internal/store"
)

// FeeReconciler finishes fee payments nobody is waiting for, through the
// settlement journal: a settlement whose outcome was unknown is asked again
// (the facilitator answers a repeat with the original outcome), and a
// settled fee is marked paid on its draft, opening a ready_to_open draft. A
// case it opens mints no show-once capabilities, since no caller is there
// to receive them.
type FeeReconciler struct {
	h *handlers
}

// NewFeeReconciler returns the reconciler for the same dependencies as Register.
func NewFeeReconciler(d Deps) *FeeReconciler {
	return &FeeReconciler{h: newHandlers(d)}
}

// Run reconciles every interval until ctx is cancelled.
func (r *FeeReconciler) Run(ctx context.Context, interval time.Duration) error {
	if r.h.payments == nil {
		<-ctx.Done()
		return nil
	}
	return r.h.payments.RunReconciler(ctx, interval, r.fulfil)
}

// Once runs one pass and returns how many payments it finished.
func (r *FeeReconciler) Once(ctx context.Context) (int, error) {
	return r.h.payments.ReconcileOnce(ctx, r.h.now(), r.fulfil)
}

// fulfil marks the fee of a settled payment paid on its draft.
func (r *FeeReconciler) fulfil(ctx context.Context, p journal.Record) error {
	err := r.h.applyUnattended(ctx, p.Ref, func(d draft.Draft) (draft.Outcome, error) { return d.WithFeePaid(r.h.now()) })
	if err != nil && !errors.Is(err, draft.ErrFeeAlreadyPaid) {
		return fmt.Errorf("applying the fee paid by %s to draft %s: %w", p.ID, p.Ref, err)
	}
	return nil
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
