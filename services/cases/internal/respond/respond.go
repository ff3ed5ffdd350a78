// Package respond is the hosted respondent page, where
// showOnce.respondentLoginPath (/respond/{caseId}#login=<token>) leads a
// person: server-rendered html/template pages and one small ES module,
// embedded, with no front-end build and no third-party assets.
//
// The login token rides in the URL fragment, which no request carries. The
// module reads it, removes it from the address bar and history, and posts
// it to POST /respond/{caseId}/session/preview, which spends nothing and
// answers a confirmation page: the case and the respondent the link signs
// in as, and a "Sign in as …" button. Only that click posts the token with
// the confirmation field to POST /respond/{caseId}/session, which spends it
// (a token works once) and sets a session cookie scoped to the case's path.
// The page never exchanges a token on load: the origin check stops other
// sites from posting, but not a person opening someone else's link on this
// very page, which would sign them into the sender's case.
//
// With the session the page shows who is signed in (the case and the
// respondent) with a sign-out, and lets the respondent join and file the
// answer through caseflow, the application layer the API uses, so the
// docket records the same events. Every form post must come from the
// page's own origin and carry the session's CSRF token; every refusal is an
// HTML page with its 4xx status that changed nothing.
package respond

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// Deps are what the page needs.
type Deps struct {
	Cases  *store.Cases
	Flow   *caseflow.Service
	Logger *slog.Logger
	// Now is the clock of session creation; nil means time.Now.
	Now func() time.Time
}

// CookieName names the session cookie.
const CookieName = "pc_respond_session"

// CapabilityLogin is the case capability whose hash the login token must
// match: filings mints the token, shows it once in
// showOnce.respondentLoginPath, and sends its SHA-256 in case-opened.
const CapabilityLogin = "respondent_login"

// MaxBodyBytes bounds a form post: an answer of caseflow.MaxAnswerRunes
// characters of up to four bytes each, percent-encoded (three bytes per
// byte), with room to spare.
const MaxBodyBytes = 256 << 10

type page struct {
	cfg    Config
	site   webpage.Site // the only origin whose form posts are accepted, and the path prefix
	prefix string       // the public base URL's path, "" for none
	cases  *store.Cases
	flow   *caseflow.Service
	logger *slog.Logger
	now    func() time.Time
}

// Register adds the hosted page's routes under /respond.
func Register(r gin.IRouter, cfg Config, d Deps) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("hosted respondent page: %w", err)
	}
	p := &page{cfg: cfg, cases: d.Cases, flow: d.Flow, logger: d.Logger, now: d.Now}
	if p.now == nil {
		p.now = time.Now
	}
	site, err := webpage.NewSite(cfg.PublicBaseURL, cfg.SecureCookie)
	if err != nil {
		return fmt.Errorf("hosted respondent page: %w", err)
	}
	p.site, p.prefix = site, site.Prefix
	g := r.Group("/respond", webpage.Headers, webpage.LimitBody(MaxBodyBytes, p.refuseTooLarge))
	g.GET("/static/:file", serveStatic)
	g.GET("/:caseId", p.show)
	g.POST("/:caseId/session/preview", p.preview)
	g.POST("/:caseId/session", p.exchange)
	g.POST("/:caseId/signout", p.signOut)
	g.POST("/:caseId/join", p.join)
	g.POST("/:caseId/answer", p.answer)
	return nil
}

// refuseTooLarge answers a form whose Content-Length is over
// MaxBodyBytes with a page rather than the API's problem; a body that
// grows past the limit unannounced fails webpage.ReadForm (bad_form, 413).
func (p *page) refuseTooLarge(c *gin.Context) {
	p.refuse(c, refusal{Status: http.StatusRequestEntityTooLarge, Code: "too_large", CaseID: caseIDOrEmpty(c.Param("caseId")),
		Title: "The form is too large", Detail: fmt.Sprintf("A form may hold at most %d KiB. Nothing was filed.", MaxBodyBytes>>10)})
}

// caseIDOrEmpty keeps a path's case id for a page's links only when it is
// a valid one.
func caseIDOrEmpty(id string) string {
	if procedure.ValidCaseID(id) {
		return id
	}
	return ""
}

// pagePath is the case's page as the browser addresses it.
func (p *page) pagePath(caseID string) string { return p.prefix + "/respond/" + caseID }

// show renders the case for a session of it, and otherwise the sign-in
// page, which holds nothing of the case: its module posts the login token
// of the fragment, if there is one, to the preview.
func (p *page) show(c *gin.Context) {
	id := c.Param("caseId")
	if !procedure.ValidCaseID(id) {
		p.refuse(c, refusalNotFound(id))
		return
	}
	sess, ok, err := p.session(c, id)
	if err != nil {
		p.fail(c, id, err)
		return
	}
	if !ok {
		p.render(c, http.StatusOK, "signin", p.frame(id))
		return
	}
	l, err := p.cases.Load(c.Request.Context(), id)
	if err != nil {
		p.fail(c, id, err)
		return
	}
	v, err := p.caseView(c.Request.Context(), l, sess)
	if err != nil {
		p.fail(c, id, err)
		return
	}
	p.render(c, http.StatusOK, "case", v)
}

// ConfirmField and ConfirmValue are what the confirmation page's "Sign in
// as …" button adds to the exchange (webpage.Confirmed).
const (
	ConfirmField = webpage.ConfirmField
	ConfirmValue = webpage.ConfirmValue
)

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
	spent, err := p.cases.LoginSpent(c.Request.Context(), id)
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
	err := p.cases.SpendLogin(c.Request.Context(), id, auth.HashToken(sessionID), auth.NewToken(""), p.now(), p.cfg.SessionTTL)
	if errors.Is(err, store.ErrLoginSpent) {
		p.refuse(c, p.refusalUsed(c, id))
		return
	}
	if err != nil {
		p.fail(c, id, err)
		return
	}
	p.cookie(id).Set(c.Writer, sessionID, p.cfg.SessionTTL)
	p.logger.InfoContext(c.Request.Context(), "respondent signed in on the hosted page", "case_id", id, "request_id", requestid.Get(c))
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
		p.refuse(c, refusal{Status: http.StatusForbidden, Code: "login_invalid", CaseID: id,
			Title: "This link is not valid", Detail: "The sign-in link does not belong to this case. Check that you opened the whole link you were sent."})
		return store.Loaded{}, false
	}
	return l, true
}

// refusalUsed answers a spent token, offering the way to the case when
// this browser is signed in to it.
func (p *page) refusalUsed(c *gin.Context, id string) refusal {
	r := refusal{Status: http.StatusGone, Code: "login_used", CaseID: id,
		Title: "This link was used", Detail: "A sign-in link works once, and this one has been used. If that was not you, tell whoever sent you the link."}
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
	// guard found the session, so the cookie is there.
	value, _ := p.cookie(id).Value(c.Request)
	if err := p.cases.EndRespondSession(c.Request.Context(), id, auth.HashToken(value)); err != nil {
		p.fail(c, id, err)
		return
	}
	p.cookie(id).Clear(c.Writer)
	p.logger.InfoContext(c.Request.Context(), "respondent signed out of the hosted page", "case_id", id, "request_id", requestid.Get(c))
	p.render(c, http.StatusOK, "signedout", p.frame(id))
}

// join makes the session's respondent participant take part.
func (p *page) join(c *gin.Context) {
	id, ok := p.guard(c)
	if !ok {
		return
	}
	p.act(c, id, func(_ procedure.Case, pid string) (procedure.Act, []store.Document, *refusal) {
		return procedure.Act{Kind: procedure.ActJoin, ParticipantID: pid}, nil, nil
	})
}

// answer files the respondent's answer, its text kept beside the case as
// the API's answer keeps it.
func (p *page) answer(c *gin.Context) {
	id, ok := p.guard(c)
	if !ok {
		return
	}
	// A browser submits a textarea's line breaks as CRLF; the text is kept
	// as the respondent typed it.
	text := strings.ReplaceAll(c.Request.PostForm.Get("text"), "\r\n", "\n")
	if err := checkText(text); err != nil {
		p.refuse(c, refusal{Status: http.StatusBadRequest, Code: string(procedure.CodeInvalidAct), CaseID: id,
			Title: "The answer cannot be filed", Detail: "The answer " + err.Error() + ".", Back: p.pagePath(id)})
		return
	}
	p.act(c, id, func(_ procedure.Case, pid string) (procedure.Act, []store.Document, *refusal) {
		sum := sha256.Sum256([]byte(text))
		digest := hex.EncodeToString(sum[:])
		return procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: pid, Digest: digest},
			[]store.Document{{Digest: digest, Content: []byte(text)}}, nil
	})
}

// guard admits a form post: a valid case id, the page's own origin, a
// session of the case, and the session's CSRF token, in that order. It
// answers the refusal itself.
func (p *page) guard(c *gin.Context) (string, bool) {
	id := c.Param("caseId")
	if !procedure.ValidCaseID(id) {
		p.refuse(c, refusalNotFound(id))
		return "", false
	}
	if err := p.site.CheckPost(c.Request); err != nil {
		p.refuse(c, refusalPost(id, err))
		return "", false
	}
	sess, ok, err := p.session(c, id)
	if err != nil {
		p.fail(c, id, err)
		return "", false
	}
	if !ok {
		p.refuse(c, refusal{Status: http.StatusForbidden, Code: "no_session", CaseID: id,
			Title: "You are not signed in", Detail: "This browser holds no session of this case, or it ended. Nothing was filed."})
		return "", false
	}
	if err := webpage.CheckCSRF(c.Request, sess.CSRF); err != nil {
		p.refuse(c, refusal{Status: http.StatusForbidden, Code: "csrf_mismatch", CaseID: id, Back: p.pagePath(id),
			Title: "The form has expired", Detail: "The form was not one this page gave your session. Nothing was filed: reload the case and try again."})
		return "", false
	}
	return id, true
}

// act resolves which respondent participant the session acts for, lets
// build make the act, and applies it through caseflow; an accepted act
// goes back to the case page (post, redirect, get), a refused one answers
// the procedure's refusal with the status the API gives it.
func (p *page) act(c *gin.Context, id string, build func(procedure.Case, string) (procedure.Act, []store.Document, *refusal)) {
	ctx := c.Request.Context()
	l, err := p.cases.Load(ctx, id)
	if err != nil {
		p.fail(c, id, err)
		return
	}
	pid, r := p.actor(l.Case, c.Request.PostForm.Get("participantId"))
	if r != nil {
		p.refuse(c, *r)
		return
	}
	act, docs, r := build(l.Case, pid)
	if r != nil {
		p.refuse(c, *r)
		return
	}
	res, err := p.flow.Act(ctx, id, act, docs...)
	if err != nil {
		if pr := caseflow.Problem(err); pr != nil && pr.Code.Status < 500 {
			p.refuse(c, refusal{Status: pr.Code.Status, Code: pr.Code.Name, CaseID: id, Back: p.pagePath(id),
				Title: pr.Code.Title, Detail: pr.Detail})
			return
		}
		p.fail(c, id, err)
		return
	}
	p.logger.InfoContext(ctx, "case act accepted", "case_id", id, "act", act.Kind, "by", "hosted respondent page",
		"request_id", requestid.Get(c), "status", res.Case.Status())
	c.Redirect(http.StatusSeeOther, p.pagePath(id))
}

// actor is the respondent participant the session acts for: the one named
// by the form, which must be one of actable(c), or the only one. The login
// token is a hosted respondent's; a participant bound to a partner is
// acted for by that partner's credentials only, never from this page.
func (p *page) actor(c procedure.Case, named string) (string, *refusal) {
	ids := actable(c)
	switch {
	case named != "" && slices.Contains(ids, named):
		return named, nil
	case named != "":
		return "", &refusal{Status: http.StatusForbidden, Code: "forbidden", CaseID: c.ID, Back: p.pagePath(c.ID),
			Title: "Not yours to act for", Detail: fmt.Sprintf("This session does not act for participant %s.", named)}
	case len(ids) == 1:
		return ids[0], nil
	case len(ids) == 0:
		return "", &refusal{Status: http.StatusForbidden, Code: "forbidden", CaseID: c.ID, Back: p.pagePath(c.ID),
			Title: "Nothing to act for here", Detail: "Every respondent of this case acts through its own partner or agent, not through this page."}
	default:
		return "", &refusal{Status: http.StatusBadRequest, Code: string(procedure.CodeInvalidAct), CaseID: c.ID, Back: p.pagePath(c.ID),
			Title: "Choose who acts", Detail: "This case has several respondents: choose the participant you act for."}
	}
}

// actable lists the respondent participants the page may act for: hosted
// respondents, before they join (the page's join binds them to this
// page's person) or after they joined here. One that a partner acts for,
// or that joined through a partner's agent, is not the page's.
func actable(c procedure.Case) []string {
	var ids []string
	for _, pt := range c.Participants {
		if pt.Side == procedure.Respondent && (pt.Unbound() || pt.Hosted) {
			ids = append(ids, pt.ID)
		}
	}
	return ids
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

// fail answers an error that is not the caller's: a generic page, the
// detail in the log.
func (p *page) fail(c *gin.Context, caseID string, err error) {
	status := http.StatusInternalServerError
	title, detail := "Something went wrong", "Nothing was filed. Try again in a moment."
	if errors.Is(err, caseflow.ErrBusy) {
		status, title = http.StatusServiceUnavailable, "The case is busy"
		c.Header("Retry-After", "1")
	}
	p.logger.ErrorContext(c.Request.Context(), "hosted respondent page failed", "case_id", caseID, "request_id", requestid.Get(c), "err", err)
	p.refuse(c, refusal{Status: status, Code: "internal", CaseID: caseID, Title: title, Detail: detail})
}

// checkText accepts 1 to caseflow.MaxAnswerRunes characters without control
// characters other than tab and line breaks, as the API's answer does.
func checkText(s string) error {
	n := utf8.RuneCountInString(s)
	switch {
	case strings.TrimSpace(s) == "":
		return errors.New("is empty")
	case n > caseflow.MaxAnswerRunes:
		return fmt.Errorf("has %d characters; at most %d", n, caseflow.MaxAnswerRunes)
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' {
			return fmt.Errorf("holds control character U+%04X", r)
		}
	}
	return nil
}
