// The pages' views, templates and static files.

package httpapi

import (
	"embed"
	"encoding/base64"
	"html/template"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/services/accounts/internal/people"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{"when": when}).ParseFS(templateFiles, "templates/*.html"))

// when spells an instant for a person: UTC, to the minute.
func when(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2 January 2006, 15:04 UTC")
}

// frame is what every page's layout needs: its name, and the paths as
// the browser addresses them.
type frame struct {
	Page   string
	Title  string
	Static string
	Home   string
	SignIn string
	SignUp string
	// The ceremonies' endpoints, which the module reads from the page.
	SignUpOptions, SignUpFinish, SignInOptions, SignInFinish string
	// The forms' actions.
	CodeRequest, CodeVerify, SignOut string
	ConfirmRequest, ConfirmVerify    string
}

var titles = map[string]string{"signup": "Create your account", "signin": "Sign in", "code": "Type the code",
	"account": "Your account", "signedout": "Signed out", "refusal": "Not done",
	"consent": "Allow an application", "authorizeerror": "Request refused"}

func (p *pages) frame(page string) frame {
	return frame{Page: page, Title: titles[page], Static: p.path("/account/static/"), Home: p.path("/account/"), SignIn: p.path("/account/signin"),
		SignUp: p.path("/account/signup"), SignUpOptions: p.path("/account/signup/options"), SignUpFinish: p.path("/account/signup"),
		SignInOptions: p.path("/account/signin/options"), SignInFinish: p.path("/account/signin"),
		CodeRequest: p.path("/account/signin/code"), CodeVerify: p.path("/account/signin/code/verify"), SignOut: p.path("/account/signout"),
		ConfirmRequest: p.path("/account/email/code"), ConfirmVerify: p.path("/account/email/confirm")}
}

// formError is a refusal shown beside the form it refused.
type formError struct {
	Code   string
	Title  string
	Detail string
}

func toFormError(p *problem.Error) *formError {
	if p == nil {
		return nil
	}
	return &formError{Code: p.Code.Name, Title: p.Code.Title, Detail: p.Detail}
}

// signInView is the sign-in page: the passkey's button, and the code's
// form where the deployment sends codes.
type signInView struct {
	frame
	Codes bool
	// Next is where the sign-in goes afterwards (a path of the pages).
	Next      string
	Email     string
	CodeError *problem.Error
}

// Error is the code form's refusal, if any.
func (v signInView) Error() *formError { return toFormError(v.CodeError) }

// codeView is the page where the code is typed: it says the same whether
// an account uses the address or not.
type codeView struct {
	frame
	Email string
	Next  string
	Err   *formError
}

func (p *pages) codeView(email, next string, refused *problem.Error) codeView {
	return codeView{frame: p.frame("code"), Email: strings.TrimSpace(email), Next: next, Err: toFormError(refused)}
}

// accountPage is the signed-in account.
type accountPage struct {
	frame
	CSRF            string
	ID              string
	DisplayName     string
	Email           string
	EmailVerifiedAt time.Time
	Environment     string
	CreatedAt       time.Time
	Method          string
	Since           time.Time
	Until           time.Time
	Passkeys        []passkeyView
	// Codes: the deployment sends codes, so the address can be confirmed.
	Codes bool
	// ConfirmSent: a confirmation code is on its way (show its field);
	// ConfirmError: the confirmation's refusal, beside its form.
	ConfirmSent  bool
	ConfirmError *formError
	// CasesURL is the website route the page's script lists the
	// account's cases from (the cases service's GET /api/disputes, which
	// takes the session's cookie), CaseURL the hosted case page each
	// links to, less its case id.
	CasesURL, CaseURL string
	// ActingFor is the organisation the session acts for ("" for none),
	// ActingForPath its page.
	ActingFor, ActingForPath string
}

type passkeyView struct {
	ID         string // the credential id's first characters, in base64url
	CreatedAt  time.Time
	LastUsedAt time.Time
	Transports string
	Synced     bool
}

func (p *pages) toAccountPage(in people.SignedIn) accountPage {
	a := in.Account
	v := accountPage{frame: p.frame("account"), ActingFor: in.ActingFor, ActingForPath: p.path("/account/organizations/" + in.ActingFor), CasesURL: p.path("/api/disputes?limit=50"), CaseURL: p.path("/respond/"), CSRF: in.Session.CSRF, ID: a.ID, DisplayName: a.DisplayName, Email: a.Email,
		EmailVerifiedAt: a.EmailVerifiedAt, Environment: a.Environment, CreatedAt: a.CreatedAt, Method: in.Session.Method,
		Since: in.Session.CreatedAt, Until: in.Session.ExpiresAt, Codes: p.people.SendsCodes()}
	for _, k := range a.Passkeys {
		id := base64.RawURLEncoding.EncodeToString(k.CredentialID)
		if len(id) > 12 {
			id = id[:12] + "…"
		}
		transports := strings.Join(k.Transports, ", ")
		if transports == "" {
			transports = "not reported"
		}
		v.Passkeys = append(v.Passkeys, passkeyView{ID: id, CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, Transports: transports, Synced: k.BackupState})
	}
	return v
}

// refusalView is a page refused before it was heard, or a failure.
type refusalView struct {
	frame
	Problem *problem.Error
}

// render answers a page (webpage.Render).
func (p *pages) render(c *gin.Context, status int, name string, data any) {
	webpage.Render(c, p.logger, templates, status, name, data)
}
