// Package organization is the pure domain of organisation accounts: an
// organisation (an account, acct_…, of a tenant and environment) created
// by a person, its members (people's individual accounts) each with a
// role, and the invitations by e-mail address through which people join.
//
// The rules:
//
//   - the person who creates an organisation is its first owner;
//   - only an owner invites, withdraws an invitation, removes a member or
//     changes a member's role; any member may leave;
//   - the last owner can neither leave, nor be demoted, nor be removed:
//     an organisation always has an owner;
//   - a person is a member at most once, and an address has at most one
//     pending invitation;
//   - an invitation names an address and is accepted only by a signed-in
//     person of the organisation's tenant and environment whose account's
//     address is confirmed and is that address; it expires InvitationTTL
//     after it was made, and is spent by its acceptance or withdrawal;
//   - an organisation has at most MaxMembers members, counting the pending
//     invitations (so every invitation can be accepted), and at most
//     MaxPendingInvitations pending invitations.
//
// The package does no I/O. Each act takes the organisation, the person
// acting and the instant and returns the next organisation or a refusal,
// checked in the order the act's documentation gives; on a refusal the
// organisation returned is the one given, so a store applies the result
// in one atomic step. docs/accounts.md ("Organisations and members")
// describes the rules and docs/problems.md the refusals.
package organization

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/refusal"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
)

// RefusalCode names why an act was refused.
type RefusalCode string

// The refusals. Each act lists the ones it checks, in its order.
const (
	// CodeInvalidOrganization: the display name is not 1 to 200 printable
	// characters without surrounding spaces.
	CodeInvalidOrganization RefusalCode = "invalid_organization"
	// CodeInvalidRole: a role that is not owner or member.
	CodeInvalidRole RefusalCode = "invalid_role"
	// CodeOrganizationNotFound: the organisation is of another tenant or
	// environment, or the person is not its member: it does not exist for
	// them.
	CodeOrganizationNotFound RefusalCode = "organization_not_found"
	// CodeNotOwner: the act is an owner's and the person is a member only.
	CodeNotOwner RefusalCode = "not_organization_owner"
	// CodeMemberNotFound: the person acted on is not a member.
	CodeMemberNotFound RefusalCode = "member_not_found"
	// CodeLastOwner: the act would leave the organisation without an owner.
	CodeLastOwner RefusalCode = "last_owner"
	// CodeAlreadyMember: the person, or the address invited, is a member
	// already.
	CodeAlreadyMember RefusalCode = "already_member"
	// CodeAlreadyInvited: a pending invitation names the address already.
	CodeAlreadyInvited RefusalCode = "already_invited"
	// CodeTooManyMembers: MaxMembers members and pending invitations.
	CodeTooManyMembers RefusalCode = "too_many_members"
	// CodeTooManyInvitations: MaxPendingInvitations pending invitations.
	CodeTooManyInvitations RefusalCode = "too_many_invitations"
	// CodeInvitationNotFound: no pending invitation of the organisation
	// has this token (it never did, or was accepted or withdrawn), or the
	// person is of another tenant or environment.
	CodeInvitationNotFound RefusalCode = "invitation_not_found"
	// CodeInvitationExpired: the invitation is InvitationTTL old.
	CodeInvitationExpired RefusalCode = "invitation_expired"
	// CodeEmailNotConfirmed: the person's address is not confirmed, so it
	// proves nothing yet.
	CodeEmailNotConfirmed RefusalCode = "email_not_confirmed"
	// CodeInvitationForAnother: the invitation names another address than
	// the person's.
	CodeInvitationForAnother RefusalCode = "invitation_for_another_address"
)

// RefusalError is a refused act of this domain.
type RefusalError = refusal.Error[RefusalCode]

// The bounds.
const (
	// MaxMembers bounds an organisation's members with its pending
	// invitations: a team that argues cases together, not a directory.
	MaxMembers = 50
	// MaxPendingInvitations bounds the invitations waiting for an answer,
	// and with them the e-mails one owner sends before people answer.
	MaxPendingInvitations = 20
	// InvitationTTL is how long an invitation can be accepted.
	InvitationTTL = 7 * 24 * time.Hour
)

// Role is what a member may do in the organisation.
type Role string

// The roles: an owner manages the members and invitations; a member acts
// for the organisation where its cases let it. Both act for it.
const (
	RoleOwner  Role = "owner"
	RoleMember Role = "member"
)

// ParseRole returns the role s names. Refusals: invalid_role.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleOwner, RoleMember:
		return r, nil
	}
	return "", refusal.New(CodeInvalidRole, "a role is owner or member")
}

// Person is the signed-in person acting: an individual account, as its
// session names it.
type Person struct {
	AccountID   string
	Tenant      string
	Environment string
	DisplayName string
	// Email is the account's address, normalised; EmailConfirmed whether a
	// code sent to it was typed back (only then is the address the
	// person's).
	Email          string
	EmailConfirmed bool
}

// Member is a person in the organisation.
type Member struct {
	AccountID   string
	DisplayName string // as it was when the person joined
	// Email is the confirmed address the person joined with; a later
	// invitation to it is already_member.
	Email    string
	Role     Role
	JoinedAt time.Time
}

// Invitation is an address invited to join as a member. Only the SHA-256
// of its token is kept; the token itself is in the e-mail alone.
type Invitation struct {
	ID        string
	Email     string
	TokenHash string
	InvitedBy string // the owner's account id
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Organization is an organisation account with its members and its
// invitations. Its fields are read through its methods, so that no caller
// changes its members without the rules.
type Organization struct {
	id          string
	tenant      string
	environment string
	displayName string
	createdAt   time.Time
	members     []Member
	invitations []Invitation
}

// Restore rebuilds an organisation from what a store kept; it checks
// nothing, the acts having checked it when they made it.
func Restore(id, tenant, env, displayName string, createdAt time.Time, members []Member, invitations []Invitation) Organization {
	return Organization{id: id, tenant: tenant, environment: env, displayName: displayName, createdAt: createdAt,
		members: slices.Clone(members), invitations: slices.Clone(invitations)}
}

// ID is the organisation's account id.
func (o Organization) ID() string { return o.id }

// Tenant is the organisation's tenant.
func (o Organization) Tenant() string { return o.tenant }

// Environment is the organisation's environment.
func (o Organization) Environment() string { return o.environment }

// DisplayName is the organisation's name.
func (o Organization) DisplayName() string { return o.displayName }

// CreatedAt is when the organisation was created.
func (o Organization) CreatedAt() time.Time { return o.createdAt }

// Members are the members in the order they joined.
func (o Organization) Members() []Member { return slices.Clone(o.members) }

// Invitations are every invitation kept, expired ones included, oldest
// first.
func (o Organization) Invitations() []Invitation { return slices.Clone(o.invitations) }

// Pending are the invitations that can still be accepted at now.
func (o Organization) Pending(now time.Time) []Invitation {
	var out []Invitation
	for _, inv := range o.invitations {
		if now.Before(inv.ExpiresAt) {
			out = append(out, inv)
		}
	}
	return out
}

// Role returns the role of account accountID in the organisation, and
// whether it is a member at all.
func (o Organization) Role(accountID string) (Role, bool) {
	i := o.member(accountID)
	if i < 0 {
		return "", false
	}
	return o.members[i].Role, true
}

func (o Organization) member(accountID string) int {
	return slices.IndexFunc(o.members, func(m Member) bool { return accountID != "" && m.AccountID == accountID })
}

func (o Organization) owners() int {
	n := 0
	for _, m := range o.members {
		if m.Role == RoleOwner {
			n++
		}
	}
	return n
}

var namePattern = regexp.MustCompile(`^[^\x00-\x1f\x7f]{1,200}$`)

// New returns an organisation created by a person, who is its first
// owner. Refusals: invalid_organization.
func New(id string, creator Person, displayName string, now time.Time) (Organization, error) {
	if !namePattern.MatchString(displayName) || strings.TrimSpace(displayName) != displayName {
		return Organization{}, refusal.New(CodeInvalidOrganization, "an organisation's name must be 1 to 200 printable characters without leading or trailing spaces")
	}
	return Organization{id: id, tenant: creator.Tenant, environment: creator.Environment, displayName: displayName, createdAt: now,
		members: []Member{{AccountID: creator.AccountID, DisplayName: creator.DisplayName, Email: creator.Email, Role: RoleOwner, JoinedAt: now}}}, nil
}

// View says whether the person may see the organisation: a member of its
// tenant and environment. Refusals: organization_not_found.
func (o Organization) View(p Person) error {
	if p.Tenant != o.tenant || p.Environment != o.environment || o.member(p.AccountID) < 0 {
		return refusal.New(CodeOrganizationNotFound, "no organisation %s has you as a member", o.id)
	}
	return nil
}

// owner checks that the person may manage the organisation. Refusals, in
// order: organization_not_found (View), not_organization_owner.
func (o Organization) owner(p Person) error {
	if err := o.View(p); err != nil {
		return err
	}
	if role, _ := o.Role(p.AccountID); role != RoleOwner {
		return refusal.New(CodeNotOwner, "only an owner of %s may do this; you are a member", o.displayName)
	}
	return nil
}

// NewInvitation is what an owner's invitation is made of: its id, the
// address and the SHA-256 of the token the e-mail carries.
type NewInvitation struct {
	ID        string
	Email     string
	TokenHash string
}

// Invite records an owner's invitation of an address to join as a
// member, expiring InvitationTTL from now; the expired invitations are
// dropped. Refusals, in order: organization_not_found,
// not_organization_owner (owner); invalid_email; already_member (a member
// joined with the address); already_invited (a pending invitation names
// it); too_many_invitations; too_many_members (members and pending
// invitations).
func (o Organization) Invite(by Person, n NewInvitation, now time.Time) (Organization, Invitation, error) {
	if err := o.owner(by); err != nil {
		return o, Invitation{}, err
	}
	email, err := account.NormalizeEmail(n.Email)
	if err != nil {
		return o, Invitation{}, err
	}
	if slices.ContainsFunc(o.members, func(m Member) bool { return m.Email == email }) {
		return o, Invitation{}, refusal.New(CodeAlreadyMember, "%s is the address of a member already", email)
	}
	pending := o.Pending(now)
	if slices.ContainsFunc(pending, func(inv Invitation) bool { return inv.Email == email }) {
		return o, Invitation{}, refusal.New(CodeAlreadyInvited, "%s is invited already; withdraw that invitation to send a new one", email)
	}
	if len(pending) >= MaxPendingInvitations {
		return o, Invitation{}, refusal.New(CodeTooManyInvitations, "%d invitations are waiting for an answer, the most an organisation keeps; withdraw one first", MaxPendingInvitations)
	}
	if len(o.members)+len(pending) >= MaxMembers {
		return o, Invitation{}, refusal.New(CodeTooManyMembers, "an organisation has at most %d members, pending invitations included", MaxMembers)
	}
	inv := Invitation{ID: n.ID, Email: email, TokenHash: n.TokenHash, InvitedBy: by.AccountID, CreatedAt: now, ExpiresAt: now.Add(InvitationTTL)}
	o.invitations = append(pending, inv)
	return o, inv, nil
}

// Withdraw removes an invitation, pending or expired, so its token
// accepts nothing. Refusals, in order: organization_not_found,
// not_organization_owner (owner); invitation_not_found.
func (o Organization) Withdraw(by Person, invitationID string) (Organization, error) {
	if err := o.owner(by); err != nil {
		return o, err
	}
	i := slices.IndexFunc(o.invitations, func(inv Invitation) bool { return inv.ID == invitationID })
	if i < 0 {
		return o, refusal.New(CodeInvitationNotFound, "%s has no invitation %s: it was accepted or withdrawn", o.displayName, invitationID)
	}
	o.invitations = slices.Delete(slices.Clone(o.invitations), i, i+1)
	return o, nil
}

// Invited returns the invitation whose token has the SHA-256 tokenHash,
// as a person of the organisation's tenant and environment may see it
// before accepting. Refusals, in order: invitation_not_found (another
// tenant or environment, or no invitation has the token),
// invitation_expired.
func (o Organization) Invited(p Person, tokenHash string, now time.Time) (Invitation, error) {
	i := slices.IndexFunc(o.invitations, func(inv Invitation) bool { return tokenHash != "" && inv.TokenHash == tokenHash })
	if p.Tenant != o.tenant || p.Environment != o.environment || i < 0 {
		return Invitation{}, refusal.New(CodeInvitationNotFound, "this invitation link is not one of a pending invitation: it was accepted or withdrawn, or never existed")
	}
	inv := o.invitations[i]
	if !now.Before(inv.ExpiresAt) {
		return Invitation{}, refusal.New(CodeInvitationExpired, "the invitation expired on %s UTC; ask an owner of the organisation for a new one", inv.ExpiresAt.UTC().Format("2 January 2006, 15:04"))
	}
	return inv, nil
}

// Accept makes the person a member through the invitation whose token
// has the SHA-256 tokenHash, and spends the invitation. Refusals, in
// order: invitation_not_found, invitation_expired (Invited);
// email_not_confirmed; invitation_for_another_address; already_member;
// too_many_members.
func (o Organization) Accept(p Person, tokenHash string, now time.Time) (Organization, Member, error) {
	inv, err := o.Invited(p, tokenHash, now)
	if err != nil {
		return o, Member{}, err
	}
	if !p.EmailConfirmed || p.Email == "" {
		return o, Member{}, refusal.New(CodeEmailNotConfirmed, "confirm your account's address on your account page first: an invitation is accepted by the address it was sent to")
	}
	if p.Email != inv.Email {
		return o, Member{}, refusal.New(CodeInvitationForAnother, "this invitation was sent to another address than your account's; sign in with the account of the address it was sent to")
	}
	if o.member(p.AccountID) >= 0 {
		return o, Member{}, refusal.New(CodeAlreadyMember, "you are a member of %s already", o.displayName)
	}
	if len(o.members) >= MaxMembers {
		return o, Member{}, refusal.New(CodeTooManyMembers, "an organisation has at most %d members", MaxMembers)
	}
	m := Member{AccountID: p.AccountID, DisplayName: p.DisplayName, Email: p.Email, Role: RoleMember, JoinedAt: now}
	o.members = append(slices.Clone(o.members), m)
	o.invitations = slices.DeleteFunc(slices.Clone(o.invitations), func(i Invitation) bool { return i.ID == inv.ID })
	return o, m, nil
}

// Remove takes a member out of the organisation. An owner removing
// themself is leaving (Leave). Refusals, in order: organization_not_found,
// not_organization_owner (owner); member_not_found; last_owner.
func (o Organization) Remove(by Person, accountID string) (Organization, error) {
	if err := o.owner(by); err != nil {
		return o, err
	}
	return o.remove(accountID)
}

// Leave takes the person out of the organisation. Refusals, in order:
// organization_not_found (View); last_owner.
func (o Organization) Leave(p Person) (Organization, error) {
	if err := o.View(p); err != nil {
		return o, err
	}
	return o.remove(p.AccountID)
}

func (o Organization) remove(accountID string) (Organization, error) {
	i := o.member(accountID)
	if i < 0 {
		return o, refusal.New(CodeMemberNotFound, "%s has no member %s", o.displayName, accountID)
	}
	if o.members[i].Role == RoleOwner && o.owners() == 1 {
		return o, lastOwner(o)
	}
	o.members = slices.Delete(slices.Clone(o.members), i, i+1)
	return o, nil
}

// ChangeRole gives a member another role. Refusals, in order:
// organization_not_found, not_organization_owner (owner); invalid_role;
// member_not_found; last_owner (the last owner made a member).
func (o Organization) ChangeRole(by Person, accountID string, role Role) (Organization, error) {
	if err := o.owner(by); err != nil {
		return o, err
	}
	if _, err := ParseRole(string(role)); err != nil {
		return o, err
	}
	i := o.member(accountID)
	if i < 0 {
		return o, refusal.New(CodeMemberNotFound, "%s has no member %s", o.displayName, accountID)
	}
	if o.members[i].Role == RoleOwner && role != RoleOwner && o.owners() == 1 {
		return o, lastOwner(o)
	}
	o.members = slices.Clone(o.members)
	o.members[i].Role = role
	return o, nil
}

func lastOwner(o Organization) error {
	return refusal.New(CodeLastOwner, "%s would have no owner left; make another member an owner first", o.displayName)
}
