package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/redistest"
)

const adjudicatorConfig = `{"provider":"rubric","model":"pc-rubric","modelVersion":"1","instructionsDigest":"` +
	"0000000000000000000000000000000000000000000000000000000000000000" +
	`","outputSchemaVersion":"pc-adjudication-proposal-v1","temperatureMilli":0,"tools":[]}`

func TestTribunalPool(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		store := auth.NewStore(rdb, auth.DefaultStoreConfig())
		mint := func(role auth.Role, partner string, opts ...func(*auth.MintRequest)) auth.Credential {
			_, cred := authtest.Mint(t, store, role, append([]func(*auth.MintRequest){authtest.WithPartner(partner)}, opts...)...)
			return cred
		}
		adjudicator := mint(auth.RoleAdjudicator, "tribunal-ai-1", authtest.WithAgent("adjudicator-1"))
		reviewer := mint(auth.RoleReviewer, "tribunal-reviewer-1")
		live := mint(auth.RoleAdjudicator, "tribunal-ai-1", authtest.WithEnvironment(auth.Live))
		otherTenant := mint(auth.RoleReviewer, "tribunal-reviewer-1", authtest.WithTenant("tenant-other"))
		notAdded := mint(auth.RoleReviewer, "tribunal-reviewer-2")

		before := time.Now().UTC().Truncate(time.Millisecond)
		require.NoError(t, store.AddTribunalMember(ctx, adjudicator.PublicID, []byte(adjudicatorConfig)))
		require.NoError(t, store.AddTribunalMember(ctx, reviewer.PublicID, nil))
		require.NoError(t, store.AddTribunalMember(ctx, live.PublicID, []byte(adjudicatorConfig)))
		require.NoError(t, store.AddTribunalMember(ctx, otherTenant.PublicID, nil))

		pool, err := store.TribunalPool(ctx, "tenant-test", auth.Sandbox)
		require.NoError(t, err)
		want := []auth.Credential{adjudicator, reviewer}
		if want[1].PublicID < want[0].PublicID {
			want[0], want[1] = want[1], want[0]
		}
		require.Len(t, pool, 2, "only this tenant's sandbox members, and only those added (not %s)", notAdded.PublicID)
		for i, m := range pool {
			require.Equal(t, want[i], m.Credential, "sorted by public id")
			require.False(t, m.AddedAt.Before(before))
			require.False(t, m.AddedAt.After(time.Now()))
			if m.Credential.Role == auth.RoleAdjudicator {
				require.JSONEq(t, adjudicatorConfig, string(m.Configuration))
			} else {
				require.Nil(t, m.Configuration, "a reviewer has no configuration")
			}
		}

		livePool, err := store.TribunalPool(ctx, "tenant-test", auth.Live)
		require.NoError(t, err)
		require.Len(t, livePool, 1)
		require.Equal(t, live, livePool[0].Credential)

		// A new configuration is what the pool offers from then on.
		changed := `{"provider":"rubric","model":"pc-rubric","modelVersion":"2"}`
		require.NoError(t, store.ConfigureTribunalMember(ctx, adjudicator.PublicID, []byte(changed)))
		pool, err = store.TribunalPool(ctx, "tenant-test", auth.Sandbox)
		require.NoError(t, err)
		for _, m := range pool {
			if m.Credential.PublicID == adjudicator.PublicID {
				require.JSONEq(t, changed, string(m.Configuration))
			}
		}

		// A revoked member drops out without being removed.
		require.NoError(t, store.Revoke(ctx, reviewer.PublicID))
		pool, err = store.TribunalPool(ctx, "tenant-test", auth.Sandbox)
		require.NoError(t, err)
		require.Len(t, pool, 1)
		require.Equal(t, adjudicator.PublicID, pool[0].Credential.PublicID)
		// It can still be removed, and then it is gone from Redis.
		require.NoError(t, store.RemoveTribunalMember(ctx, reviewer.PublicID))

		// A removed member is out, and may be added again.
		require.NoError(t, store.RemoveTribunalMember(ctx, adjudicator.PublicID))
		pool, err = store.TribunalPool(ctx, "tenant-test", auth.Sandbox)
		require.NoError(t, err)
		require.Empty(t, pool)
		require.Empty(t, redistest.Keys(t, rdb, "pc:auth:tribunal:{tenant-test:sandbox}*"), "removal leaves no key behind")
		require.NoError(t, store.AddTribunalMember(ctx, adjudicator.PublicID, []byte(adjudicatorConfig)))
		pool, err = store.TribunalPool(ctx, "tenant-test", auth.Sandbox)
		require.NoError(t, err)
		require.Len(t, pool, 1)

		// The pool of a tenant with no members is empty, not an error.
		pool, err = store.TribunalPool(ctx, "tenant-none", auth.Sandbox)
		require.NoError(t, err)
		require.Empty(t, pool)
		_, err = store.TribunalPool(ctx, "tenant-test", "staging")
		require.Error(t, err)
	})
}

// Every refusal of the pool changes nothing in Redis.
func TestTribunalPoolRefusals(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	store := auth.NewStore(rdb, auth.DefaultStoreConfig())
	_, adjudicator := authtest.Mint(t, store, auth.RoleAdjudicator, authtest.WithPartner("tribunal-ai-1"))
	_, reviewer := authtest.Mint(t, store, auth.RoleReviewer, authtest.WithPartner("tribunal-reviewer-1"))
	_, outside := authtest.Mint(t, store, auth.RoleAdjudicator, authtest.WithPartner("tribunal-ai-2"))
	_, outsideReviewer := authtest.Mint(t, store, auth.RoleReviewer, authtest.WithPartner("tribunal-reviewer-2"))
	_, revoked := authtest.Mint(t, store, auth.RoleReviewer, authtest.WithPartner("tribunal-reviewer-3"))
	require.NoError(t, store.Revoke(ctx, revoked.PublicID))
	_, orchestrator := authtest.Mint(t, store, auth.RolePlatformOrchestrator)
	_, claimant := authtest.Mint(t, store, auth.RoleClaimantAgent)
	require.NoError(t, store.AddTribunalMember(ctx, adjudicator.PublicID, []byte(adjudicatorConfig)))
	require.NoError(t, store.AddTribunalMember(ctx, reviewer.PublicID, nil))
	config := []byte(adjudicatorConfig)

	for _, tc := range []struct {
		name string
		act  func() error
		want error
	}{
		{"add an unknown credential", func() error { return store.AddTribunalMember(ctx, "cred_unknown", config) }, auth.ErrNotFound},
		{"add an orchestrator", func() error { return store.AddTribunalMember(ctx, orchestrator.PublicID, config) }, auth.ErrNotTribunal},
		{"add a claimant agent", func() error { return store.AddTribunalMember(ctx, claimant.PublicID, nil) }, auth.ErrNotTribunal},
		{"add a revoked reviewer", func() error { return store.AddTribunalMember(ctx, revoked.PublicID, nil) }, auth.ErrInvalidCredential},
		{"add an adjudicator without configuration", func() error { return store.AddTribunalMember(ctx, outside.PublicID, nil) }, auth.ErrConfiguration},
		{"add an adjudicator with a configuration that is not JSON", func() error { return store.AddTribunalMember(ctx, outside.PublicID, []byte("{model: x}")) }, auth.ErrConfiguration},
		{"add a reviewer with a configuration", func() error { return store.AddTribunalMember(ctx, outsideReviewer.PublicID, config) }, auth.ErrConfiguration},
		{"add a member twice", func() error { return store.AddTribunalMember(ctx, adjudicator.PublicID, config) }, auth.ErrAlreadyMember},
		{"add a reviewer twice", func() error { return store.AddTribunalMember(ctx, reviewer.PublicID, nil) }, auth.ErrAlreadyMember},
		{"configure a reviewer", func() error { return store.ConfigureTribunalMember(ctx, reviewer.PublicID, config) }, auth.ErrConfiguration},
		{"configure with nothing", func() error { return store.ConfigureTribunalMember(ctx, adjudicator.PublicID, nil) }, auth.ErrConfiguration},
		{"configure with what is not JSON", func() error { return store.ConfigureTribunalMember(ctx, adjudicator.PublicID, []byte("{")) }, auth.ErrConfiguration},
		{"configure an adjudicator outside the pool", func() error { return store.ConfigureTribunalMember(ctx, outside.PublicID, config) }, auth.ErrNotFound},
		{"configure an orchestrator", func() error { return store.ConfigureTribunalMember(ctx, orchestrator.PublicID, config) }, auth.ErrNotTribunal},
		{"configure an unknown credential", func() error { return store.ConfigureTribunalMember(ctx, "cred_unknown", config) }, auth.ErrNotFound},
		{"remove a credential outside the pool", func() error { return store.RemoveTribunalMember(ctx, outside.PublicID) }, auth.ErrNotFound},
		{"remove an orchestrator", func() error { return store.RemoveTribunalMember(ctx, orchestrator.PublicID) }, auth.ErrNotFound},
		{"remove an unknown credential", func() error { return store.RemoveTribunalMember(ctx, "cred_unknown") }, auth.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			redistest.Unchanged(t, rdb, nil, func() {
				require.ErrorIs(t, tc.act(), tc.want)
			})
		})
	}
}
