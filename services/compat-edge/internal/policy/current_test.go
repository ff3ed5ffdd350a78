package policy_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
)

// The policy in force follows the durable layer and keeps the last good
// one while that layer cannot be read.
func TestCurrentFollowsTheDurableLayer(t *testing.T) {
	ctx := context.Background()
	var durable map[inventory.Family]policy.Settings
	var failure error
	load := func(context.Context) (policy.Layers, error) { return policy.Layers{Admin: durable}, failure }
	env := policy.Env{CanonicalRoutes: "true", FamilyGA: map[inventory.Family]string{inventory.V2Cases: "2026-01-15"}}
	c := policy.NewCurrent(env, load, time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil)))

	require.Equal(t, "SERVICE_API_V2_CASES_GA", c.Policy().Window(inventory.V2Cases).Source, "the environment alone until the first refresh")

	durable = map[inventory.Family]policy.Settings{inventory.V2Cases: {GA: date(t, "2026-04-01"), Stage: policy.Retired}}
	require.NoError(t, c.Refresh(ctx))
	w := c.Policy().Window(inventory.V2Cases)
	require.Equal(t, "2026-04-01", w.GA.String())
	require.Equal(t, policy.Retired, w.Stage)

	held := c.Policy()
	failure = errors.New("redis down")
	require.Error(t, c.Refresh(ctx))
	require.Same(t, held, c.Policy(), "an unreadable store changes nothing")

	failure = nil
	require.NoError(t, c.Refresh(ctx))
	require.Same(t, held, c.Policy(), "an unchanged store is not rebuilt")
	durable = nil
	require.NoError(t, c.Refresh(ctx))
	require.Equal(t, "2026-01-15", c.Policy().Window(inventory.V2Cases).GA.String(), "settings removed: back to the environment")
}
