package readiness_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/readiness/internal/readiness"
)

// publishedFeeSchedule is api/fee-schedule.json, the one statement of the
// fee schedule that the readiness report quotes and filings charges.
type publishedFeeSchedule struct {
	MicroCeilingMinor   int64 `json:"microCeilingMinor"`
	PanelThresholdMinor int64 `json:"panelThresholdMinor"`
	Tiers               []struct {
		Tier                string `json:"tier"`
		PercentBasisPoints  int64  `json:"percentBasisPoints"`
		FloorMinor          int64  `json:"floorMinor"`
		PanelSurchargeMinor int64  `json:"panelSurchargeMinor"`
	} `json:"tiers"`
}

func TestTheQuotedFeeScheduleIsThePublishedOne(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "api", "fee-schedule.json"))
	require.NoError(t, err)
	var published publishedFeeSchedule
	require.NoError(t, json.Unmarshal(raw, &published))

	table := readiness.DefaultRuleTable()
	require.Len(t, table.Fees, len(published.Tiers))
	for i, p := range published.Tiers {
		f := table.Fees[i]
		require.Equal(t, p.Tier, string(f.Tier), "tier %d", i)
		require.Equal(t, p.PercentBasisPoints, f.Percent.BasisPoints(), p.Tier)
		require.Equal(t, p.FloorMinor, f.FloorUsd.Cents(), p.Tier)
		require.Equal(t, p.PanelSurchargeMinor, f.PanelSurchargeUsd.Cents(), p.Tier)
	}
	thresholds := map[readiness.CompositionReason]int64{}
	for _, c := range table.Compositions {
		switch {
		case c.When.AmountAboveUsd != nil:
			thresholds[c.Reason] = c.When.AmountAboveUsd.Cents()
		case c.When.AmountAtMostUsd != nil:
			thresholds[c.Reason] = c.When.AmountAtMostUsd.Cents()
		}
	}
	require.Equal(t, published.PanelThresholdMinor, thresholds[readiness.ReasonPanelThreshold])
	require.Equal(t, published.MicroCeilingMinor, thresholds[readiness.ReasonMicroClaimsTier])
}
