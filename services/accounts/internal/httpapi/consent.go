// The authorization code grant's pages: GET /oauth/authorize checks an
// application's request and keeps it, the consent page under /account
// shows the signed-in person exactly what is asked and posts the
// decision, and the browser goes back to the application's registered
// redirect URI with the code or access_denied. A request that cannot be
// trusted to name its redirect URI is shown as an error page, never
// redirected.
//
// The consent page lives under /account so that the session cookie
// reaches it wherever the cookie is scoped; a browser without a session
// signs in first and comes back (next, a path of the pages only).

package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/grants"
	"github.com/pcourt/pcourt/services/accounts/internal/oauth"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

// consentPath is the consent page and its form's action.
const consentPath = "/account/consent"

// The consent form's fields.
const (
	requestField  = "request"
	decisionField = "decision"
)

// consent is what the code grant's pages need besides the people's pages.
type consent struct {
	oauth  *oauth.Server
	grants *grants.Service
}

// registerConsent adds GET /oauth/authorize and the consent page.
func (p *pages) registerConsent(r gin.IRouter, account *gin.RouterGroup) {
	r.GET(oauth.AuthorizationPath, webpage.Headers, p.authorize)
	account.GET("/consent", p.consentPage)
	account.POST("/consent", p.decide)
}

// authorize checks the application's request: refused before its
// redirect URI is trusted, the person sees the error here; refused after,
// the browser goes back to the client with the error; accepted, the
// request is kept (account.AuthorizationLifetime) and the browser goes
// to the consent page.
func (p *pages) authorize(c *gin.Context) {
	checked, err := p.consent.oauth.CheckAuthorization(c.Request.Context(), c.Request)
	var refused *oauth.AuthorizationError
	switch {
	case errors.As(err, &refused) && refused.RedirectTo != "":
		c.Redirect(http.StatusFound, refused.RedirectTo)
		return
	case errors.As(err, &refused):
		p.render(c, http.StatusBadRequest, "authorizeerror", authorizeErrorView{frame: p.frame("authorizeerror"),
			Error: string(refused.Err.ErrorType), Description: refused.Err.Description})
		return
	case err != nil:
		p.fail(c, err)
		return
	}
	id, err := p.consent.grants.Wait(c.Request.Context(), checked.Authorization)
	if err != nil {
		p.fail(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, p.consentURL(id))
}

func (p *pages) consentURL(id string) string {
	return p.path(consentPath) + "?" + url.Values{requestField: {id}}.Encode()
}

// authorizeErrorView is a request the person is shown, not sent back
// with: the OAuth error and its description.
type authorizeErrorView struct {
	frame
	Error       string
	Description string
}

// consentView is the consent page: who asks, for what, for how long.
type consentView struct {
	frame
	CSRF        string
	Request     string
	Action      string
	DisplayName string
	ClientName  string
	ClientID    string
	RedirectTo  string // the redirect URI's origin, where the browser goes
	Scopes      []scopeView
	Resource    string
	ResourceIs  string // "the API" or "the MCP server"
	CaseID      string
	Minutes     int
	RefreshDays int
}

type scopeView struct {
	Scope string
	Words string
}

// scopeWords say what each scope lets the application do, as the
// person reads it (docs/accounts.md, "Tokens").
var scopeWords = map[account.Scope]string{
	"cases:read":        "read the cases your account takes part in",
	"cases:act":         "act on your side of those cases: confirmations, answers, submissions, messages",
	"evidence:file":     "upload exhibits and file evidence on your side",
	"readiness:buy":     "request readiness reports (any payment is still asked of the payer)",
	"executions:report": "report the execution of an award",
}

// consentPage shows a waiting request to the signed-in person, or sends
// a browser without a session to sign in and come back.
func (p *pages) consentPage(c *gin.Context) {
	id := c.Query(requestField)
	in, ok, err := p.current(c)
	if err != nil {
		p.fail(c, err)
		return
	}
	if !ok {
		c.Redirect(http.StatusSeeOther, p.path("/account/signin")+"?"+url.Values{"next": {p.consentURL(id)}}.Encode())
		return
	}
	a, app, err := p.consent.grants.Waiting(c.Request.Context(), id)
	if errors.Is(err, store.ErrAuthorizationNotFound) || errors.Is(err, store.ErrNotFound) {
		p.render(c, http.StatusNotFound, "authorizeerror", authorizeErrorView{frame: p.frame("authorizeerror"), Error: "request_expired",
			Description: "This request expired or was answered already. Go back to the application and start again."})
		return
	}
	if err != nil {
		p.fail(c, err)
		return
	}
	redirect, _ := url.Parse(a.RedirectURI) // registered and checked absolute
	origin := redirect.Scheme + "://" + redirect.Host
	v := consentView{frame: p.frame("consent"), CSRF: in.Session.CSRF, Request: id, Action: p.path(consentPath),
		DisplayName: in.Account.DisplayName, ClientName: app.Name, ClientID: app.ID, RedirectTo: origin,
		Resource: a.Resource, ResourceIs: "the API", CaseID: a.CaseID,
		Minutes: int(grants.TokenLifetime.Minutes()), RefreshDays: int(account.RefreshLifetime.Hours() / 24)}
	if a.Resource != p.consent.oauth.APIAudience() {
		v.ResourceIs = "the MCP server"
	}
	for _, sc := range a.Scopes {
		v.Scopes = append(v.Scopes, scopeView{Scope: string(sc), Words: scopeWords[sc]})
	}
	// The decision's answer redirects to the application: a browser holds
	// a form's redirects to the page's form-action too, so the policy
	// names the redirect URI's origin beside the page's own.
	c.Header("Content-Security-Policy", strings.Replace(webpage.ContentSecurityPolicy, "form-action 'self'", "form-action 'self' "+origin, 1))
	p.render(c, http.StatusOK, "consent", v)
}

// decide takes the person's decision on a waiting request, once: from
// the pages' origin, with the session's CSRF token. Approve sends the
// browser to the redirect URI with the code; deny with access_denied.
func (p *pages) decide(c *gin.Context) {
	in, ok := p.signedInPost(c)
	if !ok {
		return
	}
	id := c.Request.PostForm.Get(requestField)
	var target string
	switch c.Request.PostForm.Get(decisionField) {
	case "approve":
		a, code, err := p.consent.grants.Approve(c.Request.Context(), id, in.Account)
		if err != nil {
			p.decisionFailed(c, err)
			return
		}
		target = p.consent.oauth.CodeRedirect(a, code)
	case "deny":
		a, err := p.consent.grants.Deny(c.Request.Context(), id)
		if err != nil {
			p.decisionFailed(c, err)
			return
		}
		target = p.consent.oauth.ErrorRedirect(a, "access_denied", "the person denied the request")
	default:
		p.render(c, http.StatusBadRequest, "authorizeerror", authorizeErrorView{frame: p.frame("authorizeerror"), Error: "invalid_request",
			Description: "The form's decision must be approve or deny; nothing was decided."})
		return
	}
	c.Redirect(http.StatusSeeOther, target)
}

func (p *pages) decisionFailed(c *gin.Context, err error) {
	if errors.Is(err, store.ErrAuthorizationNotFound) {
		p.render(c, http.StatusNotFound, "authorizeerror", authorizeErrorView{frame: p.frame("authorizeerror"), Error: "request_expired",
			Description: "This request expired or was answered already. Go back to the application and start again."})
		return
	}
	p.fail(c, err)
}

// next is where a sign-in goes afterwards: raw when it is a path of the
// account pages (the consent page, with its query), else the account.
// Nothing else is followed, so no link sends a person signing in to
// another site: no scheme, no host, no "//" or backslash (which browsers
// read as a host), no dot segments.
func (p *pages) next(raw string) string {
	home := p.path("/account/")
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		!strings.HasPrefix(raw, home) || strings.Contains(raw, "//") || strings.ContainsAny(raw, "\\\x00\r\n\t") ||
		strings.Contains(u.Path, "/.") {
		return home
	}
	return raw
}

// withNext adds a sign-in's next to a path of the pages, when it goes
// anywhere but the account.
func (p *pages) withNext(path, next string) string {
	if next == p.path("/account/") {
		return path
	}
	return path + "?" + url.Values{"next": {next}}.Encode()
}
