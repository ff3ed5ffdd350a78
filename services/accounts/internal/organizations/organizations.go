// Package organizations is the application layer of organisations,
// between people's pages under /account (internal/httpapi) and the
// domain (internal/organization): it loads the organisation, has the
// domain decide the act for the signed-in person, stores the result in
// one step, and sends the invitations' e-mails.
//
//	create: Create (the person its first owner)
//	invite: Invite (a token made, only its SHA-256 kept, the e-mail sent
//	with the accept page's link) → the person opens the link, signed in
//	→ Invitation (what the page shows) → Accept
//	manage: Withdraw, Remove, ChangeRole, Leave
//	decide: MayActFor, which the rest of the platform's checks build on.
//
// Every act is for the deployment's tenant and environment, those of the
// people's pages (people.Config): the person acting is the signed-in
// account the pages read from its session.
package organizations

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/mail"
	"github.com/pcourt/pcourt/libs/refusal"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/organization"
	"github.com/pcourt/pcourt/services/accounts/internal/people"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

// TokenPrefix is an invitation token's prefix.
const TokenPrefix = "pcoi_"

// Config is what the acts need of the deployment.
type Config struct {
	// Tenant and Environment are the people's pages'.
	Tenant      string
	Environment string
	// PagesURL is where browsers reach the pages (the public base URL):
	// the invitation e-mail's link is PagesURL + AcceptPath(orgID).
	PagesURL string
}

// AcceptPath is the path of the page that accepts an invitation to
// organisation orgID (its token in the query, ?token=).
func AcceptPath(orgID string) string {
	return "/account/organizations/" + url.PathEscape(orgID) + "/invitation"
}

// Errors of the acts, beside the domain's refusals.
var (
	// ErrInvitationsOff is an invitation asked of a deployment that sends
	// no e-mail: the token would reach nobody.
	ErrInvitationsOff = errors.New("this deployment sends no e-mail, so no invitations")
	// ErrInvitationNotSent is an invitation whose e-mail the SMTP server
	// did not take; the invitation was withdrawn again, since its token
	// is in that e-mail alone.
	ErrInvitationNotSent = errors.New("the invitation e-mail was not sent")
)

// Mailer sends an e-mail (libs/mail's Sender, the one of the sign-in
// codes).
type Mailer interface {
	Send(ctx context.Context, m mail.Message) error
}

// Service runs the acts.
type Service struct {
	cfg   Config
	store *store.Accounts
	// credentials revokes the sessions a member acted for an
	// organisation with, once they are a member no more.
	credentials *auth.Store
	mailer      Mailer
	logger      *slog.Logger
	now         func() time.Time
}

// New returns the service; a nil mailer means no invitations can be sent
// (the pages say so). now nil means time.Now.
func New(cfg Config, s *store.Accounts, credentials *auth.Store, mailer Mailer, logger *slog.Logger, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{cfg: cfg, store: s, credentials: credentials, mailer: mailer, logger: logger, now: now}
}

// EndActing revokes every session person personID acted for
// organisation orgID with: called once the person is a member no more,
// so no service (which cannot read the organisation's members) keeps
// taking them beyond the credential cache's two seconds.
func (s *Service) EndActing(ctx context.Context, orgID, personID string) error {
	ids, err := s.store.TakeActingSessions(ctx, orgID, personID)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := s.credentials.Revoke(ctx, id); err != nil && !errors.Is(err, auth.ErrNotFound) {
			return fmt.Errorf("ending a session %s acted for %s with: %w", personID, orgID, err)
		}
	}
	if len(ids) > 0 {
		s.logger.InfoContext(ctx, "a former member's sessions for the organisation ended", "organization_id", orgID, "account_id", personID, "sessions", len(ids))
	}
	return nil
}

// SendsInvitations reports whether the deployment sends invitations.
func (s *Service) SendsInvitations() bool { return s.mailer != nil }

// Pending are the organisation's invitations that can still be accepted.
func (s *Service) Pending(o organization.Organization) []organization.Invitation {
	return o.Pending(s.now())
}

func (s *Service) instant() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// PersonOf is the signed-in account as the domain sees it.
func PersonOf(a account.Account) organization.Person {
	return organization.Person{AccountID: a.ID, Tenant: a.Tenant, Environment: a.Environment, DisplayName: a.DisplayName,
		Email: a.Email, EmailConfirmed: a.IsPerson() && !a.EmailVerifiedAt.IsZero()}
}

// notFound is an organisation that does not exist, answered as the
// domain answers one the person may not see.
func notFound(id string) error {
	return refusal.New(organization.CodeOrganizationNotFound, "no organisation %s has you as a member", id)
}

func (s *Service) load(ctx context.Context, id string) (organization.Organization, error) {
	o, err := s.store.Organization(ctx, id)
	if errors.Is(err, store.ErrOrganizationNotFound) {
		return organization.Organization{}, notFound(id)
	}
	return o, err
}

// modify applies an act to the organisation; one that does not exist is
// organization_not_found, as one the person may not see.
func (s *Service) modify(ctx context.Context, id string, act func(organization.Organization) (organization.Organization, error)) (organization.Organization, error) {
	o, err := s.store.ModifyOrganization(ctx, id, act)
	if errors.Is(err, store.ErrOrganizationNotFound) {
		return organization.Organization{}, notFound(id)
	}
	return o, err
}

// Create makes an organisation with the signed-in person as its first
// owner. Refusals: invalid_organization.
func (s *Service) Create(ctx context.Context, a account.Account, displayName string) (organization.Organization, error) {
	o, err := organization.New("acct_"+rand.Text(), PersonOf(a), displayName, s.instant())
	if err != nil {
		return organization.Organization{}, err
	}
	if err := s.store.CreateOrganization(ctx, o); err != nil {
		return organization.Organization{}, err
	}
	s.logger.InfoContext(ctx, "organisation created", "organization_id", o.ID(), "account_id", a.ID)
	return o, nil
}

// List returns the organisations the person is a member of, by name.
func (s *Service) List(ctx context.Context, a account.Account) ([]organization.Organization, error) {
	return s.store.OrganizationsOf(ctx, a.ID)
}

// Get returns an organisation the person is a member of. Refusals:
// organization_not_found.
func (s *Service) Get(ctx context.Context, a account.Account, id string) (organization.Organization, error) {
	o, err := s.load(ctx, id)
	if err != nil {
		return organization.Organization{}, err
	}
	if err := o.View(PersonOf(a)); err != nil {
		return organization.Organization{}, err
	}
	return o, nil
}

// Invite invites an address to the organisation as a member and e-mails
// it the accept page's link with the invitation's token, of which only
// the SHA-256 is kept. The e-mail is sent before the answer, so the owner
// learns whether it left: if the SMTP server does not take it, the
// invitation is withdrawn again (ErrInvitationNotSent), as nobody else
// holds its token. Refusals: ErrInvitationsOff, then Organization.Invite's.
func (s *Service) Invite(ctx context.Context, a account.Account, orgID, email string) (organization.Invitation, error) {
	if !s.SendsInvitations() {
		return organization.Invitation{}, ErrInvitationsOff
	}
	by := PersonOf(a)
	token := auth.NewToken(TokenPrefix)
	var inv organization.Invitation
	o, err := s.modify(ctx, orgID, func(o organization.Organization) (organization.Organization, error) {
		next, made, err := o.Invite(by, organization.NewInvitation{ID: "inv_" + rand.Text(), Email: email, TokenHash: auth.HashToken(token)}, s.instant())
		inv = made
		return next, err
	})
	if err != nil {
		return organization.Invitation{}, err
	}
	if err := s.mailer.Send(ctx, invitationMessage(inv, o, a, s.cfg.PagesURL+AcceptPath(o.ID())+"?token="+token)); err != nil {
		s.logger.ErrorContext(ctx, "invitation e-mail failed; withdrawing the invitation", "organization_id", orgID, "invitation_id", inv.ID, "err", err)
		if _, werr := s.modify(context.WithoutCancel(ctx), orgID, func(o organization.Organization) (organization.Organization, error) {
			return o.Withdraw(by, inv.ID)
		}); werr != nil {
			return organization.Invitation{}, fmt.Errorf("%w (%w), and withdrawing it failed: %w", ErrInvitationNotSent, err, werr)
		}
		return organization.Invitation{}, fmt.Errorf("%w: %w", ErrInvitationNotSent, err)
	}
	s.logger.InfoContext(ctx, "member invited", "organization_id", orgID, "invitation_id", inv.ID, "account_id", a.ID)
	return inv, nil
}

func invitationMessage(inv organization.Invitation, o organization.Organization, by account.Account, link string) mail.Message {
	return mail.Message{To: inv.Email, Subject: "You are invited to join " + o.DisplayName() + " on pcourt",
		Body: by.DisplayName + " invites you to join the organisation " + o.DisplayName() + " on pcourt as a member.\n\n" +
			"To accept, sign in to your pcourt account whose address is this one, " + inv.Email + ", and confirmed, then open this link:\n\n" +
			link + "\n\n" +
			"The invitation expires on " + inv.ExpiresAt.UTC().Format("2 January 2006, 15:04") + " UTC. " +
			"If you do not know " + by.DisplayName + " or the organisation, ignore this e-mail: nothing happens unless you accept.\n"}
}

// Invitation returns the organisation and the invitation a token opens,
// for the accept page: the person must be signed in, of the
// organisation's tenant and environment. Refusals: invitation_not_found,
// invitation_expired.
func (s *Service) Invitation(ctx context.Context, a account.Account, orgID, token string) (organization.Organization, organization.Invitation, error) {
	o, err := s.store.Organization(ctx, orgID)
	if errors.Is(err, store.ErrOrganizationNotFound) {
		err = refusal.New(organization.CodeInvitationNotFound, "this invitation link is not one of a pending invitation: it was accepted or withdrawn, or never existed")
	}
	if err != nil {
		return organization.Organization{}, organization.Invitation{}, err
	}
	inv, err := o.Invited(PersonOf(a), tokenHash(token), s.instant())
	return o, inv, err
}

// tokenHash is the SHA-256 a token is kept as; no token hashes to "".
func tokenHash(token string) string {
	if token == "" {
		return ""
	}
	return auth.HashToken(token)
}

// Accept makes the signed-in person a member through the invitation the
// token opens. Refusals: Organization.Accept's.
func (s *Service) Accept(ctx context.Context, a account.Account, orgID, token string) (organization.Organization, error) {
	if _, _, err := s.Invitation(ctx, a, orgID, token); err != nil {
		return organization.Organization{}, err
	}
	// Listed first: the members' index, written with the membership,
	// decides what the list shows.
	if err := s.store.AddToPersonList(ctx, a.ID, orgID); err != nil {
		return organization.Organization{}, err
	}
	o, err := s.modify(ctx, orgID, func(o organization.Organization) (organization.Organization, error) {
		next, _, err := o.Accept(PersonOf(a), tokenHash(token), s.instant())
		return next, err
	})
	if err != nil {
		return organization.Organization{}, err
	}
	s.logger.InfoContext(ctx, "invitation accepted", "organization_id", orgID, "account_id", a.ID)
	return o, nil
}

// Withdraw withdraws an invitation. Refusals: Organization.Withdraw's.
func (s *Service) Withdraw(ctx context.Context, a account.Account, orgID, invitationID string) (organization.Organization, error) {
	return s.modify(ctx, orgID, func(o organization.Organization) (organization.Organization, error) {
		return o.Withdraw(PersonOf(a), invitationID)
	})
}

// Remove takes a member out of the organisation. Refusals:
// Organization.Remove's.
func (s *Service) Remove(ctx context.Context, a account.Account, orgID, memberID string) (organization.Organization, error) {
	o, err := s.modify(ctx, orgID, func(o organization.Organization) (organization.Organization, error) {
		return o.Remove(PersonOf(a), memberID)
	})
	if err != nil {
		return organization.Organization{}, err
	}
	s.logger.InfoContext(ctx, "member removed", "organization_id", orgID, "member_id", memberID, "account_id", a.ID)
	if err := s.EndActing(ctx, orgID, memberID); err != nil {
		return o, err
	}
	return o, s.store.RemoveFromPersonList(ctx, memberID, orgID)
}

// ChangeRole gives a member another role. Refusals: invalid_role, then
// Organization.ChangeRole's.
func (s *Service) ChangeRole(ctx context.Context, a account.Account, orgID, memberID, role string) (organization.Organization, error) {
	r, err := organization.ParseRole(role)
	if err != nil {
		return organization.Organization{}, err
	}
	return s.modify(ctx, orgID, func(o organization.Organization) (organization.Organization, error) {
		return o.ChangeRole(PersonOf(a), memberID, r)
	})
}

// Leave takes the signed-in person out of the organisation. Refusals:
// Organization.Leave's.
func (s *Service) Leave(ctx context.Context, a account.Account, orgID string) error {
	if _, err := s.modify(ctx, orgID, func(o organization.Organization) (organization.Organization, error) {
		return o.Leave(PersonOf(a))
	}); err != nil {
		return err
	}
	s.logger.InfoContext(ctx, "member left", "organization_id", orgID, "account_id", a.ID)
	if err := s.EndActing(ctx, orgID, a.ID); err != nil {
		return err
	}
	return s.store.RemoveFromPersonList(ctx, a.ID, orgID)
}

// MayActFor says whether the signed-in person of a session may act for
// organisation orgID, and with which role: a live session of the
// deployment's tenant and environment, whose person the organisation's
// members' index names (store.Membership). Owners and members both act
// for it; acting on a case also needs the case's own membership, which
// the case's service checks. A person becomes a member only through
// New or Accept, which require the organisation's tenant and
// environment, so the index names no person of another.
func (s *Service) MayActFor(ctx context.Context, in people.SignedIn, orgID string) (organization.Role, bool, error) {
	if in.Account.ID == "" || !in.Account.IsPerson() || in.Session.AccountID != in.Account.ID ||
		in.Session.Tenant != s.cfg.Tenant || in.Session.Environment != s.cfg.Environment ||
		!s.now().Before(in.Session.ExpiresAt) {
		return "", false, nil
	}
	return s.store.Membership(ctx, orgID, in.Account.ID)
}
