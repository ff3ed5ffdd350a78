package console

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/libs/webpage"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"when": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			if v.IsZero() {
				return "—"
			}
			return v.UTC().Format("2006-01-02 15:04:05Z")
		case *time.Time:
			if v == nil || v.IsZero() {
				return "—"
			}
			return v.UTC().Format("2006-01-02 15:04:05Z")
		}
		return "—"
	},
	"percent": func(f *float64) string {
		if f == nil {
			return "—"
		}
		return strconv.FormatFloat(*f*100, 'f', 1, 64) + " %"
	},
	"day": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format(time.DateOnly)
	},
}).ParseFS(templateFS, "templates/*.html"))

// frame is what every page's layout needs.
type frame struct {
	Static    string
	Base      string
	Page      string
	Signed    bool
	Partner   string
	Env       string
	Tenant    string
	Caps      string
	ExpiresAt time.Time
	CSRF      string
	FormKey   string
	CanManage bool
	CanReplay bool
	RequestID string
	Data      any
}

func (cs *Console) frame(c *gin.Context, s *session, page string, data any) frame {
	f := frame{Static: cs.path("/static/"), Base: cs.path(""), Page: page, RequestID: requestid.Get(c), Data: data, FormKey: newFormKey()}
	if s != nil {
		f.Signed = true
		f.Partner, f.Env, f.Tenant = s.Link.Scope.PartnerID, s.Link.Scope.Environment, s.Link.Scope.Tenant
		f.Caps, f.ExpiresAt, f.CSRF = joinCaps(s.Link.Capabilities), s.Link.ExpiresAt, s.CSRF
		f.CanManage, f.CanReplay = s.can(CapManageEndpoints), s.can(CapReplay)
	}
	return f
}

// render answers a page (webpage.Render).
func (cs *Console) render(c *gin.Context, status int, name string, f frame) {
	webpage.Render(c, cs.logger, templates, status, name, f)
}

// confirmView is the page a link's preview answers: what the link signs in
// as, the session this browser holds now (if any), and the button.
type confirmView struct {
	Token     string // posted back by the button's form
	Link      Scope
	Caps      string
	ExpiresAt time.Time
	ReturnURL string
	// Current is the scope of the session this browser holds, nil for
	// none; Same says the link is for that very partner and environment.
	Current *Scope
	Same    bool
}

// refusal is a page that says what was refused and why; nothing changed.
type refusal struct {
	Status int
	Code   string
	Title  string
	Detail string
	Back   string
	Return string // the partner's return URL (expired link, signed out)
}

func (cs *Console) refuse(c *gin.Context, s *session, r refusal) {
	cs.render(c, r.Status, "refusal", cs.frame(c, s, "refusal", r))
	c.Abort()
}

// fail answers an error that is not the caller's: a generic page, the
// detail in the log.
func (cs *Console) fail(c *gin.Context, s *session, err error) {
	cs.logger.ErrorContext(c.Request.Context(), "console request failed", "path", c.Request.URL.Path, "err", err)
	status, title, detail := http.StatusInternalServerError, "Something went wrong", "Nothing was changed. Try again in a moment."
	if e, ok := apiError(err); ok && e.Status >= 500 {
		status, title, detail = http.StatusBadGateway, "The service did not answer", "The API answered "+e.Code+". Nothing was changed; try again in a moment."
	}
	cs.refuse(c, s, refusal{Status: status, Code: "internal", Title: title, Detail: detail})
}

// apiRefusal shows a 4xx answer of the public API as it came: the
// console adds no rules of its own to what the API accepts.
func (cs *Console) apiRefusal(c *gin.Context, s *session, err error, back string) {
	if e, ok := apiError(err); ok && e.Status < 500 {
		cs.refuse(c, s, refusal{Status: e.Status, Code: e.Code, Title: e.Title, Detail: e.Detail, Back: back})
		return
	}
	cs.fail(c, s, err)
}

func (cs *Console) refusalCapability(cp Capability) refusal {
	return refusal{Status: http.StatusForbidden, Code: "capability_missing", Back: cs.path("/deliveries"),
		Title: "Not allowed by this link", Detail: fmt.Sprintf("This console session was opened without the %s capability. Nothing was changed.", cp)}
}

func refusalCrossOrigin() refusal {
	return refusal{Status: http.StatusForbidden, Code: "cross_origin", Title: "Refused: not sent from the console",
		Detail: "The form did not come from this console's own pages. Nothing was changed."}
}

func refusalBadForm(err error) refusal {
	if errors.Is(err, webpage.ErrFormTooLarge) {
		return refusal{Status: http.StatusRequestEntityTooLarge, Code: "too_large", Title: "The form is too large", Detail: "Nothing was changed."}
	}
	return refusal{Status: http.StatusBadRequest, Code: "bad_form", Title: "The form could not be read", Detail: "Nothing was changed."}
}

// refusalPost answers a post webpage.CheckPost refused.
func refusalPost(err error) refusal {
	if errors.Is(err, webpage.ErrCrossOrigin) {
		return refusalCrossOrigin()
	}
	return refusalBadForm(err)
}

func refusalLinkInvalid() refusal {
	return refusal{Status: http.StatusForbidden, Code: "link_invalid", Title: "This link is not valid",
		Detail: "The console link is not one that was issued. Check that you opened the whole link your application gave you."}
}

func refusalNoSession() refusal {
	return refusal{Status: http.StatusUnauthorized, Code: "no_session", Title: "You are not signed in",
		Detail: "This browser holds no console session, or it ended. Open a console link from your application: it ends in #link= followed by a one-time token."}
}

// cacheStatic lets a browser keep the console's modules and stylesheet
// for five minutes: they change only with a deployment.
func cacheStatic(c *gin.Context) {
	c.Header("Cache-Control", "private, max-age=300")
	c.Next()
}
