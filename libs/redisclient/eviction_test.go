package redisclient_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/redistest"
)

// The store of record must never be evicted from: any policy but
// noeviction is reported, naming the server; a server that hides its
// configuration (a managed service's ACL) is said to be unchecked.
func TestCheckNoEviction(t *testing.T) {
	ctx := context.Background()
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		require.NoError(t, redisclient.CheckNoEviction(ctx, rdb), "redis-server's default is noeviction")

		require.NoError(t, rdb.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err()) // one node in a cluster
		err := redisclient.CheckNoEviction(ctx, rdb)
		require.ErrorContains(t, err, "maxmemory-policy must be noeviction")
		require.ErrorContains(t, err, `has "allkeys-lru"`)
	})
	t.Run("configuration hidden", func(t *testing.T) {
		server := redistest.Start(t)
		admin := server.Client(t)
		require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "app", "on", ">secret", "~*", "&*", "+@all", "-config").Err())
		app := redis.NewClient(&redis.Options{Addr: server.Addr, Username: "app", Password: "secret"})
		t.Cleanup(func() { _ = app.Close() })
		require.ErrorIs(t, redisclient.CheckNoEviction(ctx, app), redisclient.ErrConfigHidden)
	})
}
