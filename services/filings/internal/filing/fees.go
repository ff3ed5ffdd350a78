package filing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/ethereum/go-ethereum/common"

	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
	"github.com/pcourt/pcourt/services/filings/internal/store"
)

// FeeOwner is the filings service's name in the x402 settlement journal.
const FeeOwner = "filings"

// FeeConfig configures paying fees with x402.
type FeeConfig struct {
	PayTo string // receives fees; empty switches x402 checkout off
	// Networks are the CAIP-2 networks offered, USDC on each, by the
	// environment of the draft (sandbox, live): live offers and accepts
	// main networks only, sandbox test networks only.
	Networks          map[string][]string
	MaxTimeoutSeconds int
}

// Errors of finding and paying a fee. The HTTP layer maps each to its
// problem; none of them charged anything.
var (
	ErrCheckoutUnavailable = errors.New("the fee cannot be paid with x402 here")
	ErrOtherFeePayment     = errors.New("another payment of this fee is being settled")
	ErrFeePaidByOther      = errors.New("the fee was paid by another payment")
)

// FeeNotFoundError is a fee id nobody quoted, or the fee of a draft the
// caller may not see, which does not exist for it.
type FeeNotFoundError struct{ FeeID string }

func (e *FeeNotFoundError) Error() string { return "no fee " + e.FeeID }

// usdcUnitsPerCent converts USD minor units to USDC atomic units (6 decimals).
const usdcUnitsPerCent = 10_000

// committedOffers are the x402 requirements a fee is paid with, fixed when
// the fee is quoted so that every checkout returns the same intent.
func (f FeeConfig) committedOffers(fee draft.Fee, environment string) ([]x402.PaymentRequirements, error) {
	if f.PayTo == "" || fee.AmountMinor <= 0 {
		return nil, nil
	}
	amount := strconv.FormatInt(fee.AmountMinor*usdcUnitsPerCent, 10)
	var offers []x402.PaymentRequirements
	for _, n := range f.Networks[environment] {
		if !x402.NetworkAllowed(environment, n) {
			return nil, fmt.Errorf("network %q is not offered in %s", n, environment)
		}
		asset, ok := x402.USDC(n)
		if !ok {
			return nil, fmt.Errorf("network %q has no known USDC", n)
		}
		o, err := asset.Offer(amount, common.HexToAddress(f.PayTo), f.MaxTimeoutSeconds)
		if err != nil {
			return nil, err
		}
		offers = append(offers, o)
	}
	return offers, nil
}

// Prepare stores a newly prepared draft and indexes its fee with the x402
// requirements committed now, so that every checkout of it returns the
// same intent.
func (s *Service) Prepare(ctx context.Context, d draft.Draft) error {
	if err := s.drafts.Create(ctx, d); err != nil {
		return err
	}
	offers, err := s.fees.committedOffers(d.Fee(), d.Environment())
	if err != nil {
		return err
	}
	committed, err := json.Marshal(offers)
	if err != nil {
		return err
	}
	return s.drafts.IndexFee(ctx, d.Fee().FeeID, d.ID(), committed)
}

// Fee resolves a fee id to its draft, which access must let the caller see
// (*FeeNotFoundError otherwise: a fee of a draft the caller may not see does
// not exist for it).
func (s *Service) Fee(ctx context.Context, feeID string, access func(draft.Draft) error) (draft.Draft, error) {
	d, _, err := s.fee(ctx, feeID, access)
	return d, err
}

func (s *Service) fee(ctx context.Context, feeID string, access func(draft.Draft) error) (draft.Draft, store.FeeIndex, error) {
	idx, err := s.drafts.Fee(ctx, feeID)
	if errors.Is(err, store.ErrNotFound) {
		return draft.Draft{}, store.FeeIndex{}, &FeeNotFoundError{FeeID: feeID}
	}
	if err != nil {
		return draft.Draft{}, store.FeeIndex{}, err
	}
	d, err := s.Load(ctx, idx.DraftID, access)
	if errors.Is(err, draft.ErrDraftNotFound) {
		return draft.Draft{}, store.FeeIndex{}, &FeeNotFoundError{FeeID: feeID}
	}
	return d, idx, err
}

// PayableFee is a fee the caller may pay, with the requirements it may be
// paid with.
type PayableFee struct {
	Draft  draft.Draft
	Offers []x402.PaymentRequirements
}

// ID is the fee's durable id.
func (p PayableFee) ID() string { return p.Draft.Fee().FeeID }

// PayableFee resolves a fee the caller may pay: access must let it see the
// draft, and authorize must let it pay (the HTTP layer's rules). Only the
// committed offers of the draft's own environment count: a fee quoted
// before networks were split by environment may carry offers of the other
// kind, which are neither offered nor accepted.
func (s *Service) PayableFee(ctx context.Context, feeID string, access, authorize func(draft.Draft) error) (PayableFee, error) {
	d, idx, err := s.fee(ctx, feeID, access)
	if err != nil {
		return PayableFee{}, err
	}
	if err := authorize(d); err != nil {
		return PayableFee{}, err
	}
	var committed []x402.PaymentRequirements
	if len(idx.Offers) > 0 {
		if err := json.Unmarshal(idx.Offers, &committed); err != nil {
			return PayableFee{}, fmt.Errorf("decoding the offers of fee %s: %w", feeID, err)
		}
	}
	fee := PayableFee{Draft: d}
	for _, o := range committed {
		if x402.NetworkAllowed(d.Environment(), o.Network) {
			fee.Offers = append(fee.Offers, o)
		}
	}
	if len(fee.Offers) == 0 || s.payments == nil {
		return PayableFee{}, ErrCheckoutUnavailable
	}
	return fee, nil
}

// FeeResource is the path of a fee's x402 resource: what the settlement
// journal claims its payments for.
func FeeResource(feeID string) string { return "/api/fees/" + feeID + "/x402" }

// PaidFee is the result of paying a fee.
type PaidFee struct {
	Settlement x402.SettleResponse
	// Applied is the draft with the fee paid, and the case when that
	// opened it (its secrets minted for the payer).
	Applied Applied
	// AlreadyPaid says this payment had paid the fee before (a retry):
	// Applied.Draft is the draft as it stands and nothing was applied.
	AlreadyPaid bool
}

// PayFee pays fee with payment, which matched offer, through the
// settlement journal: the payment is claimed globally (it pays for one
// thing once), verified, bound to the fee, settled; then the fee is marked
// paid on the draft, which opens a ready_to_open draft. A fee another
// payment holds is refused before the new payment is even verified, so
// nothing of it is claimed. access runs again on the draft before the fee
// is applied; payer is the partner whose credential pays, shown the
// secrets of its sides when the payment opens the case.
func (s *Service) PayFee(ctx context.Context, fee PayableFee, payment x402.PaymentPayload, offer x402.PaymentRequirements, access func(draft.Draft) error, payer string) (PaidFee, error) {
	d := fee.Draft
	paymentID := journal.ID(offer, payment)
	if err := s.feeOpenTo(ctx, d, paymentID); err != nil {
		return PaidFee{}, err
	}
	out, err := s.payments.Pay(ctx, journal.Purchase{
		Resource: FeeResource(fee.ID()), Ref: d.ID(), Payment: payment, Offer: offer,
		Prepare: func(ctx context.Context) ([]byte, error) {
			if d.Fee().Status == draft.FeePaid {
				return nil, ErrFeePaidByOther
			}
			return nil, s.bindFeePayment(ctx, d.ID(), paymentID)
		},
	})
	if err != nil {
		return PaidFee{}, err
	}
	paid := PaidFee{Settlement: out.Settlement}
	paid.Applied, err = s.Apply(ctx, d.ID(), access, func(d draft.Draft) (draft.Outcome, error) { return d.WithFeePaid(s.now()) }, payer)
	if errors.Is(err, draft.ErrFeeAlreadyPaid) {
		// This payment paid the fee before: answer the draft as it stands.
		if paid.Applied.Draft, err = s.Load(ctx, d.ID(), access); err != nil {
			return PaidFee{}, err
		}
		paid.AlreadyPaid = true
		return paid, s.payments.Fulfilled(ctx, out.ID)
	}
	if err != nil {
		return PaidFee{}, err
	}
	if err := s.payments.Fulfilled(context.WithoutCancel(ctx), out.ID); err != nil {
		s.logger.ErrorContext(ctx, "marking the fee applied failed; the reconciler retries it", "draft", d.ID(), "err", err)
	}
	return paid, nil
}

// maxBindAttempts bounds the optimistic retries of binding a payment to a
// fee while other payments of it race.
const maxBindAttempts = 16

// bindFeePayment makes paymentID the one payment of the draft's fee, unless
// another payment holds it and may still move money (or did).
func (s *Service) bindFeePayment(ctx context.Context, draftID, paymentID string) error {
	for range maxBindAttempts {
		current, err := s.drafts.FeePaymentOf(ctx, draftID)
		if err != nil {
			return err
		}
		if err := s.otherPaymentHolds(ctx, current, paymentID); err != nil {
			return err
		}
		bound, err := s.drafts.BindFeePayment(ctx, draftID, current, paymentID)
		if err != nil || bound {
			return err
		}
	}
	return ErrOtherFeePayment
}

// feeOpenTo tells whether paymentID may still pay the draft's fee: the fee
// is unpaid and no other payment holds it, or paymentID is the one that
// does (a retry).
func (s *Service) feeOpenTo(ctx context.Context, d draft.Draft, paymentID string) error {
	current, err := s.drafts.FeePaymentOf(ctx, d.ID())
	if err != nil {
		return err
	}
	if d.Fee().Status == draft.FeePaid && current != paymentID {
		return ErrFeePaidByOther
	}
	return s.otherPaymentHolds(ctx, current, paymentID)
}

// otherPaymentHolds refuses paymentID while current, another payment bound
// to the fee, settled or may still move money.
func (s *Service) otherPaymentHolds(ctx context.Context, current, paymentID string) error {
	if current == "" || current == paymentID {
		return nil
	}
	standing, err := s.payments.Standing(ctx, current)
	if err != nil {
		return err
	}
	switch standing {
	case journal.Settled:
		return ErrFeePaidByOther
	case journal.Verifying, journal.Settling, journal.Pending:
		return ErrOtherFeePayment
	}
	// Absent, refused or abandoned: it moved nothing and never will.
	return nil
}
