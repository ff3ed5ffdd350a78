package filing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

// FeeReconciler finishes fee payments nobody is waiting for, through the
// settlement journal: a settlement whose outcome was unknown is asked again
// (the facilitator answers a repeat with the original outcome), and a
// settled fee is marked paid on its draft, opening a ready_to_open draft. A
// case it opens mints no show-once secrets, since no caller is there to
// receive them; the invitation route mints them later.
type FeeReconciler struct {
	filings  *Service
	payments *journal.Journal
}

// NewFeeReconciler returns the reconciler of the service's fee payments;
// with x402 checkout off, Run waits for its context.
func NewFeeReconciler(filings *Service) *FeeReconciler {
	return &FeeReconciler{filings: filings, payments: filings.payments}
}

// Run reconciles every interval until ctx is cancelled.
func (r *FeeReconciler) Run(ctx context.Context, interval time.Duration) error {
	if r.payments == nil {
		<-ctx.Done()
		return nil
	}
	return r.payments.RunReconciler(ctx, interval, r.fulfil)
}

// Once runs one pass and returns how many payments it finished.
func (r *FeeReconciler) Once(ctx context.Context) (int, error) {
	return r.payments.ReconcileOnce(ctx, r.filings.Now(), r.fulfil)
}

// fulfil marks the fee of a settled payment paid on its draft (the
// payment's Ref).
func (r *FeeReconciler) fulfil(ctx context.Context, p journal.Record) error {
	_, err := r.filings.Apply(ctx, p.Ref, nil, func(d draft.Draft) (draft.Outcome, error) { return d.WithFeePaid(r.filings.Now()) }, "")
	if err != nil && !errors.Is(err, draft.ErrFeeAlreadyPaid) {
		return fmt.Errorf("applying the fee paid by %s to draft %s: %w", p.ID, p.Ref, err)
	}
	return nil
}
