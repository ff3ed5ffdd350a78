package draft_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

func TestQuoteFee(t *testing.T) {
	const (
		money       = draft.RemedyMoneyObligation
		corpus      = draft.RemedyCorpusAllocation
		declaratory = draft.RemedyDeclaratory
		oneSided    = draft.IntakeClaimantInitiated
		proposed    = draft.IntakeClaimantProposed
		bilateral   = draft.IntakeBilateralAPI
		bundledIn   = draft.IntakeBundledBilateral
		collect     = draft.CollectBeforeOpening
		invoice     = draft.InvoiceAfterOpening
	)
	tests := []struct {
		name       string
		amount     int64
		remedy     draft.Remedy
		micro      bool
		intake     draft.IntakeMode
		tier       draft.FeeTier
		fee        int64
		collection draft.FeeCollection
	}{
		{"declaratory is flat", 0, declaratory, false, oneSided, draft.TierDeclaratory, 15_000, invoice},
		{"declaratory ignores the amount", 900_000_000, declaratory, false, oneSided, draft.TierDeclaratory, 15_000, invoice},
		{"declaratory ignores micro consent", 100, declaratory, true, oneSided, draft.TierDeclaratory, 15_000, invoice},
		{"micro at the ceiling", 25_000, money, true, oneSided, draft.TierMicro, 1_250, invoice},
		{"micro rounds half up", 8_550, corpus, true, oneSided, draft.TierMicro, 428, invoice},
		{"micro rounds down below half", 8_549, corpus, true, oneSided, draft.TierMicro, 427, invoice},
		{"micro floor", 1, money, true, oneSided, draft.TierMicro, 100, invoice},
		{"micro floor at the crossing", 2_000, money, true, oneSided, draft.TierMicro, 100, invoice},
		{"micro just above the floor", 2_010, money, true, oneSided, draft.TierMicro, 101, invoice},
		{"micro size without consent is single arbiter", 25_000, money, false, oneSided, draft.TierSingleArbiter, 5_000, invoice},
		{"above the micro ceiling with consent", 25_001, money, true, oneSided, draft.TierSingleArbiter, 5_000, invoice},
		{"single arbiter floor", 120_000, money, false, oneSided, draft.TierSingleArbiter, 5_000, invoice},
		{"single arbiter half up onto the floor", 166_650, money, false, oneSided, draft.TierSingleArbiter, 5_000, invoice},
		{"single arbiter above the floor", 1_000_000, money, false, bilateral, draft.TierSingleArbiter, 30_000, invoice},
		{"single arbiter below the collection threshold", 1_666_649, money, false, oneSided, draft.TierSingleArbiter, 49_999, invoice},
		{"single arbiter half up onto the collection threshold", 1_666_650, money, false, oneSided, draft.TierSingleArbiter, 50_000, collect},
		{"claimant proposed is one-sided", 1_666_650, money, false, proposed, draft.TierSingleArbiter, 50_000, collect},
		{"bilateral intake is invoiced", 1_666_650, money, false, bilateral, draft.TierSingleArbiter, 50_000, invoice},
		{"bundled intake is invoiced", 1_666_650, money, false, bundledIn, draft.TierSingleArbiter, 50_000, invoice},
		{"panel threshold itself is single arbiter", 25_000_000, money, false, oneSided, draft.TierSingleArbiter, 750_000, collect},
		{"panel above the threshold: floor and surcharge", 25_000_001, money, false, oneSided, draft.TierPanel, 750_000, collect},
		{"panel rounds half up", 40_000_100, corpus, false, bilateral, draft.TierPanel, 850_002, invoice},
		{"panel proportional", 100_000_000, money, false, oneSided, draft.TierPanel, 1_750_000, collect},
		{"panel at the maximum amount", 1_000_000_000, money, false, oneSided, draft.TierPanel, 15_250_000, collect},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claim := draft.Claim{AmountInDisputeMinor: tt.amount, Remedy: tt.remedy, MicroTierConsent: tt.micro, Summary: "x"}
			fee := draft.QuoteFee("fee_1", claim, tt.intake)
			require.Equal(t, draft.Fee{
				FeeID: "fee_1", Currency: "USD", AmountMinor: tt.fee, Tier: tt.tier, Collection: tt.collection, Status: draft.FeeQuoted,
			}, fee)
		})
	}
}

func TestFeeSchedulesIsACopy(t *testing.T) {
	s := draft.FeeSchedules()
	require.Equal(t, []draft.FeeSchedule{
		{Tier: draft.TierMicro, PercentBasisPoints: 500, FloorMinor: 100},
		{Tier: draft.TierSingleArbiter, PercentBasisPoints: 300, FloorMinor: 5_000},
		{Tier: draft.TierPanel, PercentBasisPoints: 150, FloorMinor: 500_000, PanelSurchargeMinor: 250_000},
		{Tier: draft.TierDeclaratory, PercentBasisPoints: 0, FloorMinor: 15_000},
	}, s)
	s[0].FloorMinor = 0
	require.Equal(t, int64(100), draft.FeeSchedules()[0].FloorMinor)
}

func TestPreparedDraftCarriesTheQuote(t *testing.T) {
	in := twoParty()
	in.Claim.AmountInDisputeMinor = 30_000_000
	d := mustPrepare(t, in)
	require.Equal(t, draft.QuoteFee(testIDs.feeID, in.Claim, in.IntakeMode), d.Fee())
	require.Equal(t, draft.CollectBeforeOpening, d.Fee().Collection)
}
