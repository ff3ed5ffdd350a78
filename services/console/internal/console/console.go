// Package console is the partner console, its own service behind the
// edge, which routes /console/ and /api/console/ to it: server-rendered html/template pages and two small ES modules,
// embedded, with no front-end build and no third-party assets.
//
// Access. A partner's backend mints a single-use link with its bearer
// credential (POST /api/console/links). The token rides in the URL
// fragment (/console/#link=<token>), which no request carries; the page's
// module takes it out of the address bar and posts it to
// /console/session/preview, which spends nothing and answers what the
// link signs in as (partner, tenant, environment, capabilities; and the
// session this browser holds now, if any) with a "Sign in as …" button.
// Only that click posts the token, with the confirmation field, to
// /console/session. There one Lua step spends the link and creates the
// session, whose HttpOnly, SameSite=Strict cookie is scoped to /console.
// The console never exchanges a link on load: the origin check stops other
// sites from posting, not a person opening someone else's link here, which
// would sign them into the sender's console. Every page of a session says
// who is signed in, with a sign-out.
//
// API parity. At the exchange the console mints, with libs/auth, a bearer
// credential for the link's tenant, environment and partner that expires
// with the link, and keeps its token sealed (AES-GCM) under a key derived
// from the session cookie. Every page then calls the public API over HTTP,
// through the edge's routing table to the owning service, with that
// credential: the owners check it as they check a partner's own, so the
// console reaches nothing a partner could not reach itself. Revoking the
// link or signing out revokes the credential. The capabilities of the link
// (view, manage_endpoints, replay) narrow what the pages offer and accept.
//
// Every form post must come from the console's own origin and carry the
// session's CSRF token; every refusal is an HTML page with its 4xx status
// that changed nothing.
package console

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/webpage"
)

// Config is the console's configuration.
type Config struct {
	// PublicBaseURL is the address browsers reach the console at: the
	// edge's public URL, which routes /console/ here. Its origin
	// is the only one whose form posts are accepted and the one links are
	// minted for; its path prefixes the console's links and cookie.
	PublicBaseURL string
	// SecureCookie marks the session cookie Secure; required over https.
	SecureCookie bool
	// APIURL is where the console calls the public API: the edge, as a
	// partner's backend does.
	APIURL string
}

// DefaultConfig is the development edge, in front of the console.
func DefaultConfig() Config {
	return Config{PublicBaseURL: "http://127.0.0.1:8080", APIURL: "http://127.0.0.1:8080"}
}

// Validate reports an unusable setting.
func (c Config) Validate() error {
	if _, err := webpage.NewSite(c.PublicBaseURL, c.SecureCookie); err != nil {
		return fmt.Errorf("console: %w", err)
	}
	if u, err := url.Parse(c.APIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("console: API URL %q must be an absolute http(s) URL", c.APIURL)
	}
	return nil
}

// Deps are what the console needs.
type Deps struct {
	Store       *Store
	Credentials *auth.Store
	// Transport carries the console's API calls; nil means a default one.
	Transport http.RoundTripper
	Logger    *slog.Logger
	Now       func() time.Time // nil: time.Now
}

// Console serves the console's pages and API.
type Console struct {
	cfg    Config
	site   webpage.Site
	cookie webpage.SessionCookie
	origin string
	prefix string
	store  *Store
	creds  *auth.Store
	client *client
	logger *slog.Logger
	now    func() time.Time
}

// New returns the console.
func New(cfg Config, d Deps) (*Console, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if d.Store == nil || d.Credentials == nil || d.Logger == nil {
		return nil, errors.New("console: store, credentials and logger are required")
	}
	apiURL, _ := url.Parse(cfg.APIURL)                              // Validate checked it
	site, _ := webpage.NewSite(cfg.PublicBaseURL, cfg.SecureCookie) // Validate checked it
	cs := &Console{cfg: cfg, site: site, cookie: site.Cookie(CookieName, "/console"), origin: site.Origin, prefix: site.Prefix,
		store: d.Store, creds: d.Credentials, logger: d.Logger, now: d.Now}
	if cs.now == nil {
		cs.now = time.Now
	}
	tr := d.Transport
	if tr == nil {
		tr = &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second, ResponseHeaderTimeout: 15 * time.Second}
	}
	cs.client = &client{base: apiURL, hc: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
	return cs, nil
}

// CookieName names the session cookie.
const CookieName = "pc_console_session"

// cookiePrefix begins every session cookie value: pccs_<link id>.<secret>.
const cookiePrefix = "pccs_"

// MaxFormBytes bounds a console form post.
const MaxFormBytes = 64 << 10

// Register adds the console's links API (/api/console/links) and its pages
// under /console/.
func (cs *Console) Register(r gin.IRouter) {
	cs.registerAPI(r)
	g := r.Group("/console", webpage.Headers, webpage.LimitBody(MaxFormBytes, cs.refuseTooLarge))
	g.GET("/static/:file", cacheStatic, webpage.Static(staticFS))
	g.GET("/", cs.home)
	g.POST("/session/preview", cs.preview)
	g.POST("/session", cs.exchange)
	g.POST("/signout", cs.guard(CapView, cs.signOut))
	g.GET("/deliveries", cs.page(cs.deliveries))
	g.GET("/deliveries/:id", cs.page(cs.deliveryDetail))
	g.POST("/deliveries/:id/replay", cs.guard(CapReplay, cs.replay))
	g.GET("/endpoints", cs.page(cs.endpoints))
	g.POST("/endpoints", cs.guard(CapManageEndpoints, cs.createEndpoint))
	g.POST("/endpoints/:id/enable", cs.guard(CapManageEndpoints, cs.setEnabled(true)))
	g.POST("/endpoints/:id/disable", cs.guard(CapManageEndpoints, cs.setEnabled(false)))
	g.GET("/endpoints/:id/edit", cs.page(cs.editEndpoint))
	g.POST("/endpoints/:id", cs.guard(CapManageEndpoints, cs.updateEndpoint))
	g.POST("/endpoints/:id/test", cs.guard(CapManageEndpoints, cs.sendTestEvent))
	g.GET("/endpoints/:id/recover", cs.page(cs.recoverPreview))
	g.POST("/endpoints/:id/recover", cs.guard(CapReplay, cs.recover))
	g.GET("/endpoints/:id/recoveries/:recoveryId", cs.page(cs.recoveryProgress))
	g.GET("/events", cs.page(cs.catalogue))
	g.GET("/keys", cs.page(cs.keys))
	g.GET("/verify", cs.page(cs.verify))
	g.GET("/compatibility", cs.page(cs.compatibility))
	g.GET("/audit", cs.page(cs.auditPage))
}

// refuseTooLarge answers a form whose Content-Length is over MaxFormBytes.
func (cs *Console) refuseTooLarge(c *gin.Context) {
	cs.refuse(c, nil, refusal{Status: http.StatusRequestEntityTooLarge, Code: "too_large",
		Title: "The form is too large", Detail: fmt.Sprintf("A console form holds at most %d KiB. Nothing was changed.", MaxFormBytes>>10)})
}

// session is a signed-in request: the stored session and the bearer token
// its cookie unseals.
type session struct {
	Session
	bearer string
}

func (s *session) can(cp Capability) bool { return slices.Contains(s.Link.Capabilities, cp) }

// session returns the request's session, if its cookie names a live one.
func (cs *Console) session(c *gin.Context) (*session, bool, error) {
	value, ok := cs.cookie.Value(c.Request)
	if !ok {
		return nil, false, nil
	}
	linkID, ok := splitToken(value, cookiePrefix)
	if !ok {
		return nil, false, nil
	}
	s, ok, err := cs.store.Session(c.Request.Context(), linkID, auth.HashToken(value))
	if err != nil || !ok {
		return nil, false, err
	}
	if !cs.now().Before(s.Link.ExpiresAt) {
		return nil, false, nil
	}
	bearer, err := unseal(value, linkID, s.sealed)
	if err != nil {
		return nil, false, err
	}
	return &session{Session: s, bearer: bearer}, true, nil
}

// home is where a link leads: the sign-in page, whose module posts the
// fragment's token to the preview, or, signed in already, the deliveries.
func (cs *Console) home(c *gin.Context) {
	_, ok, err := cs.session(c)
	if err != nil {
		cs.fail(c, nil, err)
		return
	}
	if ok {
		// The fragment survives the redirect: a new link opened in a
		// signed-in browser is still previewed (refused when spent, and
		// otherwise shown beside the session this browser holds).
		c.Redirect(http.StatusSeeOther, cs.path("/deliveries"))
		return
	}
	cs.render(c, http.StatusOK, "signin", cs.frame(c, nil, "signin", nil))
}

// ConfirmField and ConfirmValue are what the confirmation page's "Sign in
// as …" button adds to the exchange (webpage.Confirmed).
const (
	ConfirmField = webpage.ConfirmField
	ConfirmValue = webpage.ConfirmValue
)

// preview answers what a link would sign in as, spending nothing: the
// link's partner, tenant, environment, capabilities and expiry, the
// session this browser holds now if it holds one, and the button that
// confirms. A forged, used, revoked or expired link is answered as the
// exchange answers it (a used one audited as link_reuse_refused, as
// before: someone opened it again). Nothing else is written, so the
// module may post here on load.
func (cs *Console) preview(c *gin.Context) {
	if err := cs.site.CheckPost(c.Request); err != nil {
		cs.refuse(c, nil, refusalPost(err))
		return
	}
	token, l, ok := cs.checkLink(c)
	if !ok {
		return
	}
	if r, refused := cs.unusable(c, l, cs.now()); refused {
		cs.refuse(c, nil, r)
		return
	}
	current, signedIn, err := cs.session(c)
	if err != nil {
		cs.fail(c, nil, err)
		return
	}
	v := confirmView{Token: token, Link: l.Scope, Caps: joinCaps(l.Capabilities), ExpiresAt: l.ExpiresAt, ReturnURL: l.ReturnURL}
	if signedIn {
		v.Current = &current.Link.Scope
		v.Same = current.Link.Scope == l.Scope
	} else {
		current = nil
	}
	cs.render(c, http.StatusOK, "confirm", cs.frame(c, current, "confirm", v))
}

// exchange spends a link's token for a session, when the person confirmed
// it on the preview's page. Only a same-origin post is heard (a cross-site
// form could otherwise sign a browser into a partner's console of the
// attacker's choosing), and only with the confirmation field (the page
// itself would otherwise sign in whoever opens someone else's link). A
// session this browser held before ends, and its credential is revoked:
// one browser, one console session.
func (cs *Console) exchange(c *gin.Context) {
	if err := cs.site.CheckPost(c.Request); err != nil {
		cs.refuse(c, nil, refusalPost(err))
		return
	}
	if !webpage.Confirmed(c.Request) {
		cs.refuse(c, nil, refusal{Status: http.StatusBadRequest, Code: "link_unconfirmed", Title: "Sign-in not confirmed",
			Detail: "Signing in needs your click on \"Sign in as …\" after the console has shown which partner the link is for. Nothing was used: open the link again."})
		return
	}
	token, l, ok := cs.checkLink(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	tokenHash := auth.HashToken(token)
	now := cs.now()
	if r, refused := cs.unusable(c, l, now); refused {
		cs.refuse(c, nil, r)
		return
	}
	// A session this browser holds ends first: the person asked to switch
	// (the confirmation page said so), and the old session must not live
	// on, unseen, with a live credential once the new cookie replaces its
	// own.
	previous, hadSession, err := cs.session(c)
	if err != nil {
		cs.fail(c, nil, err)
		return
	}
	if hadSession && !cs.endSession(c, previous, "replaced in this browser by console link "+l.ID) {
		return
	}
	// The session's credential: the link's partner, expiring with it.
	bearer, cred, err := cs.creds.Mint(ctx, auth.MintRequest{Tenant: l.Scope.Tenant, Environment: auth.Environment(l.Scope.Environment),
		Role: auth.RolePlatformOrchestrator, PartnerID: l.Scope.PartnerID, Label: "console session " + l.ID, ExpiresAt: l.ExpiresAt})
	if err != nil {
		cs.fail(c, nil, err)
		return
	}
	cookie := cookiePrefix + l.ID + "." + auth.NewToken("")
	sealed, err := seal(cookie, l.ID, bearer)
	if err == nil {
		err = cs.store.Exchange(ctx, l.ID, tokenHash, auth.HashToken(cookie), auth.NewToken(""), cred.PublicID, sealed, now)
	}
	if err != nil {
		// Spent or revoked meanwhile: the credential is never used.
		_ = cs.creds.Revoke(context.WithoutCancel(ctx), cred.PublicID)
		if r, refused := cs.unusable(c, Link{ID: l.ID, State: stateOf(err), ExpiresAt: l.ExpiresAt, ReturnURL: l.ReturnURL, Scope: l.Scope}, now); refused {
			cs.refuse(c, nil, r)
			return
		}
		cs.fail(c, nil, err)
		return
	}
	cs.cookie.Set(c.Writer, cookie, l.ExpiresAt.Sub(now))
	cs.audit(c, l.Scope, AuditEntry{Action: "link_exchanged", Actor: l.ID, Link: l.ID,
		Detail: "session credential " + cred.PublicID + " until " + l.ExpiresAt.Format(time.RFC3339)})
	c.Redirect(http.StatusSeeOther, cs.path("/deliveries"))
}

// checkLink reads the link token of a parsed form (the preview's and the
// exchange's) and finds its link: the token's hash must be the stored one.
// It answers the refusal itself; a token that names no link and a forged
// one read the same.
func (cs *Console) checkLink(c *gin.Context) (string, Link, bool) {
	token := c.Request.PostForm.Get("link")
	linkID, ok := splitToken(token, linkTokenPrefix)
	if !ok {
		cs.refuse(c, nil, refusalLinkInvalid())
		return "", Link{}, false
	}
	ctx := c.Request.Context()
	l, err := cs.store.GetLink(ctx, linkID)
	if errors.Is(err, ErrLinkNotFound) {
		cs.refuse(c, nil, refusalLinkInvalid())
		return "", Link{}, false
	}
	if err != nil {
		cs.fail(c, nil, err)
		return "", Link{}, false
	}
	if !webpage.MatchToken(token, cs.storedTokenHash(ctx, linkID)) {
		cs.refuse(c, nil, refusalLinkInvalid())
		return "", Link{}, false
	}
	return token, l, true
}

func (cs *Console) storedTokenHash(ctx context.Context, linkID string) string {
	h, _ := cs.store.rdb.HGet(ctx, linkKey(linkID), "token").Result()
	return h
}

func stateOf(err error) string {
	switch {
	case errors.Is(err, ErrLinkSpent):
		return LinkSpent
	case errors.Is(err, ErrLinkRevoked):
		return LinkRevoked
	case errors.Is(err, ErrLinkExpired):
		return "expired"
	}
	return ""
}

// unusable is the refusal of a link that is spent, revoked or expired. A
// spent link's refusal is audited: someone opened it again.
func (cs *Console) unusable(c *gin.Context, l Link, now time.Time) (refusal, bool) {
	switch {
	case l.State == LinkSpent:
		cs.audit(c, l.Scope, AuditEntry{Action: "link_reuse_refused", Actor: l.ID, Link: l.ID, Detail: "the link was opened again"})
		return refusal{Status: http.StatusGone, Code: "link_used", Title: "This link was used",
			Detail: "A console link works once, and this one has been used. Ask your application for a new one; if that was not you, tell your administrator."}, true
	case l.State == LinkRevoked:
		return refusal{Status: http.StatusGone, Code: "link_revoked", Title: "This link was revoked",
			Detail: "Your application revoked this console link. Ask it for a new one."}, true
	case l.State == "expired" || !now.Before(l.ExpiresAt):
		return refusal{Status: http.StatusGone, Code: "link_expired", Title: "This link has expired",
			Detail: "Console links last a limited time, and this one has ended. Return to your application for a new one.", Return: l.ReturnURL}, true
	}
	return refusal{}, false
}

// page runs a GET handler for a signed-in session; a request without one
// is refused with a page that says how to get in.
func (cs *Console) page(h func(*gin.Context, *session)) gin.HandlerFunc {
	return func(c *gin.Context) {
		s, ok, err := cs.session(c)
		if err != nil {
			cs.fail(c, nil, err)
			return
		}
		if !ok {
			cs.refuse(c, nil, refusalNoSession())
			return
		}
		h(c, s)
	}
}

// guard admits a form post: the console's own origin, a session, its CSRF
// token and the capability, in that order.
func (cs *Console) guard(cp Capability, h func(*gin.Context, *session)) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := cs.site.CheckPost(c.Request); err != nil {
			cs.refuse(c, nil, refusalPost(err))
			return
		}
		s, ok, err := cs.session(c)
		if err != nil {
			cs.fail(c, nil, err)
			return
		}
		if !ok {
			cs.refuse(c, nil, refusalNoSession())
			return
		}
		if err := webpage.CheckCSRF(c.Request, s.CSRF); err != nil {
			cs.refuse(c, s, refusal{Status: http.StatusForbidden, Code: "csrf_mismatch", Back: cs.path("/deliveries"),
				Title: "The form has expired", Detail: "The form was not one this console gave your session. Nothing was changed: reload the page and try again."})
			return
		}
		if !s.can(cp) {
			cs.refuse(c, s, cs.refusalCapability(cp))
			return
		}
		h(c, s)
	}
}

// signOut ends the session and revokes its credential; the link stays spent.
func (cs *Console) signOut(c *gin.Context, s *session) {
	if !cs.endSession(c, s, "signed out") {
		return
	}
	cs.cookie.Clear(c.Writer)
	cs.refuse(c, nil, refusal{Status: http.StatusOK, Code: "signed_out", Title: "Signed out",
		Detail: "The console session ended and its credential was revoked. Open a new link from your application to come back.", Return: s.Link.ReturnURL})
}

// endSession deletes a session and revokes its credential, and audits
// why; a failure is answered, and endSession reports false.
func (cs *Console) endSession(c *gin.Context, s *session, why string) bool {
	ctx := c.Request.Context()
	if err := cs.store.EndSession(ctx, s.Link.ID); err != nil {
		cs.fail(c, s, err)
		return false
	}
	if err := cs.creds.Revoke(ctx, s.Credential); err != nil && !errors.Is(err, auth.ErrNotFound) {
		cs.fail(c, s, err)
		return false
	}
	cs.audit(c, s.Link.Scope, AuditEntry{Action: "session_ended", Actor: s.Link.ID, Link: s.Link.ID, Detail: why})
	return true
}

// audit appends to the partner's trail; a failure is logged, never shown:
// the change it records has happened.
func (cs *Console) audit(c *gin.Context, scope Scope, e AuditEntry) {
	e.At = cs.now().UTC()
	if err := cs.store.Audit(context.WithoutCancel(c.Request.Context()), scope, e); err != nil {
		cs.logger.ErrorContext(c.Request.Context(), "console audit not written", "action", e.Action, "link", e.Link,
			"err", err)
	}
}

func (cs *Console) path(p string) string { return cs.prefix + "/console" + p }

// newFormKey is the Idempotency-Key a rendered form sends with its change:
// a form posted twice is one change.
func newFormKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "console-" + hex.EncodeToString(b)
}

func validFormKey(k string) bool {
	if len(k) < 8 || len(k) > 200 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// validID admits resource ids from a URL: 1 to 64 of A-Z a-z 0-9 _ -.
func validID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
