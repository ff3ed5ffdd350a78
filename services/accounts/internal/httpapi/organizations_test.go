package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/accounts/internal/httpapi"
	"github.com/pcourt/pcourt/services/accounts/internal/organization"
	"github.com/pcourt/pcourt/services/accounts/internal/people"
)

// person is a signed-up person's browser, its address confirmed unless
// unconfirmed is set.
func (s *peopleStack) person(t testing.TB, name, email string, unconfirmed ...bool) (*browser, string) {
	t.Helper()
	b := s.browser(t)
	id := b.signUp(t, newKey(t, s), name, email)
	if len(unconfirmed) == 0 {
		b.confirm(t, len(s.smtp.Messages())+1)
	}
	return b, id
}

// createOrganization creates an organisation on the list page's form and
// returns its id.
func (b *browser) createOrganization(t testing.TB, name string) string {
	t.Helper()
	list := b.get(t, "/account/organizations")
	require.Equal(t, http.StatusOK, list.status, list.body)
	done := b.form(t, "/account/organizations", url.Values{"csrf": {list.csrf(t)}, "name": {name}})
	require.Equal(t, http.StatusSeeOther, done.status, done.body)
	id := strings.TrimPrefix(done.location, "/account/organizations/")
	require.Regexp(t, `^acct_[A-Z2-7]{26}$`, id)
	return id
}

// orgForm posts one of the organisation page's forms, with the page's
// CSRF token.
func (b *browser) orgForm(t testing.TB, orgID, action string, values url.Values) page {
	t.Helper()
	if values == nil {
		values = url.Values{}
	}
	values.Set("csrf", b.get(t, "/account/").csrf(t))
	return b.form(t, "/account/organizations/"+orgID+action, values)
}

var invitationLink = regexp.MustCompile(`http://localhost:[0-9]+(/account/organizations/acct_[A-Z2-7]+/invitation\?token=pcoi_[A-Za-z0-9_-]+)`)

// invite has the owner invite email and returns the accept page's path
// from the e-mail the SMTP server received.
func (s *peopleStack) invite(t testing.TB, owner *browser, orgID, email string) string {
	t.Helper()
	before := len(s.smtp.Messages())
	sent := owner.orgForm(t, orgID, "/invitations", url.Values{"email": {email}})
	require.Equal(t, http.StatusOK, sent.status, sent.body)
	require.Contains(t, sent.body, `id="org-notice"`)
	msgs := s.smtp.Messages()
	require.Len(t, msgs, before+1, "the invitation e-mail is sent before the answer")
	m := msgs[before]
	require.Equal(t, []string{strings.ToLower(email)}, m.To)
	parsed := m.Parse(t)
	require.Contains(t, parsed.Header.Get("Subject"), "invited")
	body, err := io.ReadAll(parsed.Body)
	require.NoError(t, err)
	link := invitationLink.FindStringSubmatch(string(body))
	require.NotNil(t, link, "the e-mail links to the accept page:\n%s", body)
	return link[1]
}

// accept opens the accept page at path and posts its form.
func (b *browser) accept(t testing.TB, path string) page {
	t.Helper()
	b.get(t, path)
	u, err := url.Parse(path)
	require.NoError(t, err)
	return b.form(t, u.Path, url.Values{"csrf": {b.get(t, "/account/").csrf(t)}, "token": {u.Query().Get("token")}})
}

// refusedWith requires the page to show the refusal code with its
// status: beside the page's form, or as the refusal page.
func refusedWith(t testing.TB, p page, status int, code string) {
	t.Helper()
	require.Equal(t, status, p.status, p.body)
	require.True(t, strings.Contains(p.body, `data-code="`+code+`"`) || strings.Contains(p.body, `data-refusal="`+code+`"`),
		"the page shows %s:\n%s", code, p.body)
}

// An owner creates an organisation and invites a person by address; the
// e-mail's link opens the accept page for the person signed in with that
// confirmed address, who joins as a member; both see the members, and
// the token is nowhere in Redis, only its SHA-256.
func TestAnOwnerInvitesAPersonWhoJoinsWithTheConfirmedAddress(t *testing.T) {
	s := newPeopleStack(t)
	ada, adaID := s.person(t, "Ada Lovelace", "ada@example.com")
	grace, graceID := s.person(t, "Grace Hopper", "grace@example.com")

	orgID := ada.createOrganization(t, "Analytical Engines")
	list := ada.get(t, "/account/organizations")
	require.Contains(t, list.body, `data-organization="`+orgID+`"`)
	require.Contains(t, list.body, "Analytical Engines")
	require.Contains(t, ada.get(t, "/account/").body, `id="organizations-link"`)

	path := s.invite(t, ada, orgID, "Grace@Example.com")
	token := strings.SplitN(path, "token=", 2)[1]
	for k, v := range redistest.State(t, s.rdb, nil, "pc:acct:*") {
		require.NotContains(t, v, token, "%s keeps the token", k)
	}
	owner := ada.get(t, "/account/organizations/"+orgID)
	require.Contains(t, owner.body, `<td>grace@example.com</td>`, "the pending invitation, for its owner")

	shown := grace.get(t, path)
	require.Equal(t, http.StatusOK, shown.status, shown.body)
	require.Contains(t, shown.body, `<dd id="invitation-organization">Analytical Engines</dd>`)
	require.Contains(t, shown.body, `id="accept-form"`)
	joined := grace.accept(t, path)
	require.Equal(t, http.StatusSeeOther, joined.status, joined.body)
	require.Equal(t, "/account/organizations/"+orgID, joined.location)

	page := grace.get(t, "/account/organizations/"+orgID)
	require.Equal(t, http.StatusOK, page.status)
	require.Contains(t, page.body, `data-member="`+adaID+`" data-role="owner"`)
	require.Contains(t, page.body, `data-member="`+graceID+`" data-role="member"`)
	require.Contains(t, page.body, `<dd id="my-role">member</dd>`)
	require.NotContains(t, page.body, `id="invite-form"`, "a member has no owner's forms")
	require.Contains(t, grace.get(t, "/account/organizations").body, `data-organization="`+orgID+`"`)

	role, ok, err := s.store.Membership(context.Background(), orgID, graceID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, organization.RoleMember, role)

	again := grace.accept(t, path)
	refusedWith(t, again, http.StatusNotFound, "invitation_not_found")
}

// The link alone is no one: signed out, the page shows nothing of the
// invitation; another person's confirmed address, an unconfirmed address
// that is the invitation's, and the same address in another tenant or
// environment over the same Redis each accept nothing.
func TestOnlyThePersonWithTheInvitedConfirmedAddressAccepts(t *testing.T) {
	s := newPeopleStack(t)
	ada, _ := s.person(t, "Ada Lovelace", "ada@example.com")
	orgID := ada.createOrganization(t, "Analytical Engines")
	path := s.invite(t, ada, orgID, "alan@example.com")

	out := s.browser(t).get(t, path)
	require.Equal(t, http.StatusOK, out.status)
	require.Contains(t, out.body, `id="invitation-signed-out"`)
	require.NotContains(t, out.body, "Analytical Engines")

	mallory, _ := s.person(t, "Mallory", "mallory@example.com")
	refusedWith(t, mallory.accept(t, path), http.StatusForbidden, "invitation_for_another_address")

	unconfirmed, _ := s.person(t, "Alan?", "alan@example.com", true)
	refusedWith(t, unconfirmed.accept(t, path), http.StatusForbidden, "email_not_confirmed")

	for _, other := range []func(*people.Config, *bool){
		func(c *people.Config, _ *bool) { c.Tenant = "tenant-other" },
		func(c *people.Config, _ *bool) { c.Environment = "live" },
	} {
		elsewhere := newPeopleStackOn(t, s.rdb, other)
		alan, _ := elsewhere.person(t, "Alan Turing", "alan@example.com")
		refusedWith(t, alan.accept(t, path), http.StatusNotFound, "invitation_not_found")
		refusedWith(t, alan.get(t, "/account/organizations/"+orgID), http.StatusNotFound, "organization_not_found")
	}

	o, err := s.store.Organization(context.Background(), orgID)
	require.NoError(t, err)
	require.Len(t, o.Members(), 1, "nobody joined")
	require.Len(t, o.Invitations(), 1, "the invitation still waits for Alan")

	alan, _ := s.person(t, "Alan Turing", "alan@example.com")
	require.Equal(t, http.StatusSeeOther, alan.accept(t, path).status)
}

// A member is no owner: the owner's forms are refused, nothing is sent
// and nothing changes; a person who is not a member finds no
// organisation, to read or to post to.
func TestAMemberCannotInviteRemoveOrChangeRoles(t *testing.T) {
	s := newPeopleStack(t)
	ada, adaID := s.person(t, "Ada Lovelace", "ada@example.com")
	grace, graceID := s.person(t, "Grace Hopper", "grace@example.com")
	orgID := ada.createOrganization(t, "Analytical Engines")
	require.Equal(t, http.StatusSeeOther, grace.accept(t, s.invite(t, ada, orgID, "grace@example.com")).status)

	sent := len(s.smtp.Messages())
	before := redistest.State(t, s.rdb, func(k string) bool { return strings.Contains(k, ":session:") }, "pc:acct:*")
	refusedWith(t, grace.orgForm(t, orgID, "/invitations", url.Values{"email": {"eve@example.com"}}), http.StatusForbidden, "not_organization_owner")
	refusedWith(t, grace.orgForm(t, orgID, "/members/"+adaID+"/remove", nil), http.StatusForbidden, "not_organization_owner")
	refusedWith(t, grace.orgForm(t, orgID, "/members/"+graceID+"/role", url.Values{"role": {"owner"}}), http.StatusForbidden, "not_organization_owner")
	require.Len(t, s.smtp.Messages(), sent, "no invitation went out")
	require.Equal(t, before, redistest.State(t, s.rdb, func(k string) bool { return strings.Contains(k, ":session:") }, "pc:acct:*"))

	mallory, _ := s.person(t, "Mallory", "mallory@example.com")
	refusedWith(t, mallory.get(t, "/account/organizations/"+orgID), http.StatusNotFound, "organization_not_found")
	refusedWith(t, mallory.orgForm(t, orgID, "/invitations", url.Values{"email": {"eve@example.com"}}), http.StatusNotFound, "organization_not_found")
	refusedWith(t, mallory.orgForm(t, orgID, "/members/"+graceID+"/remove", nil), http.StatusNotFound, "organization_not_found")
	refusedWith(t, mallory.orgForm(t, orgID, "/leave", nil), http.StatusNotFound, "organization_not_found")
}

// The forms are the account page's kind: another site's post and a post
// without the session's CSRF token are refused before anything is read.
func TestOrganisationFormsNeedThePagesOriginAndTheSessionsToken(t *testing.T) {
	s := newPeopleStack(t)
	ada, _ := s.person(t, "Ada Lovelace", "ada@example.com")
	orgID := ada.createOrganization(t, "Analytical Engines")
	sent := len(s.smtp.Messages())

	forged := ada.form(t, "/account/organizations/"+orgID+"/invitations", url.Values{"csrf": {"not-the-token"}, "email": {"eve@example.com"}})
	require.Equal(t, http.StatusForbidden, forged.status)
	require.Contains(t, forged.body, `data-refusal="csrf_mismatch"`)
	ada.origin = "https://evil.example"
	cross := ada.orgForm(t, orgID, "/invitations", url.Values{"email": {"eve@example.com"}})
	require.Equal(t, http.StatusForbidden, cross.status)
	require.Contains(t, cross.body, `data-refusal="cross_origin"`)
	require.Len(t, s.smtp.Messages(), sent)
}

// The last owner can neither leave nor be demoted; with a second owner
// the first may leave, and the organisation is gone from their list.
// An owner removes a member; a member leaves.
func TestAnOrganisationKeepsAnOwner(t *testing.T) {
	s := newPeopleStack(t)
	ada, adaID := s.person(t, "Ada Lovelace", "ada@example.com")
	grace, graceID := s.person(t, "Grace Hopper", "grace@example.com")
	alan, alanID := s.person(t, "Alan Turing", "alan@example.com")
	orgID := ada.createOrganization(t, "Analytical Engines")
	require.Equal(t, http.StatusSeeOther, grace.accept(t, s.invite(t, ada, orgID, "grace@example.com")).status)
	require.Equal(t, http.StatusSeeOther, alan.accept(t, s.invite(t, ada, orgID, "alan@example.com")).status)

	refusedWith(t, ada.orgForm(t, orgID, "/leave", nil), http.StatusConflict, "last_owner")
	refusedWith(t, ada.orgForm(t, orgID, "/members/"+adaID+"/role", url.Values{"role": {"member"}}), http.StatusConflict, "last_owner")
	refusedWith(t, ada.orgForm(t, orgID, "/members/"+graceID+"/role", url.Values{"role": {"admin"}}), http.StatusBadRequest, "invalid_role")

	removed := ada.orgForm(t, orgID, "/members/"+alanID+"/remove", nil)
	require.Equal(t, http.StatusOK, removed.status, removed.body)
	require.NotContains(t, removed.body, `data-member="`+alanID+`"`)
	require.NotContains(t, alan.get(t, "/account/organizations").body, orgID)
	refusedWith(t, alan.get(t, "/account/organizations/"+orgID), http.StatusNotFound, "organization_not_found")

	promoted := ada.orgForm(t, orgID, "/members/"+graceID+"/role", url.Values{"role": {"owner"}})
	require.Equal(t, http.StatusOK, promoted.status, promoted.body)
	require.Contains(t, promoted.body, `data-member="`+graceID+`" data-role="owner"`)
	left := ada.orgForm(t, orgID, "/leave", nil)
	require.Equal(t, http.StatusSeeOther, left.status, left.body)
	require.Equal(t, "/account/organizations", left.location)
	require.Contains(t, ada.get(t, "/account/organizations").body, `id="no-organizations"`)
	refusedWith(t, grace.orgForm(t, orgID, "/leave", nil), http.StatusConflict, "last_owner")
}

// A withdrawn invitation's link accepts nothing; an invitation expires
// after 7 days; an address is invited once at a time.
func TestAnInvitationIsWithdrawnOrExpires(t *testing.T) {
	s := newPeopleStack(t)
	ada, _ := s.person(t, "Ada Lovelace", "ada@example.com")
	alan, _ := s.person(t, "Alan Turing", "alan@example.com")
	orgID := ada.createOrganization(t, "Analytical Engines")

	path := s.invite(t, ada, orgID, "alan@example.com")
	refusedWith(t, ada.orgForm(t, orgID, "/invitations", url.Values{"email": {"alan@example.com"}}), http.StatusConflict, "already_invited")
	o, err := s.store.Organization(context.Background(), orgID)
	require.NoError(t, err)
	withdrawn := ada.orgForm(t, orgID, "/invitations/"+o.Invitations()[0].ID+"/withdraw", nil)
	require.Equal(t, http.StatusOK, withdrawn.status, withdrawn.body)
	require.Contains(t, withdrawn.body, `id="no-pending"`)
	refusedWith(t, alan.get(t, path), http.StatusNotFound, "invitation_not_found")
	refusedWith(t, alan.accept(t, path), http.StatusNotFound, "invitation_not_found")

	path = s.invite(t, ada, orgID, "turing@example.com")
	s.clock.advance(7 * 24 * time.Hour)
	// The sessions of before have ended by now: a person signed up since.
	turing, _ := s.person(t, "Alan Turing", "turing@example.com")
	refusedWith(t, turing.accept(t, path), http.StatusGone, "invitation_expired")
}

// A deployment without e-mail says on the page that invitations cannot
// be sent, and refuses one.
func TestWithoutMailNoInvitationIsSent(t *testing.T) {
	s := newPeopleStack(t, withoutMail())
	ada := s.browser(t)
	ada.signUp(t, newKey(t, s), "Ada Lovelace", "ada@example.com")
	orgID := ada.createOrganization(t, "Analytical Engines")
	page := ada.get(t, "/account/organizations/"+orgID)
	require.Contains(t, page.body, `id="invitations-off"`)
	require.NotContains(t, page.body, `id="invite-form"`)
	refusedWith(t, ada.orgForm(t, orgID, "/invitations", url.Values{"email": {"alan@example.com"}}), http.StatusNotFound, "invitations_off")
}

// An invitation whose e-mail the SMTP server refuses is withdrawn again:
// its token reached nobody.
func TestAnInvitationNotSentIsNotKept(t *testing.T) {
	s := newPeopleStack(t)
	ada, _ := s.person(t, "Ada Lovelace", "ada@example.com")
	orgID := ada.createOrganization(t, "Analytical Engines")
	s.smtp.RefuseNext(1)
	refusedWith(t, ada.orgForm(t, orgID, "/invitations", url.Values{"email": {"alan@example.com"}}), http.StatusServiceUnavailable, "invitation_not_sent")
	o, err := s.store.Organization(context.Background(), orgID)
	require.NoError(t, err)
	require.Empty(t, o.Invitations())
}

func TestAnOrganisationNeedsAName(t *testing.T) {
	s := newPeopleStack(t)
	ada, _ := s.person(t, "Ada Lovelace", "ada@example.com")
	list := ada.get(t, "/account/organizations")
	refusedWith(t, ada.form(t, "/account/organizations", url.Values{"csrf": {list.csrf(t)}, "name": {" "}}), http.StatusBadRequest, "invalid_organization")
	require.Equal(t, "/account/signin", s.browser(t).get(t, "/account/organizations").location, "signed out")
}

// A member acts for the organisation with a session of the
// organisation's account that names the member as who acts: every
// service's website routes and hosted pages see the organisation. The
// member acts for themself again at will, and once removed, every session
// they acted for it with is over, everywhere. A non-member acts for
// nothing.
func TestAMemberActsForTheOrganisationUntilTheyAreAMemberNoMore(t *testing.T) {
	s := newPeopleStack(t)
	ctx := context.Background()
	ada, _ := s.person(t, "Ada Lovelace", "ada@example.com")
	grace, graceID := s.person(t, "Grace Hopper", "grace@example.com")
	orgID := ada.createOrganization(t, "Analytical Engines")
	require.Equal(t, http.StatusSeeOther, grace.accept(t, s.invite(t, ada, orgID, "grace@example.com")).status)

	require.Equal(t, http.StatusSeeOther, grace.orgForm(t, orgID, "/act", nil).status)
	actingCookie := grace.cookie(t, httpapi.SessionCookieName)
	acting, live, err := s.credentials.AccountSession(ctx, actingCookie)
	require.NoError(t, err)
	require.True(t, live)
	require.Equal(t, orgID, acting.AccountID, "the session is the organisation's")
	require.Equal(t, graceID, acting.ActorID, "and names who acts")
	home := grace.get(t, "/account/")
	require.Equal(t, http.StatusOK, home.status)
	require.Contains(t, home.body, `id="acting-for-org"`)
	require.Contains(t, home.body, orgID)

	require.Equal(t, http.StatusSeeOther, grace.form(t, "/account/acting/stop", url.Values{"csrf": {home.csrf(t)}}).status)
	own, live, err := s.credentials.AccountSession(ctx, grace.cookie(t, httpapi.SessionCookieName))
	require.NoError(t, err)
	require.True(t, live)
	require.Equal(t, graceID, own.AccountID, "back to her own")
	require.Empty(t, own.ActorID)
	_, live, err = s.credentials.AccountSession(ctx, actingCookie)
	require.NoError(t, err)
	require.False(t, live, "the session that acted for it ended")

	require.Equal(t, http.StatusSeeOther, grace.orgForm(t, orgID, "/act", nil).status)
	again := grace.cookie(t, httpapi.SessionCookieName)
	require.Equal(t, http.StatusOK, ada.orgForm(t, orgID, "/members/"+graceID+"/remove", nil).status)
	_, live, err = auth.NewStore(s.rdb, auth.DefaultStoreConfig()).AccountSession(ctx, again)
	require.NoError(t, err)
	require.False(t, live, "removed, the member's session for the organisation is over for every service")
	require.Equal(t, "/account/signin", grace.get(t, "/account/").location)

	mallory, _ := s.person(t, "Mallory", "mallory@example.com")
	before := mallory.cookie(t, httpapi.SessionCookieName)
	refusedWith(t, mallory.orgForm(t, orgID, "/act", nil), http.StatusNotFound, "organization_not_found")
	require.Equal(t, before, mallory.cookie(t, httpapi.SessionCookieName), "a non-member's session is untouched")
}
