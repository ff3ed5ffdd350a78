package draft

import "time"

// The fee schedule's thresholds, in USD minor units (cents).
const (
	// MaxAmountMinor is the largest amount in dispute a draft may carry
	// (USD 10,000,000), the readiness report's limit.
	MaxAmountMinor int64 = 1_000_000_000
	// MicroCeilingMinor is the largest amount of a micro claim (USD 250).
	MicroCeilingMinor int64 = 25_000
	// PanelThresholdMinor is the amount above which a panel hears the
	// claim (USD 250,000).
	PanelThresholdMinor int64 = 25_000_000
	// CollectBeforeOpeningMinor is the smallest fee collected before
	// opening on a one-sided intake (USD 500).
	CollectBeforeOpeningMinor int64 = 50_000
)

// FeeSchedule is one tier of the filing fee schedule: the percentage of the
// amount in dispute (basis points, rounded half up to the cent), raised to
// the floor, plus the panel surcharge.
type FeeSchedule struct {
	Tier                FeeTier
	PercentBasisPoints  int64
	FloorMinor          int64
	PanelSurchargeMinor int64
}

// feeSchedules is the schedule as data. api/fee-schedule.json states it
// once for both services; a test pins this copy and the readiness report's
// to it, so a quote and a draft never disagree.
var feeSchedules = []FeeSchedule{
	{Tier: TierMicro, PercentBasisPoints: 500, FloorMinor: 100},
	{Tier: TierSingleArbiter, PercentBasisPoints: 300, FloorMinor: 5_000},
	{Tier: TierPanel, PercentBasisPoints: 150, FloorMinor: 500_000, PanelSurchargeMinor: 250_000},
	{Tier: TierDeclaratory, PercentBasisPoints: 0, FloorMinor: 15_000},
}

// FeeSchedules returns a copy of the fee schedule, one entry per tier.
func FeeSchedules() []FeeSchedule {
	return append([]FeeSchedule(nil), feeSchedules...)
}

// Fee is a draft's filing-fee projection in USD minor units.
type Fee struct {
	FeeID       string
	Currency    string // always USD
	AmountMinor int64
	Tier        FeeTier
	Collection  FeeCollection
	Status      FeeStatus
	PaidAt      time.Time // zero while unpaid
}

// QuoteFee computes the fee of a claim on an intake, with the given id and
// status quoted:
//
//   - tier: declaratory for a declaratory remedy; micro for a monetary claim
//     of at most MicroCeilingMinor whose parties consent to the micro tier;
//     panel above PanelThresholdMinor; single_arbiter otherwise;
//   - amount: max(floor, amount × percent rounded half up to the cent) +
//     panel surcharge, in integer arithmetic;
//   - collection: collect_before_opening when the intake is one-sided
//     (claimant_initiated or claimant_proposed) and the fee is at least
//     CollectBeforeOpeningMinor; invoice_after_opening otherwise.
func QuoteFee(feeID string, claim Claim, intake IntakeMode) Fee {
	tier := feeTier(claim)
	var s FeeSchedule
	for _, candidate := range feeSchedules {
		if candidate.Tier == tier {
			s = candidate
		}
	}
	proportional := (claim.AmountInDisputeMinor*s.PercentBasisPoints + 5_000) / 10_000
	amount := max(proportional, s.FloorMinor) + s.PanelSurchargeMinor
	collection := InvoiceAfterOpening
	if oneSided(intake) && amount >= CollectBeforeOpeningMinor {
		collection = CollectBeforeOpening
	}
	return Fee{FeeID: feeID, Currency: "USD", AmountMinor: amount, Tier: tier, Collection: collection, Status: FeeQuoted}
}

func feeTier(c Claim) FeeTier {
	switch {
	case c.Remedy == RemedyDeclaratory:
		return TierDeclaratory
	case c.AmountInDisputeMinor <= MicroCeilingMinor && c.MicroTierConsent:
		return TierMicro
	case c.AmountInDisputeMinor > PanelThresholdMinor:
		return TierPanel
	default:
		return TierSingleArbiter
	}
}

// oneSided reports whether the claimant's partner alone starts the case.
// There the fee it owes is secured before a case opens; in the bilateral
// intakes both sides' partners are contracted API users and are invoiced.
func oneSided(m IntakeMode) bool {
	return m == IntakeClaimantInitiated || m == IntakeClaimantProposed
}
