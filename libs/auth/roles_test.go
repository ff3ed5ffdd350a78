package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/redistest"
)

func TestRoles(t *testing.T) {
	for _, tc := range []struct {
		role            auth.Role
		valid, tribunal bool
	}{
		{auth.RolePlatformOrchestrator, true, false},
		{auth.RoleClaimantAgent, true, false},
		{auth.RoleRespondentAgent, true, false},
		{auth.RoleAdjudicator, true, true},
		{auth.RoleReviewer, true, true},
		{"judge", false, false},
		{"", false, false},
	} {
		require.Equal(t, tc.valid, tc.role.Valid(), tc.role)
		require.Equal(t, tc.tribunal, tc.role.Tribunal(), tc.role)
	}
	err := auth.MintRequest{Tenant: "t", Environment: auth.Sandbox, Role: "judge", PartnerID: "p"}.Validate()
	require.ErrorContains(t, err, "platform_orchestrator, claimant_agent, respondent_agent, adjudicator, reviewer")
}

// A tribunal member is never a party: it acts for neither side of any
// resource, whatever membership or capability names it.
func TestTribunalMembersActForNoSide(t *testing.T) {
	ctx := context.Background()
	store := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	const draft = "draft:dr_1"
	for _, role := range []auth.Role{auth.RoleAdjudicator, auth.RoleReviewer} {
		_, cred := authtest.Mint(t, store, role, authtest.WithPartner("tribunal-"+string(role)))
		for _, side := range []auth.Side{auth.Claimant, auth.Respondent} {
			require.NoError(t, store.Grant(ctx, auth.Membership{Resource: draft, Side: side, Subject: auth.CredentialSubject(cred.PublicID), ExpiresAt: time.Now().Add(time.Hour)}))
			capability, err := store.MintCapability(ctx, auth.Capability{Resource: draft, Side: side, Purpose: "respondent_invite", ExpiresAt: time.Now().Add(time.Hour)})
			require.NoError(t, err)
			require.ErrorIs(t, store.AuthorizeSide(ctx, cred, draft, side, capability), auth.ErrForbidden, "%s for the %s side", role, side)
		}
	}
}

// A partner id is a party's or the tribunal's, never both, in a tenant
// and environment: a tribunal member never shares a party's endpoints,
// deliveries or participants.
func TestPartnerIDIsAPartysOrTheTribunals(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	store := auth.NewStore(rdb, auth.DefaultStoreConfig())
	mint := func(role auth.Role, partner string, env auth.Environment) error {
		_, _, err := store.Mint(ctx, auth.MintRequest{Tenant: "tenant-a", Environment: env, Role: role, PartnerID: partner})
		return err
	}
	require.NoError(t, mint(auth.RolePlatformOrchestrator, "acme", auth.Sandbox))
	require.NoError(t, mint(auth.RoleClaimantAgent, "acme", auth.Sandbox), "party roles share their partner's id")
	require.ErrorIs(t, mint(auth.RoleAdjudicator, "acme", auth.Sandbox), auth.ErrPartnerIDTaken)
	require.ErrorIs(t, mint(auth.RoleReviewer, "acme", auth.Sandbox), auth.ErrPartnerIDTaken)

	require.NoError(t, mint(auth.RoleAdjudicator, "tribunal-ai-1", auth.Sandbox))
	require.NoError(t, mint(auth.RoleAdjudicator, "tribunal-ai-1", auth.Sandbox), "a second credential of the member (rotation)")
	for _, role := range []auth.Role{auth.RolePlatformOrchestrator, auth.RoleClaimantAgent, auth.RoleRespondentAgent} {
		require.ErrorIs(t, mint(role, "tribunal-ai-1", auth.Sandbox), auth.ErrPartnerIDTaken, role)
	}
	require.NoError(t, mint(auth.RolePlatformOrchestrator, "tribunal-ai-1", auth.Live), "another environment")

	// A party partner whose credentials were minted before partner ids
	// were claimed has no claim; its credentials still keep the id.
	require.NoError(t, mint(auth.RoleRespondentAgent, "legacy", auth.Sandbox))
	require.NoError(t, rdb.Del(ctx, "pc:auth:partner:tenant-a:sandbox:legacy").Err())
	require.ErrorIs(t, mint(auth.RoleReviewer, "legacy", auth.Sandbox), auth.ErrPartnerIDTaken)

	creds, err := store.List(ctx, "tenant-a")
	require.NoError(t, err)
	require.Len(t, creds, 6, "the refused mintings stored nothing")
}
