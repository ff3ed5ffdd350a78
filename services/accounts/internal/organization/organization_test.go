package organization_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/organization"
)

var now = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func person(id, email string) organization.Person {
	return organization.Person{AccountID: id, Tenant: "t1", Environment: "sandbox", DisplayName: "Person " + id, Email: email, EmailConfirmed: true}
}

var (
	ada   = person("acct_ada", "ada@example.com")
	grace = person("acct_grace", "grace@example.com")
	alan  = person("acct_alan", "alan@example.com")
)

// refused requires err to be the domain's refusal with code.
func refused(t *testing.T, err error, code organization.RefusalCode) {
	t.Helper()
	require.ErrorIs(t, err, &organization.RefusalError{Code: code})
}

// founded is Ada's organisation, Ada its owner.
func founded(t *testing.T) organization.Organization {
	t.Helper()
	o, err := organization.New("acct_org", ada, "Analytical Engines Ltd", now)
	require.NoError(t, err)
	return o
}

// joined is founded with Grace a member through an accepted invitation.
func joined(t *testing.T) organization.Organization {
	t.Helper()
	o := founded(t)
	o, _, err := o.Invite(ada, organization.NewInvitation{ID: "inv_grace", Email: "Grace@Example.com", TokenHash: "h-grace"}, now)
	require.NoError(t, err)
	o, _, err = o.Accept(grace, "h-grace", now.Add(time.Hour))
	require.NoError(t, err)
	return o
}

func TestTheCreatorIsTheFirstOwner(t *testing.T) {
	o := founded(t)
	role, ok := o.Role(ada.AccountID)
	require.True(t, ok)
	require.Equal(t, organization.RoleOwner, role)
	require.Equal(t, "t1", o.Tenant(), "the creator's tenant and environment")
	require.Equal(t, "sandbox", o.Environment())
	require.Len(t, o.Members(), 1)
}

func TestAnOrganisationNeedsAUsableName(t *testing.T) {
	for _, name := range []string{"", " Padded", "tab\tin", string(make([]byte, 201))} {
		_, err := organization.New("acct_org", ada, name, now)
		refused(t, err, organization.CodeInvalidOrganization)
	}
}

func TestAnInvitedPersonWithTheConfirmedAddressJoinsAsAMember(t *testing.T) {
	o := joined(t)
	role, ok := o.Role(grace.AccountID)
	require.True(t, ok)
	require.Equal(t, organization.RoleMember, role)
	require.Empty(t, o.Pending(now.Add(time.Hour)), "the invitation is spent")
	_, _, err := o.Accept(grace, "h-grace", now.Add(2*time.Hour))
	refused(t, err, organization.CodeInvitationNotFound)
}

func TestOnlyAnOwnerInvites(t *testing.T) {
	o := joined(t)
	before := o.Invitations()
	got, _, err := o.Invite(grace, organization.NewInvitation{ID: "inv_alan", Email: alan.Email, TokenHash: "h"}, now)
	refused(t, err, organization.CodeNotOwner)
	require.Equal(t, before, got.Invitations(), "nothing changed")
}

func TestOnlyAnOwnerRemovesAMember(t *testing.T) {
	o := joined(t)
	_, err := o.Remove(grace, ada.AccountID)
	refused(t, err, organization.CodeNotOwner)
}

func TestOnlyAnOwnerChangesARole(t *testing.T) {
	o := joined(t)
	_, err := o.ChangeRole(grace, grace.AccountID, organization.RoleOwner)
	refused(t, err, organization.CodeNotOwner)
}

func TestOnlyAnOwnerWithdrawsAnInvitation(t *testing.T) {
	o := joined(t)
	o, inv, err := o.Invite(ada, organization.NewInvitation{ID: "inv_alan", Email: alan.Email, TokenHash: "h-alan"}, now)
	require.NoError(t, err)
	_, err = o.Withdraw(grace, inv.ID)
	refused(t, err, organization.CodeNotOwner)
}

func TestANonMemberFindsNoOrganisation(t *testing.T) {
	o := joined(t)
	require.NoError(t, o.View(grace))
	refused(t, o.View(alan), organization.CodeOrganizationNotFound)
	_, _, err := o.Invite(alan, organization.NewInvitation{ID: "inv_x", Email: "x@example.com", TokenHash: "h"}, now)
	refused(t, err, organization.CodeOrganizationNotFound)
	_, err = o.Leave(alan)
	refused(t, err, organization.CodeOrganizationNotFound)
}

func TestAnotherTenantOrEnvironmentFindsNoOrganisation(t *testing.T) {
	o := joined(t)
	other := ada
	other.Tenant = "t2"
	refused(t, o.View(other), organization.CodeOrganizationNotFound)
	live := ada
	live.Environment = "live"
	_, err := o.Remove(live, grace.AccountID)
	refused(t, err, organization.CodeOrganizationNotFound)
}

func TestTheLastOwnerCannotLeave(t *testing.T) {
	o := joined(t)
	_, err := o.Leave(ada)
	refused(t, err, organization.CodeLastOwner)
}

func TestTheLastOwnerCannotBeDemoted(t *testing.T) {
	o := joined(t)
	_, err := o.ChangeRole(ada, ada.AccountID, organization.RoleMember)
	refused(t, err, organization.CodeLastOwner)
}

func TestTheLastOwnerCannotBeRemoved(t *testing.T) {
	o := joined(t)
	_, err := o.Remove(ada, ada.AccountID)
	refused(t, err, organization.CodeLastOwner)
}

func TestWithASecondOwnerTheFirstMayLeave(t *testing.T) {
	o := joined(t)
	o, err := o.ChangeRole(ada, grace.AccountID, organization.RoleOwner)
	require.NoError(t, err)
	o, err = o.Leave(ada)
	require.NoError(t, err)
	_, ok := o.Role(ada.AccountID)
	require.False(t, ok)
	role, _ := o.Role(grace.AccountID)
	require.Equal(t, organization.RoleOwner, role)
}

func TestAMemberMayLeave(t *testing.T) {
	o, err := joined(t).Leave(grace)
	require.NoError(t, err)
	_, ok := o.Role(grace.AccountID)
	require.False(t, ok)
}

func TestARoleIsOwnerOrMember(t *testing.T) {
	_, err := joined(t).ChangeRole(ada, grace.AccountID, "admin")
	refused(t, err, organization.CodeInvalidRole)
	_, err = organization.ParseRole("")
	refused(t, err, organization.CodeInvalidRole)
}

func TestRemovingOrChangingSomeoneWhoIsNoMemberIsRefused(t *testing.T) {
	o := joined(t)
	_, err := o.Remove(ada, alan.AccountID)
	refused(t, err, organization.CodeMemberNotFound)
	_, err = o.ChangeRole(ada, alan.AccountID, organization.RoleOwner)
	refused(t, err, organization.CodeMemberNotFound)
}

func TestAnInvitationNeedsAPlainAddress(t *testing.T) {
	_, _, err := founded(t).Invite(ada, organization.NewInvitation{ID: "inv_1", Email: "not an address", TokenHash: "h"}, now)
	require.ErrorIs(t, err, &account.RefusalError{Code: account.CodeInvalidEmail})
}

func TestAMembersAddressIsNotInvitedAgain(t *testing.T) {
	_, _, err := joined(t).Invite(ada, organization.NewInvitation{ID: "inv_2", Email: "GRACE@example.com", TokenHash: "h2"}, now)
	refused(t, err, organization.CodeAlreadyMember)
}

func TestAnAddressHasOnePendingInvitation(t *testing.T) {
	o, _, err := founded(t).Invite(ada, organization.NewInvitation{ID: "inv_1", Email: alan.Email, TokenHash: "h1"}, now)
	require.NoError(t, err)
	_, _, err = o.Invite(ada, organization.NewInvitation{ID: "inv_2", Email: alan.Email, TokenHash: "h2"}, now)
	refused(t, err, organization.CodeAlreadyInvited)
	// Once the first expired, the address may be invited again.
	o, _, err = o.Invite(ada, organization.NewInvitation{ID: "inv_3", Email: alan.Email, TokenHash: "h3"}, now.Add(organization.InvitationTTL))
	require.NoError(t, err)
	require.Len(t, o.Invitations(), 1, "the expired invitation was dropped")
}

func TestAtMostTwentyInvitationsWait(t *testing.T) {
	o := founded(t)
	for i := range organization.MaxPendingInvitations {
		var err error
		o, _, err = o.Invite(ada, organization.NewInvitation{ID: fmt.Sprint("inv_", i), Email: fmt.Sprintf("p%d@example.com", i), TokenHash: fmt.Sprint("h", i)}, now)
		require.NoError(t, err)
	}
	_, _, err := o.Invite(ada, organization.NewInvitation{ID: "inv_more", Email: "more@example.com", TokenHash: "hm"}, now)
	refused(t, err, organization.CodeTooManyInvitations)
}

func TestAtMostFiftyMembersCountingTheInvited(t *testing.T) {
	members := []organization.Member{{AccountID: ada.AccountID, Email: ada.Email, Role: organization.RoleOwner}}
	for i := 1; i < organization.MaxMembers; i++ {
		members = append(members, organization.Member{AccountID: fmt.Sprint("acct_", i), Email: fmt.Sprintf("m%d@example.com", i), Role: organization.RoleMember})
	}
	full := organization.Restore("acct_org", "t1", "sandbox", "Full", now, members, nil)
	_, _, err := full.Invite(ada, organization.NewInvitation{ID: "inv_1", Email: alan.Email, TokenHash: "h"}, now)
	refused(t, err, organization.CodeTooManyMembers)

	// An invitation made before the organisation filled up is refused at
	// its acceptance.
	invited := organization.Restore("acct_org", "t1", "sandbox", "Full", now, members,
		[]organization.Invitation{{ID: "inv_1", Email: alan.Email, TokenHash: "h", ExpiresAt: now.Add(time.Hour)}})
	_, _, err = invited.Accept(alan, "h", now)
	refused(t, err, organization.CodeTooManyMembers)
}

func TestAWrongTokenFindsNoInvitation(t *testing.T) {
	o, _, err := founded(t).Invite(ada, organization.NewInvitation{ID: "inv_1", Email: alan.Email, TokenHash: "h1"}, now)
	require.NoError(t, err)
	_, _, err = o.Accept(alan, "h-other", now)
	refused(t, err, organization.CodeInvitationNotFound)
	_, _, err = o.Accept(alan, "", now)
	refused(t, err, organization.CodeInvitationNotFound)
}

func TestAPersonOfAnotherTenantOrEnvironmentFindsNoInvitation(t *testing.T) {
	o, _, err := founded(t).Invite(ada, organization.NewInvitation{ID: "inv_1", Email: alan.Email, TokenHash: "h1"}, now)
	require.NoError(t, err)
	elsewhere := alan
	elsewhere.Tenant = "t2"
	_, _, err = o.Accept(elsewhere, "h1", now)
	refused(t, err, organization.CodeInvitationNotFound)
	live := alan
	live.Environment = "live"
	_, _, err = o.Accept(live, "h1", now)
	refused(t, err, organization.CodeInvitationNotFound)
}

func TestAnInvitationExpiresAfterSevenDays(t *testing.T) {
	o, inv, err := founded(t).Invite(ada, organization.NewInvitation{ID: "inv_1", Email: alan.Email, TokenHash: "h1"}, now)
	require.NoError(t, err)
	require.Equal(t, now.Add(7*24*time.Hour), inv.ExpiresAt)
	_, _, err = o.Accept(alan, "h1", now.Add(organization.InvitationTTL-time.Millisecond))
	require.NoError(t, err, "a moment before")
	_, _, err = o.Accept(alan, "h1", now.Add(organization.InvitationTTL))
	refused(t, err, organization.CodeInvitationExpired)
}

func TestAnUnconfirmedAddressAcceptsNothing(t *testing.T) {
	o, _, err := founded(t).Invite(ada, organization.NewInvitation{ID: "inv_1", Email: alan.Email, TokenHash: "h1"}, now)
	require.NoError(t, err)
	unconfirmed := alan
	unconfirmed.EmailConfirmed = false
	_, _, err = o.Accept(unconfirmed, "h1", now)
	refused(t, err, organization.CodeEmailNotConfirmed)
}

func TestAnInvitationIsAcceptedByItsAddressOnly(t *testing.T) {
	o, _, err := founded(t).Invite(ada, organization.NewInvitation{ID: "inv_1", Email: alan.Email, TokenHash: "h1"}, now)
	require.NoError(t, err)
	_, _, err = o.Accept(grace, "h1", now)
	refused(t, err, organization.CodeInvitationForAnother)
}

func TestAMemberIsAMemberOnce(t *testing.T) {
	// Grace, a member, changed her account's address and was invited by it.
	o := joined(t)
	o, _, err := o.Invite(ada, organization.NewInvitation{ID: "inv_2", Email: "grace@new.example.com", TokenHash: "h2"}, now)
	require.NoError(t, err)
	moved := grace
	moved.Email = "grace@new.example.com"
	_, _, err = o.Accept(moved, "h2", now)
	refused(t, err, organization.CodeAlreadyMember)
}

func TestAWithdrawnInvitationAcceptsNothing(t *testing.T) {
	o, inv, err := founded(t).Invite(ada, organization.NewInvitation{ID: "inv_1", Email: alan.Email, TokenHash: "h1"}, now)
	require.NoError(t, err)
	o, err = o.Withdraw(ada, inv.ID)
	require.NoError(t, err)
	_, _, err = o.Accept(alan, "h1", now)
	refused(t, err, organization.CodeInvitationNotFound)
	_, err = o.Withdraw(ada, inv.ID)
	refused(t, err, organization.CodeInvitationNotFound) // withdrawn once
}
