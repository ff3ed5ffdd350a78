// Organisations' pages under /account/organizations: a signed-in person
// creates an organisation (its first owner), lists theirs, and on an
// organisation's page sees its members and pending invitations, invites
// by address, withdraws an invitation, removes a member, changes a role
// or leaves; the invited person accepts on the page the e-mail links to.
// Every act is a form post checked as the account page's are
// (pages.signedInPost: the pages' origin, a live session, its CSRF
// token); every refusal is shown beside the page with its problem's code,
// title, detail and status, and changes nothing.

package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/accounts/internal/organization"
	"github.com/pcourt/pcourt/services/accounts/internal/organizations"
	"github.com/pcourt/pcourt/services/accounts/internal/people"
)

// The codes of organisations: the domain's refusals, and the invitation
// e-mail's.
var (
	InvalidOrganization  = problem.Code{Name: "invalid_organization", Status: http.StatusBadRequest, Title: "Invalid organisation"}
	InvalidRole          = problem.Code{Name: "invalid_role", Status: http.StatusBadRequest, Title: "Invalid role"}
	NotOrganizationOwner = problem.Code{Name: "not_organization_owner", Status: http.StatusForbidden, Title: "Only an owner may do this"}
	EmailNotConfirmed    = problem.Code{Name: "email_not_confirmed", Status: http.StatusForbidden, Title: "Address not confirmed"}
	InvitationForAnother = problem.Code{Name: "invitation_for_another_address", Status: http.StatusForbidden, Title: "Invitation for another address"}
	OrganizationNotFound = problem.Code{Name: "organization_not_found", Status: http.StatusNotFound, Title: "Organisation not found"}
	MemberNotFound       = problem.Code{Name: "member_not_found", Status: http.StatusNotFound, Title: "Member not found"}
	InvitationNotFound   = problem.Code{Name: "invitation_not_found", Status: http.StatusNotFound, Title: "Invitation not found"}
	InvitationsOff       = problem.Code{Name: "invitations_off", Status: http.StatusNotFound, Title: "No invitations here"}
	LastOwner            = problem.Code{Name: "last_owner", Status: http.StatusConflict, Title: "The last owner stays"}
	AlreadyMember        = problem.Code{Name: "already_member", Status: http.StatusConflict, Title: "A member already"}
	AlreadyInvited       = problem.Code{Name: "already_invited", Status: http.StatusConflict, Title: "Invited already"}
	TooManyMembers       = problem.Code{Name: "too_many_members", Status: http.StatusConflict, Title: "Too many members"}
	TooManyInvitations   = problem.Code{Name: "too_many_invitations", Status: http.StatusConflict, Title: "Too many invitations"}
	InvitationExpired    = problem.Code{Name: "invitation_expired", Status: http.StatusGone, Title: "Invitation expired"}
	InvitationNotSent    = problem.Code{Name: "invitation_not_sent", Status: http.StatusServiceUnavailable, Title: "Invitation not sent"}
)

// organizationCodeList is the organisations' part of Codes.
var organizationCodeList = []problem.Code{InvalidOrganization, InvalidRole, NotOrganizationOwner, EmailNotConfirmed, InvitationForAnother,
	OrganizationNotFound, MemberNotFound, InvitationNotFound, InvitationsOff, LastOwner, AlreadyMember, AlreadyInvited,
	TooManyMembers, TooManyInvitations, InvitationExpired, InvitationNotSent}

var organizationCodes = map[organization.RefusalCode]problem.Code{
	organization.CodeInvalidOrganization:  InvalidOrganization,
	organization.CodeInvalidRole:          InvalidRole,
	organization.CodeOrganizationNotFound: OrganizationNotFound,
	organization.CodeNotOwner:             NotOrganizationOwner,
	organization.CodeMemberNotFound:       MemberNotFound,
	organization.CodeLastOwner:            LastOwner,
	organization.CodeAlreadyMember:        AlreadyMember,
	organization.CodeAlreadyInvited:       AlreadyInvited,
	organization.CodeTooManyMembers:       TooManyMembers,
	organization.CodeTooManyInvitations:   TooManyInvitations,
	organization.CodeInvitationNotFound:   InvitationNotFound,
	organization.CodeInvitationExpired:    InvitationExpired,
	organization.CodeEmailNotConfirmed:    EmailNotConfirmed,
	organization.CodeInvitationForAnother: InvitationForAnother,
}

// organizationProblem maps organisations' errors (Problem calls it
// first); nil for any other error.
func organizationProblem(err error) *problem.Error {
	var refused *organization.RefusalError
	switch {
	case errors.Is(err, organizations.ErrInvitationsOff):
		return problem.New(InvitationsOff, "This deployment sends no e-mail, so it cannot send invitations.").Wrap(err)
	case errors.Is(err, organizations.ErrInvitationNotSent):
		return problem.New(InvitationNotSent, "The invitation e-mail could not be sent, so the invitation was withdrawn again; try again in a moment.").
			WithHeader("Retry-After", "60").Wrap(err)
	case errors.As(err, &refused):
		code, ok := organizationCodes[refused.Code]
		if !ok {
			return nil
		}
		return problem.New(code, refused.Detail+".").Wrap(err)
	}
	return nil
}

type orgPages struct {
	*pages
	orgs *organizations.Service
}

// registerOrganizations adds the organisations' pages to the account
// pages' group.
func registerOrganizations(g gin.IRouter, p *pages, orgs *organizations.Service) {
	o := &orgPages{pages: p, orgs: orgs}
	g.GET("/organizations", o.list)
	g.POST("/organizations", o.create)
	g.GET("/organizations/:id", o.show)
	g.POST("/organizations/:id/invitations", o.invite)
	g.POST("/organizations/:id/invitations/:invitation/withdraw", o.withdraw)
	g.POST("/organizations/:id/members/:member/remove", o.remove)
	g.POST("/organizations/:id/members/:member/role", o.changeRole)
	g.POST("/organizations/:id/leave", o.leave)
	g.GET("/organizations/:id/invitation", o.invitation)
	g.POST("/organizations/:id/invitation", o.accept)
	g.POST("/organizations/:id/act", o.actFor)
	g.POST("/acting/stop", o.stopActing)
}

// actFor starts a session of the organisation's account for its member:
// the website routes and the hosted pages then act for the organisation
// on the cases it takes part in (docs/accounts.md, "Organisations and
// members"). An organisation the person is not a member of is the
// refusal page, as for one that does not exist.
func (o *orgPages) actFor(c *gin.Context) {
	in, ok := o.signedInPost(c)
	if !ok {
		return
	}
	id := c.Param("id")
	if _, member, err := o.orgs.MayActFor(c.Request.Context(), in, id); err != nil || !member {
		if err == nil {
			err = &organization.RefusalError{Code: organization.CodeOrganizationNotFound, Detail: "no organisation " + id + " of which you are a member"}
		}
		o.refuseOrFail(c, err)
		return
	}
	acting, err := o.people.StartActing(c.Request.Context(), in, id)
	if err != nil {
		o.fail(c, err)
		return
	}
	o.session.Set(c.Writer, acting.Cookie, acting.Session.ExpiresAt.Sub(acting.Session.CreatedAt))
	c.Redirect(http.StatusSeeOther, o.path("/account/"))
}

// stopActing goes back to a session of the person's own.
func (o *orgPages) stopActing(c *gin.Context) {
	in, ok := o.signedInPost(c)
	if !ok {
		return
	}
	if in.ActingFor != "" {
		own, err := o.people.StopActing(c.Request.Context(), in)
		if err != nil {
			o.fail(c, err)
			return
		}
		o.session.Set(c.Writer, own.Cookie, own.Session.ExpiresAt.Sub(own.Session.CreatedAt))
	}
	c.Redirect(http.StatusSeeOther, o.path("/account/"))
}

func (o *orgPages) orgPath(id string) string {
	return o.path("/account/organizations/" + url.PathEscape(id))
}

// organizationsView is the list of the person's organisations, with the
// form creating one.
type organizationsView struct {
	frame
	CSRF          string
	Organizations []organizationRow
	Name          string
	Err           *formError
}

type organizationRow struct {
	Path    string
	ID      string
	Name    string
	Role    organization.Role
	Members int
}

func (o *orgPages) listView(c *gin.Context, in people.SignedIn) (organizationsView, error) {
	orgs, err := o.orgs.List(c.Request.Context(), in.Account)
	if err != nil {
		return organizationsView{}, err
	}
	v := organizationsView{frame: o.frame("organizations"), CSRF: in.Session.CSRF}
	v.Title = "Your organisations"
	for _, org := range orgs {
		role, _ := org.Role(in.Account.ID)
		v.Organizations = append(v.Organizations, organizationRow{Path: o.orgPath(org.ID()), ID: org.ID(), Name: org.DisplayName(), Role: role, Members: len(org.Members())})
	}
	return v, nil
}

// signedIn returns the browser's live session; without one it sends the
// browser to sign in (ok false: answered).
func (o *orgPages) signedIn(c *gin.Context) (people.SignedIn, bool) {
	in, ok, err := o.current(c)
	if err != nil {
		o.fail(c, err)
		return people.SignedIn{}, false
	}
	if !ok {
		c.Redirect(http.StatusSeeOther, o.path("/account/signin"))
		return people.SignedIn{}, false
	}
	return in, true
}

func (o *orgPages) list(c *gin.Context) {
	in, ok := o.signedIn(c)
	if !ok {
		return
	}
	v, err := o.listView(c, in)
	if err != nil {
		o.fail(c, err)
		return
	}
	o.render(c, http.StatusOK, "organizations", v)
}

func (o *orgPages) create(c *gin.Context) {
	in, ok := o.signedInPost(c)
	if !ok {
		return
	}
	name := c.Request.PostForm.Get("name")
	org, err := o.orgs.Create(c.Request.Context(), in.Account, name)
	if err != nil {
		prob := Problem(err)
		if prob == nil || prob.Code.Status >= 500 {
			o.fail(c, err)
			return
		}
		v, lerr := o.listView(c, in)
		if lerr != nil {
			o.fail(c, lerr)
			return
		}
		v.Name, v.Err = name, toFormError(prob)
		o.render(c, prob.Code.Status, "organizations", v)
		return
	}
	c.Redirect(http.StatusSeeOther, o.orgPath(org.ID()))
}

// organizationView is an organisation's page: its members and, for an
// owner, its pending invitations and the owner's forms.
type organizationView struct {
	frame
	CSRF        string
	Path        string
	ID          string
	Name        string
	Environment string
	CreatedAt   time.Time
	Owner       bool // the signed-in person is an owner
	Members     []memberView
	Pending     []invitationView
	// Invites: the deployment sends e-mail, so owners can invite.
	Invites bool
	// Notice is what the last act did; Err is its refusal.
	Notice string
	Err    *formError
}

type memberView struct {
	AccountID   string
	DisplayName string
	Email       string
	Role        organization.Role
	JoinedAt    time.Time
	Me          bool
}

type invitationView struct {
	ID        string
	Email     string
	CreatedAt time.Time
	ExpiresAt time.Time
}

func (o *orgPages) organizationView(in people.SignedIn, org organization.Organization) organizationView {
	role, _ := org.Role(in.Account.ID)
	v := organizationView{frame: o.frame("organization"), CSRF: in.Session.CSRF, Path: o.orgPath(org.ID()), ID: org.ID(),
		Name: org.DisplayName(), Environment: org.Environment(), CreatedAt: org.CreatedAt(), Owner: role == organization.RoleOwner,
		Invites: o.orgs.SendsInvitations()}
	v.Title = org.DisplayName()
	for _, m := range org.Members() {
		v.Members = append(v.Members, memberView{AccountID: m.AccountID, DisplayName: m.DisplayName, Email: m.Email, Role: m.Role,
			JoinedAt: m.JoinedAt, Me: m.AccountID == in.Account.ID})
	}
	if v.Owner {
		// Only owners manage invitations; a member sees who is in, not
		// which addresses were asked.
		for _, inv := range o.orgs.Pending(org) {
			v.Pending = append(v.Pending, invitationView{ID: inv.ID, Email: inv.Email, CreatedAt: inv.CreatedAt, ExpiresAt: inv.ExpiresAt})
		}
	}
	return v
}

func (o *orgPages) show(c *gin.Context) {
	in, ok := o.signedIn(c)
	if !ok {
		return
	}
	org, err := o.orgs.Get(c.Request.Context(), in.Account, c.Param("id"))
	if err != nil {
		o.refuseOrFail(c, err)
		return
	}
	o.render(c, http.StatusOK, "organization", o.organizationView(in, org))
}

// refuseOrFail answers an error with the refusal page when it is the
// person's (an organisation they are not in), or as a failure.
func (o *orgPages) refuseOrFail(c *gin.Context, err error) {
	if prob := Problem(err); prob != nil && prob.Code.Status < 500 {
		o.render(c, prob.Code.Status, "refusal", refusalView{frame: o.frame("refusal"), Problem: prob})
		return
	}
	o.fail(c, err)
}

// act runs an owner's or member's act on the organisation of the path
// and answers its page: with notice, or with the refusal beside it (the
// page as it stands, nothing changed). An organisation the person is not
// in is the refusal page. done, when set, answers a success instead.
func (o *orgPages) act(c *gin.Context, run func(people.SignedIn, string) (string, error), done func(people.SignedIn)) {
	in, ok := o.signedInPost(c)
	if !ok {
		return
	}
	id := c.Param("id")
	notice, err := run(in, id)
	if err == nil && done != nil {
		done(in)
		return
	}
	prob := Problem(err)
	if err != nil && (prob == nil || (prob.Code.Status >= 500 && prob.Code != InvitationNotSent) || prob.Code == OrganizationNotFound) {
		o.refuseOrFail(c, err)
		return
	}
	org, gerr := o.orgs.Get(c.Request.Context(), in.Account, id)
	if gerr != nil {
		o.refuseOrFail(c, gerr)
		return
	}
	v := o.organizationView(in, org)
	status := http.StatusOK
	if err != nil {
		for k, vs := range prob.Header {
			c.Writer.Header()[k] = vs
		}
		v.Err, status = toFormError(prob), prob.Code.Status
	} else {
		v.Notice = notice
	}
	o.render(c, status, "organization", v)
}

func (o *orgPages) invite(c *gin.Context) {
	o.act(c, func(in people.SignedIn, id string) (string, error) {
		inv, err := o.orgs.Invite(c.Request.Context(), in.Account, id, c.Request.PostForm.Get("email"))
		return "An invitation is on its way to " + inv.Email + ".", err
	}, nil)
}

func (o *orgPages) withdraw(c *gin.Context) {
	o.act(c, func(in people.SignedIn, id string) (string, error) {
		_, err := o.orgs.Withdraw(c.Request.Context(), in.Account, id, c.Param("invitation"))
		return "The invitation was withdrawn: its link accepts nothing now.", err
	}, nil)
}

func (o *orgPages) remove(c *gin.Context) {
	o.act(c, func(in people.SignedIn, id string) (string, error) {
		_, err := o.orgs.Remove(c.Request.Context(), in.Account, id, c.Param("member"))
		return "The member was removed.", err
	}, nil)
}

func (o *orgPages) changeRole(c *gin.Context) {
	o.act(c, func(in people.SignedIn, id string) (string, error) {
		role := c.Request.PostForm.Get("role")
		_, err := o.orgs.ChangeRole(c.Request.Context(), in.Account, id, c.Param("member"), role)
		return "The member is now " + role + ".", err
	}, nil)
}

func (o *orgPages) leave(c *gin.Context) {
	o.act(c, func(in people.SignedIn, id string) (string, error) {
		return "", o.orgs.Leave(c.Request.Context(), in.Account, id)
	}, func(people.SignedIn) { c.Redirect(http.StatusSeeOther, o.path("/account/organizations")) })
}

// invitationPageView is the page an invitation's e-mail links to: the
// organisation and the address invited, with the accept button, or why
// it cannot be accepted.
type invitationPageView struct {
	frame
	CSRF         string
	SignedOut    bool
	Action       string
	Token        string
	Organization string
	Email        string
	ExpiresAt    time.Time
	You          string // the signed-in account's address
	Err          *formError
}

func (o *orgPages) invitation(c *gin.Context) {
	v := invitationPageView{frame: o.frame("invitation"), Action: o.orgPath(c.Param("id")) + "/invitation"}
	v.Title = "An invitation"
	in, ok, err := o.current(c)
	if err != nil {
		o.fail(c, err)
		return
	}
	if !ok {
		// Nothing of the invitation is shown before a sign-in: the link
		// alone is not who the person is.
		v.SignedOut = true
		o.render(c, http.StatusOK, "invitation", v)
		return
	}
	o.renderInvitation(c, in, v, c.Query("token"), nil)
}

// renderInvitation answers the invitation's page for the token, with
// refused beside it (or the reason it cannot be accepted at all).
func (o *orgPages) renderInvitation(c *gin.Context, in people.SignedIn, v invitationPageView, token string, refused error) {
	v.CSRF, v.You = in.Session.CSRF, in.Account.Email
	org, inv, err := o.orgs.Invitation(c.Request.Context(), in.Account, c.Param("id"), token)
	if err == nil {
		v.Token, v.Organization, v.Email, v.ExpiresAt = token, org.DisplayName(), inv.Email, inv.ExpiresAt
		err = refused
	}
	if err == nil {
		o.render(c, http.StatusOK, "invitation", v)
		return
	}
	prob := Problem(err)
	if prob == nil || prob.Code.Status >= 500 {
		o.fail(c, err)
		return
	}
	v.Err = toFormError(prob)
	o.render(c, prob.Code.Status, "invitation", v)
}

func (o *orgPages) accept(c *gin.Context) {
	in, ok := o.signedInPost(c)
	if !ok {
		return
	}
	token := c.Request.PostForm.Get("token")
	org, err := o.orgs.Accept(c.Request.Context(), in.Account, c.Param("id"), token)
	if err != nil {
		v := invitationPageView{frame: o.frame("invitation"), Action: o.orgPath(c.Param("id")) + "/invitation"}
		v.Title = "An invitation"
		o.renderInvitation(c, in, v, token, err)
		return
	}
	c.Redirect(http.StatusSeeOther, o.orgPath(org.ID()))
}
