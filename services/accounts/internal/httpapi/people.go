// People's pages under /account: sign-up with a passkey, sign-in with a
// passkey or an e-mail code, the signed-in account and sign-out. The
// pages are server-rendered with one same-origin module (static/
// account.js) that runs the WebAuthn ceremonies through four JSON
// endpoints; every other act is a form post.

package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/grants"
	"github.com/pcourt/pcourt/services/accounts/internal/oauth"
	"github.com/pcourt/pcourt/services/accounts/internal/organizations"
	"github.com/pcourt/pcourt/services/accounts/internal/people"
)

// The cookies of the pages, both HttpOnly and SameSite=Strict: the
// session, for the whole site (the website routes and the hosted pages of
// other services take it: libs/auth, AcceptAccountSessions), and the
// ceremony in flight (five minutes), for /account alone.
const (
	SessionCookieName  = auth.SessionCookieName
	CeremonyCookieName = "pc_account_ceremony"
)

// MaxPeopleBodyBytes bounds a form post or a ceremony's JSON: an
// attestation with its certificate chain fits in a few KiB.
const MaxPeopleBodyBytes = 64 << 10

// PeopleDeps are what the pages need.
type PeopleDeps struct {
	People *people.Service
	// Site is where browsers reach the pages (webpage.NewSite of the
	// public base URL): the one origin heard, the cookies' path prefix and
	// Secure flag.
	Site   webpage.Site
	Logger *slog.Logger
	// Organizations, when set, adds the organisations' pages
	// (organizations.go).
	Organizations *organizations.Service
	// OAuth and Grants serve the authorization code grant's pages
	// (consent.go) where the server has the grant on; nil: none.
	OAuth  *oauth.Server
	Grants *grants.Service
}

type pages struct {
	people   *people.Service
	logger   *slog.Logger
	site     webpage.Site
	session  webpage.SessionCookie
	ceremony webpage.SessionCookie
	consent  consent
}

// RegisterPeople adds the pages under /account. Every answer carries the
// pages' policy headers (webpage.Headers: the module fetches
// from the site itself); every mutation, JSON or form, is heard from the
// site's own origin only.
func RegisterPeople(r gin.IRouter, d PeopleDeps) {
	p := &pages{people: d.People, logger: d.Logger, site: d.Site,
		session: d.Site.Cookie(SessionCookieName, "/"), ceremony: d.Site.Cookie(CeremonyCookieName, "/account")}
	g := r.Group("/account", webpage.Headers, webpage.LimitBody(MaxPeopleBodyBytes, p.refuseTooLarge))
	g.GET("/static/:file", webpage.Static(staticFiles))
	g.GET("/", p.home)
	g.GET("/signup", p.signUpPage)
	g.GET("/signin", p.signInPage)
	// The ceremonies: JSON in, problem+json or {data} out.
	g.POST("/signup/options", p.sameOrigin, p.beginSignUp)
	g.POST("/signup", p.sameOrigin, p.finishSignUp)
	g.POST("/signin/options", p.sameOrigin, p.beginSignIn)
	g.POST("/signin", p.sameOrigin, p.finishSignIn)
	// The forms.
	g.POST("/signin/code", p.requestCode)
	g.POST("/signin/code/verify", p.verifyCode)
	g.POST("/signout", p.signOut)
	// The signed-in account's forms: confirming its address.
	g.POST("/email/code", p.requestConfirmation)
	g.POST("/email/confirm", p.confirmEmail)
	if d.Organizations != nil {
		registerOrganizations(g, p, d.Organizations)
	}
	if d.OAuth != nil && d.OAuth.CodeGrant() {
		p.consent = consent{oauth: d.OAuth, grants: d.Grants}
		p.registerConsent(r, g)
	}
}

func (p *pages) path(s string) string { return p.site.Prefix + s }

// sameOrigin refuses a ceremony's request from any origin but the site's
// (webpage.Site.SameOrigin), before anything reads it.
func (p *pages) sameOrigin(c *gin.Context) {
	if !p.site.SameOrigin(c.Request) {
		_ = c.Error(webpage.ErrCrossOrigin)
		c.Abort()
		return
	}
	c.Next()
}

// jsonBody reads a ceremony's body: JSON by its media type (a form of
// another site cannot send that without the browser asking first), within
// the limit.
func jsonBody(c *gin.Context) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, problem.Newf(problem.UnsupportedMediaType, "Content-Type must be application/json, not %q.", problem.Clip(c.GetHeader("Content-Type")))
	}
	body, err := httpserver.ReadBody(c)
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		return nil, problem.New(problem.EmptyBody, "The request body must be the credential's JSON.")
	}
	return body, nil
}

type signUpBody struct {
	DisplayName string `json:"displayName"`
	Email       string `json:"email"`
}

func (p *pages) beginSignUp(c *gin.Context) {
	body, err := jsonBody(c)
	if err != nil {
		_ = c.Error(err)
		return
	}
	var b signUpBody
	if err := httpserver.DecodeStrict(body, &b); err != nil {
		_ = c.Error(err)
		return
	}
	begun, err := p.people.BeginSignUp(c.Request.Context(), account.SignUp{DisplayName: b.DisplayName, Email: b.Email})
	if err != nil {
		_ = c.Error(err)
		return
	}
	p.ceremony.Set(c.Writer, begun.Cookie, people.CeremonyTTL)
	c.JSON(http.StatusOK, gin.H{"data": begun.Options, "requestId": requestid.Get(c)})
}

func (p *pages) beginSignIn(c *gin.Context) {
	begun, err := p.people.BeginSignIn(c.Request.Context())
	if err != nil {
		_ = c.Error(err)
		return
	}
	p.ceremony.Set(c.Writer, begun.Cookie, people.CeremonyTTL)
	c.JSON(http.StatusOK, gin.H{"data": begun.Options, "requestId": requestid.Get(c)})
}

// signedInView is a finished ceremony's answer: who is signed in and the
// page to go to.
type signedInView struct {
	AccountID   string `json:"accountId"`
	DisplayName string `json:"displayName"`
	Next        string `json:"next"`
}

func (p *pages) finishSignUp(c *gin.Context) {
	p.finish(c, http.StatusCreated, p.people.FinishSignUp)
}

func (p *pages) finishSignIn(c *gin.Context) {
	p.finish(c, http.StatusOK, p.people.FinishSignIn)
}

// finish hands the browser's answer to the ceremony its cookie names.
// The ceremony is spent whatever the answer, so its cookie goes with
// every reply; a signed-in reply sets the new session's cookie, the old
// session (if the browser held one) ended.
func (p *pages) finish(c *gin.Context, status int, act func(ctx context.Context, ceremony string, answer []byte, previous string) (people.SignedIn, error)) {
	body, err := jsonBody(c)
	if err != nil {
		_ = c.Error(err)
		return
	}
	ceremony, _ := p.ceremony.Value(c.Request)
	previous, _ := p.session.Value(c.Request)
	p.ceremony.Clear(c.Writer)
	in, err := act(c.Request.Context(), ceremony, body, previous)
	if err != nil {
		_ = c.Error(err)
		return
	}
	p.session.Set(c.Writer, in.Cookie, in.Session.ExpiresAt.Sub(in.Session.CreatedAt))
	c.JSON(status, gin.H{"data": signedInView{AccountID: in.Account.ID, DisplayName: in.Account.DisplayName, Next: p.next(c.Query("next"))},
		"requestId": requestid.Get(c)})
}

// current returns the browser's session, if it holds a live one.
func (p *pages) current(c *gin.Context) (people.SignedIn, bool, error) {
	value, ok := p.session.Value(c.Request)
	if !ok {
		return people.SignedIn{}, false, nil
	}
	return p.people.Session(c.Request.Context(), value)
}

// home is the signed-in account, or the way to sign in.
func (p *pages) home(c *gin.Context) {
	in, ok, err := p.current(c)
	if err != nil {
		p.fail(c, err)
		return
	}
	if !ok {
		c.Redirect(http.StatusSeeOther, p.path("/account/signin"))
		return
	}
	p.render(c, http.StatusOK, "account", p.toAccountPage(in))
}

func (p *pages) signUpPage(c *gin.Context) {
	if _, ok, err := p.current(c); err != nil || ok {
		p.toAccount(c, err)
		return
	}
	p.render(c, http.StatusOK, "signup", p.frame("signup"))
}

func (p *pages) signInPage(c *gin.Context) {
	next := p.next(c.Query("next"))
	if _, ok, err := p.current(c); err != nil || ok {
		if err == nil {
			c.Redirect(http.StatusSeeOther, next)
			return
		}
		p.toAccount(c, err)
		return
	}
	p.render(c, http.StatusOK, "signin", p.signInView(next))
}

// signInView is the sign-in page, going to next afterwards.
func (p *pages) signInView(next string) signInView {
	v := signInView{frame: p.frame("signin"), Codes: p.people.SendsCodes(), Next: next}
	v.SignInFinish = p.withNext(v.SignInFinish, next)
	return v
}

// toAccount sends a signed-in browser to its account, or answers err.
func (p *pages) toAccount(c *gin.Context, err error) {
	if err != nil {
		p.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, p.path("/account/"))
}

// requestCode sends a code to the address, if an account uses it, and
// answers the code's page either way: the page says the same whether an
// account uses the address or not.
func (p *pages) requestCode(c *gin.Context) {
	if err := p.site.CheckPost(c.Request); err != nil {
		p.refuse(c, err)
		return
	}
	email, next := c.Request.PostForm.Get("email"), p.next(c.Request.PostForm.Get("next"))
	err := p.people.RequestCode(c.Request.Context(), email)
	var refused *account.RefusalError
	switch {
	case err == nil:
		p.render(c, http.StatusOK, "code", p.codeView(email, next, nil))
	case errors.As(err, &refused) && refused.Code == account.CodeInvalidEmail,
		errors.Is(err, people.ErrCodesOff):
		v := p.signInView(next)
		v.Email, v.CodeError = email, Problem(err)
		p.render(c, v.CodeError.Code.Status, "signin", v)
	default:
		if prob := Problem(err); prob != nil {
			// Too soon or too many: the code sent before still works.
			p.render(c, prob.Code.Status, "code", p.codeView(email, next, prob))
			return
		}
		p.fail(c, err)
	}
}

// verifyCode signs in with a typed code, or answers the code's page with
// the refusal; a wrong code's attempt is counted.
func (p *pages) verifyCode(c *gin.Context) {
	if err := p.site.CheckPost(c.Request); err != nil {
		p.refuse(c, err)
		return
	}
	email, code := c.Request.PostForm.Get("email"), c.Request.PostForm.Get("code")
	next := p.next(c.Request.PostForm.Get("next"))
	previous, _ := p.session.Value(c.Request)
	in, err := p.people.SignInWithCode(c.Request.Context(), email, code, previous)
	if err != nil {
		prob := Problem(err)
		if prob == nil || prob.Code.Status >= 500 {
			p.fail(c, err)
			return
		}
		p.render(c, prob.Code.Status, "code", p.codeView(email, next, prob))
		return
	}
	p.session.Set(c.Writer, in.Cookie, in.Session.ExpiresAt.Sub(in.Session.CreatedAt))
	c.Redirect(http.StatusSeeOther, next)
}

// signOut ends the session in the store before clearing the cookie: the
// old value signs in nothing afterwards, whoever holds it.
func (p *pages) signOut(c *gin.Context) {
	if err := p.site.CheckPost(c.Request); err != nil {
		p.refuse(c, err)
		return
	}
	in, ok, err := p.current(c)
	if err != nil {
		p.fail(c, err)
		return
	}
	if !ok {
		p.session.Clear(c.Writer)
		p.render(c, http.StatusOK, "signedout", p.frame("signedout"))
		return
	}
	if err := webpage.CheckCSRF(c.Request, in.Session.CSRF); err != nil {
		p.refuse(c, err)
		return
	}
	if err := p.people.SignOut(c.Request.Context(), in.Cookie); err != nil {
		p.fail(c, err)
		return
	}
	p.session.Clear(c.Writer)
	p.render(c, http.StatusOK, "signedout", p.frame("signedout"))
}

// signedInPost checks a signed-in form: the pages' origin, a live
// session, its CSRF token. ok false means it was answered.
func (p *pages) signedInPost(c *gin.Context) (people.SignedIn, bool) {
	if err := p.site.CheckPost(c.Request); err != nil {
		p.refuse(c, err)
		return people.SignedIn{}, false
	}
	in, ok, err := p.current(c)
	if err != nil {
		p.fail(c, err)
		return people.SignedIn{}, false
	}
	if !ok {
		c.Redirect(http.StatusSeeOther, p.path("/account/signin"))
		return people.SignedIn{}, false
	}
	if err := webpage.CheckCSRF(c.Request, in.Session.CSRF); err != nil {
		p.refuse(c, err)
		return people.SignedIn{}, false
	}
	return in, true
}

// requestConfirmation sends a code confirming the account's address to
// it, and answers the account page with the form to type it in, or with
// the refusal beside the button.
func (p *pages) requestConfirmation(c *gin.Context) {
	in, ok := p.signedInPost(c)
	if !ok {
		return
	}
	err := p.people.RequestConfirmation(c.Request.Context(), in.Account.ID)
	v := p.toAccountPage(in)
	if err != nil {
		prob := Problem(err)
		if prob == nil || prob.Code.Status >= 500 {
			p.fail(c, err)
			return
		}
		for k, vs := range prob.Header {
			c.Writer.Header()[k] = vs
		}
		v.ConfirmError = toFormError(prob)
		// Too soon or too many: the code sent before still confirms.
		v.ConfirmSent = prob.Code == CodeTooSoon || prob.Code == TooManyCodes
		p.render(c, prob.Code.Status, "account", v)
		return
	}
	v.ConfirmSent = true
	p.render(c, http.StatusOK, "account", v)
}

// confirmEmail confirms the account's address with a typed code (303 to
// the account page), or answers the account page with the refusal beside
// the field; a wrong code's attempt is counted.
func (p *pages) confirmEmail(c *gin.Context) {
	in, ok := p.signedInPost(c)
	if !ok {
		return
	}
	if _, err := p.people.ConfirmEmail(c.Request.Context(), in.Account.ID, c.Request.PostForm.Get("code")); err != nil {
		prob := Problem(err)
		if prob == nil || prob.Code.Status >= 500 {
			p.fail(c, err)
			return
		}
		v := p.toAccountPage(in)
		v.ConfirmSent, v.ConfirmError = prob.Code != EmailTaken && prob.Code != EmailAlreadyConfirmed, toFormError(prob)
		p.render(c, prob.Code.Status, "account", v)
		return
	}
	c.Redirect(http.StatusSeeOther, p.path("/account/"))
}

// refuse answers a form refused before it was heard (another origin, a
// form too large or unreadable, a CSRF token not the session's) with the
// refusal page: nothing changed.
func (p *pages) refuse(c *gin.Context, err error) {
	prob := Problem(err)
	if prob == nil {
		p.fail(c, err)
		return
	}
	p.render(c, prob.Code.Status, "refusal", refusalView{frame: p.frame("refusal"), Problem: prob})
}

func (p *pages) refuseTooLarge(c *gin.Context) {
	p.refuse(c, fmt.Errorf("%w: over %d bytes", webpage.ErrFormTooLarge, MaxPeopleBodyBytes))
}

// fail answers an error that is not the person's with a generic page
// (a busy account or mail queue says so, with Retry-After), the detail in
// the log and the trace.
func (p *pages) fail(c *gin.Context, err error) {
	prob := problem.From(err, Problem)
	problem.Report(c.Request.Context(), p.logger, prob)
	shown := problem.New(problem.Internal, "Something went wrong; nothing was changed. Try again in a moment.")
	if prob.Code.Status == http.StatusServiceUnavailable {
		shown = prob
		for k, vs := range prob.Header {
			c.Writer.Header()[k] = vs
		}
	}
	p.render(c, shown.Code.Status, "refusal", refusalView{frame: p.frame("refusal"), Problem: shown})
}
