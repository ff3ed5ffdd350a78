package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/accounts/internal/organization"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

var orgAt = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func orgPerson(id string) organization.Person {
	return organization.Person{AccountID: id, Tenant: "tenant-test", Environment: "sandbox", DisplayName: "Person " + id,
		Email: id + "@example.com", EmailConfirmed: true}
}

// newOrganization stores an organisation of owner, with the others
// invited and joined as members.
func newOrganization(t *testing.T, s *store.Accounts, id string, owner organization.Person, members ...organization.Person) {
	t.Helper()
	ctx := context.Background()
	o, err := organization.New(id, owner, "Org "+id, orgAt)
	require.NoError(t, err)
	require.NoError(t, s.CreateOrganization(ctx, o))
	for _, m := range members {
		invite(t, s, id, owner, m, "h-"+m.AccountID)
		require.NoError(t, s.AddToPersonList(ctx, m.AccountID, id))
		_, err := s.ModifyOrganization(ctx, id, func(o organization.Organization) (organization.Organization, error) {
			o, _, err := o.Accept(m, "h-"+m.AccountID, orgAt)
			return o, err
		})
		require.NoError(t, err)
	}
}

func invite(t *testing.T, s *store.Accounts, orgID string, by, who organization.Person, tokenHash string) {
	t.Helper()
	_, err := s.ModifyOrganization(context.Background(), orgID, func(o organization.Organization) (organization.Organization, error) {
		o, _, err := o.Invite(by, organization.NewInvitation{ID: "inv_" + who.AccountID, Email: who.Email, TokenHash: tokenHash}, orgAt)
		return o, err
	})
	require.NoError(t, err)
}

// The organisation's record and its members' index are written by one
// script, so they share a slot on a cluster; Membership answers from the
// index, and a person's list shows the organisations the index names.
func TestAnOrganisationsMembersAreIndexedWithIt(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		s := store.New(rdb)
		ada, grace, alan := orgPerson("acct_ada"), orgPerson("acct_grace"), orgPerson("acct_alan")
		newOrganization(t, s, "acct_org1", ada, grace)
		newOrganization(t, s, "acct_org2", grace)

		role, ok, err := s.Membership(ctx, "acct_org1", ada.AccountID)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, organization.RoleOwner, role)
		role, ok, err = s.Membership(ctx, "acct_org1", grace.AccountID)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, organization.RoleMember, role)
		_, ok, err = s.Membership(ctx, "acct_org1", alan.AccountID)
		require.NoError(t, err)
		require.False(t, ok, "not a member")
		_, ok, err = s.Membership(ctx, "acct_nothing", ada.AccountID)
		require.NoError(t, err)
		require.False(t, ok, "no such organisation")

		orgs, err := s.OrganizationsOf(ctx, grace.AccountID)
		require.NoError(t, err)
		require.Len(t, orgs, 2)
		require.Equal(t, "acct_org1", orgs[0].ID())
		require.Equal(t, "acct_org2", orgs[1].ID())

		// Listed for a join that was refused: the list shows nothing of it.
		require.NoError(t, s.AddToPersonList(ctx, alan.AccountID, "acct_org1"))
		orgs, err = s.OrganizationsOf(ctx, alan.AccountID)
		require.NoError(t, err)
		require.Empty(t, orgs)

		// Grace leaves: the index drops her at once, her list after.
		_, err = s.ModifyOrganization(ctx, "acct_org1", func(o organization.Organization) (organization.Organization, error) { return o.Leave(grace) })
		require.NoError(t, err)
		_, ok, err = s.Membership(ctx, "acct_org1", grace.AccountID)
		require.NoError(t, err)
		require.False(t, ok)
		require.NoError(t, s.RemoveFromPersonList(ctx, grace.AccountID, "acct_org1"))
		orgs, err = s.OrganizationsOf(ctx, grace.AccountID)
		require.NoError(t, err)
		require.Len(t, orgs, 1)
	})
}

// A refused act stores nothing: neither the record nor the index moves.
func TestARefusedActOnAnOrganisationWritesNothing(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	s := store.New(rdb)
	ada, grace := orgPerson("acct_ada"), orgPerson("acct_grace")
	newOrganization(t, s, "acct_org", ada, grace)
	redistest.Unchanged(t, rdb, nil, func() {
		_, err := s.ModifyOrganization(ctx, "acct_org", func(o organization.Organization) (organization.Organization, error) { return o.Leave(ada) })
		require.ErrorIs(t, err, &organization.RefusalError{Code: organization.CodeLastOwner})
	}, "pc:acct:*")
}

// One invitation accepted by several requests at once (the person's two
// browsers, a double submit): exactly one makes the person a member,
// every other is refused on the state the winner left, and the
// invitation is spent.
func TestOfConcurrentAcceptsOfOneInvitationExactlyOneWins(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		s := store.New(rdb)
		ada, alan := orgPerson("acct_ada"), orgPerson("acct_alan")
		for round := range 10 {
			id := fmt.Sprintf("acct_org%d", round)
			newOrganization(t, s, id, ada)
			invite(t, s, id, ada, alan, "h-alan")

			const racers = 3
			errs := make([]error, racers)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range racers {
				wg.Go(func() {
					<-start
					_, errs[i] = s.ModifyOrganization(ctx, id, func(o organization.Organization) (organization.Organization, error) {
						o, _, err := o.Accept(alan, "h-alan", orgAt)
						return o, err
					})
				})
			}
			close(start)
			wg.Wait()

			won := 0
			for _, err := range errs {
				if err == nil {
					won++
					continue
				}
				require.ErrorIs(t, err, &organization.RefusalError{Code: organization.CodeInvitationNotFound}, "round %d", round)
			}
			require.Equal(t, 1, won, "round %d: %v", round, errs)
			o, err := s.Organization(ctx, id)
			require.NoError(t, err)
			require.Len(t, o.Members(), 2, "one member added")
			require.Empty(t, o.Invitations(), "the invitation is spent")
		}
	})
}

// Two owners removing each other at once: one removal is stored, the
// other is decided again on what it left, where its owner is no member,
// so the organisation keeps an owner.
func TestTwoOwnersRemovingEachOtherLeaveOneOwner(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := context.Background()
		s := store.New(rdb)
		ada, grace := orgPerson("acct_ada"), orgPerson("acct_grace")
		for round := range 10 {
			id := fmt.Sprintf("acct_org%d", round)
			newOrganization(t, s, id, ada, grace)
			_, err := s.ModifyOrganization(ctx, id, func(o organization.Organization) (organization.Organization, error) {
				return o.ChangeRole(ada, grace.AccountID, organization.RoleOwner)
			})
			require.NoError(t, err)

			errs := make([]error, 2)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, pair := range [][2]organization.Person{{ada, grace}, {grace, ada}} {
				wg.Go(func() {
					<-start
					_, errs[i] = s.ModifyOrganization(ctx, id, func(o organization.Organization) (organization.Organization, error) {
						return o.Remove(pair[0], pair[1].AccountID)
					})
				})
			}
			close(start)
			wg.Wait()

			require.True(t, (errs[0] == nil) != (errs[1] == nil), "round %d: exactly one removal: %v", round, errs)
			for _, err := range errs {
				if err != nil {
					require.ErrorIs(t, err, &organization.RefusalError{Code: organization.CodeOrganizationNotFound}, "the removed owner is no member any more")
				}
			}
			o, err := s.Organization(ctx, id)
			require.NoError(t, err)
			require.Len(t, o.Members(), 1)
			require.Equal(t, organization.RoleOwner, o.Members()[0].Role)
			for _, p := range []organization.Person{ada, grace} {
				_, inRecord := o.Role(p.AccountID)
				_, indexed, err := s.Membership(ctx, id, p.AccountID)
				require.NoError(t, err)
				require.Equal(t, inRecord, indexed, "the index says what the record says")
			}
		}
	})
}
