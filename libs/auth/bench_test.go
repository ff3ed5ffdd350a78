package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/redistest"
)

// A cached lookup is what most partner requests pay; an uncached one (two
// Redis round trips) is the price of the 2 s revocation bound.
func BenchmarkAuthenticateCached(b *testing.B) {
	benchAuthenticate(b, auth.DefaultStoreConfig())
}

func BenchmarkAuthenticateUncached(b *testing.B) {
	benchAuthenticate(b, auth.StoreConfig{CacheTTL: time.Nanosecond})
}

func benchAuthenticate(b *testing.B, cfg auth.StoreConfig) {
	store := auth.NewStore(redistest.NewClient(b), cfg)
	token, _ := authtest.Mint(b, store, auth.RoleClaimantAgent)
	ctx := context.Background()
	for b.Loop() {
		if _, err := store.Authenticate(ctx, token); err != nil {
			b.Fatal(err)
		}
	}
}
