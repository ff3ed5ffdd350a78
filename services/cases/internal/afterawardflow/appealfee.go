package afterawardflow

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/journal"
	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
)

// FeeOwner is the cases service's name in the x402 settlement journal.
const FeeOwner = "cases"

// FeeConfig configures collecting appeal fees with x402, as filings
// collects filing fees (the same FEES_* settings). Without a payee or a
// journal, appeal fees are invoiced.
type FeeConfig struct {
	PayTo string
	// Networks are the CAIP-2 networks offered, USDC on each, by
	// environment (sandbox, live).
	Networks          map[string][]string
	MaxTimeoutSeconds int
}

// Payments is the x402 settlement journal (libs/x402/journal) appeal fees
// are paid through: a payment pays for one thing once, across services.
type Payments interface {
	Pay(ctx context.Context, p journal.Purchase) (journal.Outcome, error)
	Fulfilled(ctx context.Context, id string) error
	Standing(ctx context.Context, id string) (journal.State, error)
}

// usdcUnitsPerCent converts USD minor units to USDC atomic units.
const usdcUnitsPerCent = 10_000

// collection says how an appeal fee filed now in environment is collected.
func (s *Service) collection(environment string) afteraward.FeeCollection {
	if s.payments == nil || s.fees.PayTo == "" || len(s.fees.Networks[environment]) == 0 {
		return afteraward.CollectInvoice
	}
	return afteraward.CollectX402
}

// AppealFeeResource is the path of an appeal fee's x402 resource: what
// the settlement journal claims its payments for.
func AppealFeeResource(caseID, appealID string) string {
	return "/api/cases/" + caseID + "/appeals/" + appealID + "/fee"
}

// FeeOffers are the x402 requirements an appeal fee is paid with: its
// amount in USDC on each network of the case's environment.
func (s *Service) FeeOffers(environment string, fee afteraward.AppealFee) ([]x402.PaymentRequirements, error) {
	if fee.Collection != afteraward.CollectX402 {
		return nil, nil
	}
	amount := strconv.FormatInt(fee.AmountMinor*usdcUnitsPerCent, 10)
	var offers []x402.PaymentRequirements
	for _, n := range s.fees.Networks[environment] {
		asset, ok := x402.USDC(n)
		if !ok || !x402.NetworkAllowed(environment, n) {
			continue
		}
		o, err := asset.Offer(amount, common.HexToAddress(s.fees.PayTo), s.fees.MaxTimeoutSeconds)
		if err != nil {
			return nil, err
		}
		offers = append(offers, o)
	}
	return offers, nil
}

// PaidFee is the result of paying an appeal fee.
type PaidFee struct {
	Settlement x402.SettleResponse
	Result     caseflow.Result
}

// PayAppealFee pays an appeal's fee with payment, which matched offer,
// through the settlement journal: claimed globally, verified, bound to
// the fee in the case (ActHoldFee: no second payment settles while one
// holds it), settled, then recorded as paid (ActPayFee), which opens the
// briefing. The same payment again replays its settlement and records
// nothing more. A payment the facilitator refuses is *journal.Refusal.
func (s *Service) PayAppealFee(ctx context.Context, caseID, appealID, side string, payment x402.PaymentPayload, offer x402.PaymentRequirements) (PaidFee, error) {
	if s.payments == nil {
		return PaidFee{}, errors.New("appeal fees are invoiced on this deployment")
	}
	paymentID := journal.ID(offer, payment)
	out, err := s.payments.Pay(ctx, journal.Purchase{
		Resource: AppealFeeResource(caseID, appealID), Ref: caseID + " " + appealID, Payment: payment, Offer: offer,
		Prepare: func(ctx context.Context) ([]byte, error) {
			return nil, s.holdFee(ctx, caseID, appealID, side, paymentID)
		},
	})
	if err != nil {
		return PaidFee{}, err
	}
	res, err := s.recordFee(ctx, caseID, appealID, out.ID, out.Settlement)
	if err != nil {
		return PaidFee{}, err
	}
	return PaidFee{Settlement: out.Settlement, Result: res}, nil
}

// holdFee binds paymentID to the fee unless another payment holds it and
// settled or may still settle.
func (s *Service) holdFee(ctx context.Context, caseID, appealID, side, paymentID string) error {
	l, err := s.cases.Load(ctx, caseID)
	if err != nil {
		return err
	}
	ap, ok := l.Case.AfterAward.Appeal(appealID)
	if !ok {
		return &afteraward.RefusalError{Code: afteraward.CodeAppealNotFound, Detail: fmt.Sprintf("case %s has no appeal %s", caseID, appealID)}
	}
	current := ap.Fee.PaymentID
	if current != "" && current != paymentID {
		standing, err := s.payments.Standing(ctx, current)
		if err != nil {
			return err
		}
		switch standing {
		case journal.Settled:
			return &afteraward.RefusalError{Code: afteraward.CodeAppealFeePaid, Detail: "the fee of appeal " + appealID + " was paid by another payment"}
		case journal.Verifying, journal.Settling, journal.Pending:
			return &afteraward.RefusalError{Code: afteraward.CodeAppealFeeHeld, Detail: "another payment of the fee of appeal " + appealID + " is being settled"}
		}
		// Absent, refused or abandoned: it moved nothing and never will.
	}
	_, _, err = s.Act(ctx, caseID, afteraward.Act{Kind: afteraward.ActHoldFee, Side: side, AppealID: appealID, PaymentID: paymentID, Replaces: current})
	return err
}

// recordFee records a settled payment of the fee and marks it fulfilled
// in the journal.
func (s *Service) recordFee(ctx context.Context, caseID, appealID, paymentID string, settled x402.SettleResponse) (caseflow.Result, error) {
	res, _, err := s.Act(context.WithoutCancel(ctx), caseID, afteraward.Act{Kind: afteraward.ActPayFee, AppealID: appealID, PaymentID: paymentID,
		FeePayment: &afteraward.FeePayment{Network: settled.Network, Payer: settled.Payer, Transaction: settled.Transaction}})
	if err != nil {
		return res, err
	}
	return res, s.payments.Fulfilled(context.WithoutCancel(ctx), paymentID)
}

// FulfilFee is the journal reconciler's hand-over: a fee payment settled
// while nobody waited for it (its request died, or its settlement was
// unknown until reconciled) is recorded on its appeal.
func (s *Service) FulfilFee(ctx context.Context, r journal.Record) error {
	caseID, appealID, ok := strings.Cut(r.Ref, " ")
	if !ok || r.Settlement == nil {
		return fmt.Errorf("appeal fee payment %s: unreadable reference %q", r.ID, r.Ref)
	}
	_, _, err := s.Act(ctx, caseID, afteraward.Act{Kind: afteraward.ActPayFee, AppealID: appealID, PaymentID: r.ID,
		FeePayment: &afteraward.FeePayment{Network: r.Settlement.Network, Payer: r.Settlement.Payer, Transaction: r.Settlement.Transaction}})
	return err
}
