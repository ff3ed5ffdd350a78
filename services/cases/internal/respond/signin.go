// Signing in on the hosted page: the case page, the link preview that spends
// nothing, the confirmed exchange for a session, and sign-out.

package respond

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// show renders the case for a session of it (the hosted one, or an
// account's whose account takes part as a respondent), and otherwise the
// sign-in page, which holds nothing of the case: its module posts the
// login token of the fragment, if there is one, to the preview.
func (p *page) show(c *gin.Context) {
	id := c.Param("caseId")
	if !procedure.ValidCaseID(id) {
		p.refuse(c, refusalNotFound(id))
		return
	}
	v, err := p.viewer(c, id)
	if err != nil {
		p.fail(c, id, err)
		return
	}
	if !v.any() {
		p.render(c, http.StatusOK, "signin", p.frame(id))
		return
	}
	l, err := p.cases.Load(c.Request.Context(), id)
	if errors.Is(err, store.ErrNotFound) && !v.hasHosted {
		// An account session alone tells nothing of a case id.
		p.render(c, http.StatusOK, "signin", p.frame(id))
		return
	}
	if err != nil {
		p.fail(c, id, err)
		return
	}
	if !v.hasHosted && len(v.actable(l.Case)) == 0 {
		// Signed in to an account that takes no part here: the page asks
		// for the invitation's link, as to anyone.
		p.render(c, http.StatusOK, "signin", p.frame(id))
		return
	}
	// ?docket=N pages the docket from its event N; anything else shows
	// its latest page.
	from, _ := strconv.ParseInt(c.Query("docket"), 10, 64)
	view, err := p.caseView(c.Request.Context(), l, v, from)
	if err != nil {
		p.fail(c, id, err)
		return
	}
	p.render(c, http.StatusOK, "case", view)
}

// preview answers what a login token would sign in as, spending nothing:
// the case, its claimant, and the respondent participants the session
// would act for, with the button that confirms. A token that is wrong,
// another case's or spent is answered exactly as the exchange answers it.
// Only reads happen here, so the module may post to it on load.
func (p *page) preview(c *gin.Context) {
	id, token, ok := p.loginForm(c)
	if !ok {
		return
	}
	l, ok := p.checkLogin(c, id, token)
	if !ok {
		return
	}
	spent, err := p.cases.LoginSpent(c.Request.Context(), id, auth.HashToken(token))
	if err != nil {
		p.fail(c, id, err)
		return
	}
	if spent {
		p.refuse(c, p.refusalUsed(c, id))
		return
	}
	p.render(c, http.StatusOK, "confirm", p.confirmView(l.Case, token))
}

// exchange spends the case's one-time login token for a session, when the
// person confirmed it on the preview's page. Only a same-origin post is
// heard (a cross-site form could otherwise sign a browser into a case of
// the attacker's choosing), and only with the confirmation field (the page
// itself would otherwise sign in whoever opens someone else's link). The
// token is compared by its SHA-256 in constant time with the case's
// respondent_login hash; spending it and creating the session are one
// Redis step.
func (p *page) exchange(c *gin.Context) {
	id, token, ok := p.loginForm(c)
	if !ok {
		return
	}
	if !webpage.Confirmed(c.Request) {
		p.refuse(c, refusal{Status: http.StatusBadRequest, Code: "login_unconfirmed", CaseID: id,
			Title: "Sign-in not confirmed", Detail: "Signing in needs your click on \"Sign in as …\" after the page has shown which case the link is for. Nothing was used: open the link again."})
		return
	}
	if _, ok := p.checkLogin(c, id, token); !ok {
		return
	}
	sessionID := auth.NewToken("pc_rs_")
	err := p.cases.SpendLogin(c.Request.Context(), id, auth.HashToken(token), auth.HashToken(sessionID), auth.NewToken(""), p.now(), p.cfg.SessionTTL)
	if errors.Is(err, store.ErrLoginSpent) {
		p.refuse(c, p.refusalUsed(c, id))
		return
	}
	if errors.Is(err, store.ErrLoginStale) {
		// The link was reissued between the check and the spending.
		p.refuse(c, refusalInvalidLogin(id))
		return
	}
	if err != nil {
		p.fail(c, id, err)
		return
	}
	p.cookie(id).Set(c.Writer, sessionID, p.cfg.SessionTTL)
	p.logger.InfoContext(c.Request.Context(), "respondent signed in on the hosted page", "case_id", id)
	c.Redirect(http.StatusSeeOther, p.pagePath(id))
}

// loginForm admits a post of a login token (the preview and the exchange):
// a valid case id, the page's own origin, a readable form with a token. It
// answers the refusal itself.
func (p *page) loginForm(c *gin.Context) (id, token string, ok bool) {
	id = c.Param("caseId")
	if !procedure.ValidCaseID(id) {
		p.refuse(c, refusalNotFound(id))
		return "", "", false
	}
	if err := p.site.CheckPost(c.Request); err != nil {
		p.refuse(c, refusalPost(id, err))
		return "", "", false
	}
	token = c.Request.PostForm.Get("login")
	if token == "" {
		p.refuse(c, refusal{Status: http.StatusBadRequest, Code: "login_missing", CaseID: id,
			Title: "No sign-in link", Detail: "Open the link you were sent: it ends in #login= followed by your one-time token."})
		return "", "", false
	}
	return id, token, true
}

// checkLogin loads the case and compares the token's SHA-256 with its
// respondent_login hash in constant time. A case that does not exist and
// a token of another case read the same: the answer says nothing about
// which cases exist. It answers the refusal itself.
func (p *page) checkLogin(c *gin.Context, id, token string) (store.Loaded, bool) {
	l, err := p.cases.Load(c.Request.Context(), id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		p.fail(c, id, err)
		return store.Loaded{}, false
	}
	want := ""
	if err == nil {
		want = l.Case.Capabilities[CapabilityLogin]
	}
	if !webpage.MatchToken(token, want) {
		p.refuse(c, refusalInvalidLogin(id))
		return store.Loaded{}, false
	}
	return l, true
}

// refusalInvalidLogin answers a token that is not the case's current
// one: wrong, another case's, or replaced by a reissued link.
func refusalInvalidLogin(id string) refusal {
	return refusal{Status: http.StatusForbidden, Code: "login_invalid", CaseID: id,
		Title: "This link is not valid", Detail: "The sign-in link does not belong to this case, or a newer link replaced it. Check that you opened the whole link you were sent, and the latest one."}
}

// refusalUsed answers a spent token, offering the way to the case when
// this browser is signed in to it.
func (p *page) refusalUsed(c *gin.Context, id string) refusal {
	r := refusal{Status: http.StatusGone, Code: "login_used", CaseID: id,
		Title: "This link was used", Detail: "A sign-in link works once, and this one has been used. If that was not you, tell whoever sent you the link: they can send you a new one, which replaces this one."}
	if _, signedIn, _ := p.session(c, id); signedIn {
		r.Detail = "A sign-in link works once, and this one has been used. This browser is signed in to the case already."
		r.Continue = p.pagePath(id)
	}
	return r
}

// signOut ends the browser's session of the case: its Redis key goes and
// the cookie is cleared. The login token stays spent.
func (p *page) signOut(c *gin.Context) {
	id, ok := p.guard(c)
	if !ok {
		return
	}
	value, hosted := p.cookie(id).Value(c.Request)
	if !viewerFrom(c).hasHosted || !hosted {
		// An account's session is signed out of on the account page,
		// which ends it for every page of the site.
		p.refuse(c, refusal{Status: http.StatusForbidden, Code: "no_session", CaseID: id, Back: p.pagePath(id),
			Title: "Signed in with your account", Detail: "This browser holds no session of this case's link: sign out of your account on the account page."})
		return
	}
	if err := p.cases.EndRespondSession(c.Request.Context(), id, auth.HashToken(value)); err != nil {
		p.fail(c, id, err)
		return
	}
	p.cookie(id).Clear(c.Writer)
	p.logger.InfoContext(c.Request.Context(), "respondent signed out of the hosted page", "case_id", id)
	p.render(c, http.StatusOK, "signedout", p.frame(id))
}

// session returns the session of the case the request's cookie names.
func (p *page) session(c *gin.Context, caseID string) (store.RespondSession, bool, error) {
	value, ok := p.cookie(caseID).Value(c.Request)
	if !ok {
		return store.RespondSession{}, false, nil
	}
	return p.cases.RespondSession(c.Request.Context(), caseID, auth.HashToken(value))
}

// cookie is the session cookie of a case, scoped to the case's page.
func (p *page) cookie(caseID string) webpage.SessionCookie {
	return p.site.Cookie(CookieName, "/respond/"+caseID)
}
