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
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/evidenceflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// Deps are what the page needs.
type Deps struct {
	Cases  *store.Cases
	Flow   *caseflow.Service
	Logger *slog.Logger
	// Now is the clock of session creation and of the timeline's today;
	// nil means time.Now.
	Now func() time.Time
	// Exhibits is where the page's exhibit files go and come from: the
	// evidence use cases the API's exhibit routes call, acting for the
	// hosted participant. nil means the page offers no upload, disclosure
	// or download and only lists Case.Evidence.
	Exhibits *evidenceflow.Service
	// Credentials is where people's account sessions and the case's
	// memberships are (libs/auth): a person signed in to an account acts
	// on the page for the respondents the account takes part as, and may
	// link an invitation to the account as they join. nil means the page
	// serves hosted sessions only.
	Credentials *auth.Store
}

// AccountMembershipLifetime is how long the membership lasts that a join
// with an account grants the account on the case: the case's life on the
// platform, within which it closes, is over long before.
const AccountMembershipLifetime = 5 * 365 * 24 * time.Hour

// CookieName names the session cookie.
const CookieName = "pc_respond_session"

// CapabilityLogin is the case capability whose hash the login token must
// match: filings mints the token, shows it once in
// showOnce.respondentLoginPath, and sends its SHA-256 in case-opened; the
// claimant's partner may replace it (reissue_login).
const CapabilityLogin = procedure.CapabilityRespondentLogin

// MaxBodyBytes bounds a form post: an answer of caseflow.MaxAnswerRunes
// characters of up to four bytes each, percent-encoded (three bytes per
// byte), with room to spare.
const MaxBodyBytes = 256 << 10

type page struct {
	cfg      Config
	site     webpage.Site // the only origin whose form posts are accepted, and the path prefix
	prefix   string       // the public base URL's path, "" for none
	cases    *store.Cases
	flow     *caseflow.Service
	exhibits *evidenceflow.Service
	// credentials reads account sessions and memberships; nil: none.
	credentials *auth.Store
	logger      *slog.Logger
	now         func() time.Time
}

// Register adds the hosted page's routes under /respond.
func Register(r gin.IRouter, cfg Config, d Deps) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("hosted respondent page: %w", err)
	}
	p := &page{cfg: cfg, cases: d.Cases, flow: d.Flow, exhibits: d.Exhibits, credentials: d.Credentials, logger: d.Logger, now: d.Now}
	if p.now == nil {
		p.now = time.Now
	}
	site, err := webpage.NewSite(cfg.PublicBaseURL, cfg.SecureCookie)
	if err != nil {
		return fmt.Errorf("hosted respondent page: %w", err)
	}
	p.site, p.prefix = site, site.Prefix
	g := r.Group("/respond", webpage.Headers, webpage.LimitBody(MaxBodyBytes, p.refuseTooLarge))
	g.GET("/static/:file", webpage.Static(staticFiles))
	g.GET("/:caseId", p.show)
	g.POST("/:caseId/session/preview", p.preview)
	g.POST("/:caseId/session", p.exchange)
	g.POST("/:caseId/signout", p.signOut)
	g.POST("/:caseId/join", p.join)
	g.POST("/:caseId/answer", p.answer)
	g.POST("/:caseId/messages", p.postMessage)
	g.POST("/:caseId/messages/read", p.markRead)
	g.POST("/:caseId/submissions", p.fileSubmission)
	g.POST("/:caseId/submissions/:submissionId/amend", p.amendSubmission)
	g.POST("/:caseId/record/confirm", p.confirmRecord)
	g.POST("/:caseId/termination", p.requestTermination)
	g.POST("/:caseId/termination/:requestId/confirm", p.confirmTermination)
	g.GET("/:caseId/award/:kind", p.awardArtifact)
	if p.exhibits != nil {
		g.POST("/:caseId/exhibits/:exhibitId/disclose", p.discloseExhibit)
		g.GET("/:caseId/exhibits/:exhibitId", p.downloadExhibit)
		// The upload is the one form past MaxBodyBytes: it is not in g,
		// whose LimitBody would cut it, but has its own limit and deadlines.
		r.POST("/respond/:caseId/exhibits", webpage.Headers, answerJSON, p.uploadLimit,
			httpserver.StreamedBody(MaxUploadBytes, uploadTimeout), p.uploadExhibit)
	}
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

// ConfirmField and ConfirmValue are what the confirmation page's "Sign in
// as …" button adds to the exchange (webpage.Confirmed).
const (
	ConfirmField = webpage.ConfirmField
	ConfirmValue = webpage.ConfirmValue
)

// fail answers an error that is not the caller's: a generic page, the
// detail in the log.
func (p *page) fail(c *gin.Context, caseID string, err error) {
	status := http.StatusInternalServerError
	title, detail := "Something went wrong", "Nothing was filed. Try again in a moment."
	if errors.Is(err, caseflow.ErrBusy) {
		status, title = http.StatusServiceUnavailable, "The case is busy"
		c.Header("Retry-After", "1")
	}
	p.logger.ErrorContext(c.Request.Context(), "hosted respondent page failed", "case_id", caseID, "err", err)
	p.refuse(c, refusal{Status: status, Code: "internal", CaseID: caseID, Title: title, Detail: detail})
}
