package redistest_test

import (
	"context"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
)

// The cluster is real: keys spread over its three primaries, and a script
// over keys of two slots is refused with CROSSSLOT, as in production.
func TestClusterSpreadsSlotsAndRefusesCrossSlotScripts(t *testing.T) {
	rdb := redistest.NewClusterClient(t)
	ctx := context.Background()
	masters := map[string]bool{}
	var mu sync.Mutex // ForEachMaster visits the primaries concurrently
	require.NoError(t, rdb.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		masters[c.Options().Addr] = true
		return nil
	}))
	require.Len(t, masters, 3)

	script := redis.NewScript(`redis.call('SET', KEYS[1], 1); redis.call('SET', KEYS[2], 2); return 1`)
	require.NoError(t, script.Run(ctx, rdb, []string{"pc:{a}:one", "pc:{a}:two"}).Err(), "one hash tag, one slot")
	err := script.Run(ctx, rdb, []string{"pc:{a}:one", "pc:{b}:two"}).Err()
	require.ErrorContains(t, err, "CROSSSLOT")
}
