package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

// The controller's layer: written whole, read back as written, written
// again only when it changes, and kept apart from the admin API's.
func TestResourceLayer(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	s := store.New(rdb)

	got, err := s.Resources(ctx)
	require.NoError(t, err)
	require.Empty(t, got, "never saved: no resource layer")

	at := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	layer := map[inventory.Family]policy.Settings{
		inventory.V2Cases: {
			GA: date(t, "2026-01-15"), Stage: policy.Brownout, Source: "CompatibilityFamily pcourt/cases",
			Brownouts:  []policy.Span{{Start: at, End: at.Add(time.Hour)}},
			Extensions: map[string]policy.Date{"partner-x": date(t, "2026-10-31"), "cred_abc": date(t, "2026-09-30")},
		},
		inventory.V2Filings: {GA: date(t, "2026-02-01"), Source: "CompatibilityFamily pcourt/filings"},
	}
	changed, err := s.SaveResources(ctx, layer)
	require.NoError(t, err)
	require.True(t, changed)
	got, err = s.Resources(ctx)
	require.NoError(t, err)
	require.Equal(t, layer, got)

	changed, err = s.SaveResources(ctx, layer)
	require.NoError(t, err)
	require.False(t, changed, "the same layer twice: nothing written")

	require.NoError(t, s.Save(ctx, inventory.V2Cases, policy.Settings{GA: date(t, "2026-03-01")}))
	layers, err := s.LoadLayers(ctx)
	require.NoError(t, err)
	require.Equal(t, "2026-03-01", layers.Admin[inventory.V2Cases].GA.String())
	require.Equal(t, "2026-01-15", layers.Resources[inventory.V2Cases].GA.String(), "the admin API does not touch the resource layer")

	delete(layer, inventory.V2Cases)
	changed, err = s.SaveResources(ctx, layer)
	require.NoError(t, err)
	require.True(t, changed)
	got, err = s.Resources(ctx)
	require.NoError(t, err)
	require.Equal(t, layer, got, "a resource deleted leaves the layer")

	_, err = s.SaveResources(ctx, map[inventory.Family]policy.Settings{inventory.V2Cases: {Stage: "paused"}})
	require.Error(t, err, "settings the policy cannot act on are refused")
	require.NoError(t, rdb.Set(ctx, "pc:edge:compat:resources", `[{"family":"v3-cases"}]`, 0).Err())
	_, err = s.Resources(ctx)
	require.ErrorContains(t, err, "v3-cases")
	_, err = s.LoadLayers(ctx)
	require.Error(t, err, "an unreadable layer fails the refresh, which keeps the policy in force")
}
