package draft_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

// publishedFeeSchedule is api/fee-schedule.json, the one statement of the
// fee schedule that the readiness report quotes and filings charges.
type publishedFeeSchedule struct {
	MicroCeilingMinor         int64 `json:"microCeilingMinor"`
	PanelThresholdMinor       int64 `json:"panelThresholdMinor"`
	CollectBeforeOpeningMinor int64 `json:"collectBeforeOpeningMinor"`
	Tiers                     []struct {
		Tier                string `json:"tier"`
		PercentBasisPoints  int64  `json:"percentBasisPoints"`
		FloorMinor          int64  `json:"floorMinor"`
		PanelSurchargeMinor int64  `json:"panelSurchargeMinor"`
	} `json:"tiers"`
}

func TestTheFeeScheduleIsThePublishedOne(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "api", "fee-schedule.json"))
	require.NoError(t, err)
	var published publishedFeeSchedule
	require.NoError(t, json.Unmarshal(raw, &published))

	require.Equal(t, published.MicroCeilingMinor, draft.MicroCeilingMinor)
	require.Equal(t, published.PanelThresholdMinor, draft.PanelThresholdMinor)
	require.Equal(t, published.CollectBeforeOpeningMinor, draft.CollectBeforeOpeningMinor)
	ours := draft.FeeSchedules()
	require.Len(t, ours, len(published.Tiers))
	for i, p := range published.Tiers {
		require.Equal(t, p.Tier, string(ours[i].Tier), "tier %d", i)
		require.Equal(t, p.PercentBasisPoints, ours[i].PercentBasisPoints, p.Tier)
		require.Equal(t, p.FloorMinor, ours[i].FloorMinor, p.Tier)
		require.Equal(t, p.PanelSurchargeMinor, ours[i].PanelSurchargeMinor, p.Tier)
	}
}
