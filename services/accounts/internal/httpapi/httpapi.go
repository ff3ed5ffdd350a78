// Package httpapi is the accounts service's HTTP surface: the operator's
// routes for its autonomous-agent accounts (register, attest, clients)
// under /api/accounts, the OAuth endpoints and metadata, which the
// authorization server (internal/oauth) answers, and people's pages under
// /account (people.go). Problem is the one place the service's errors
// become HTTP: the JSON routes send its problem, the pages show its
// title and detail as the form's error.
package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/agents"
	"github.com/pcourt/pcourt/services/accounts/internal/oauth"
	"github.com/pcourt/pcourt/services/accounts/internal/people"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

// The service's problem codes; docs/problems.md lists them.
var (
	InvalidAccount     = problem.Code{Name: "invalid_account", Status: http.StatusBadRequest, Title: "Invalid account"}
	AccountNotFound    = problem.Code{Name: "account_not_found", Status: http.StatusNotFound, Title: "Account not found"}
	ClientNotFound     = problem.Code{Name: "client_not_found", Status: http.StatusNotFound, Title: "OAuth client not found"}
	AlreadyVerified    = problem.Code{Name: "account_already_verified", Status: http.StatusConflict, Title: "Account already verified"}
	InvalidScope       = problem.Code{Name: "invalid_scope", Status: http.StatusBadRequest, Title: "Invalid scope"}
	TooManyClients     = problem.Code{Name: "too_many_clients", Status: http.StatusConflict, Title: "Too many OAuth clients"}
	AccountBusy        = problem.Code{Name: "account_busy", Status: http.StatusServiceUnavailable, Title: "Account busy"}
	NoPartner          = problem.Code{Name: "partner_required", Status: http.StatusForbidden, Title: "Partner credential required"}
	KindNotRegistrable = problem.Code{Name: "account_kind_not_registrable", Status: http.StatusUnprocessableEntity, Title: "Account kind not registrable here"}
)

// The codes of people's pages: the ceremonies' problems, and the forms'
// errors, which the pages show with the same code and status.
var (
	CSRFMismatch            = problem.Code{Name: "csrf_mismatch", Status: http.StatusForbidden, Title: "Form of another session"}
	InvalidEmail            = problem.Code{Name: "invalid_email", Status: http.StatusBadRequest, Title: "Invalid e-mail address"}
	EmailTaken              = problem.Code{Name: "email_taken", Status: http.StatusConflict, Title: "E-mail address in use"}
	CeremonyExpired         = problem.Code{Name: "ceremony_expired", Status: http.StatusBadRequest, Title: "No passkey ceremony waiting"}
	PasskeyNotVerified      = problem.Code{Name: "passkey_not_verified", Status: http.StatusBadRequest, Title: "Passkey not verified"}
	InvalidPasskey          = problem.Code{Name: "invalid_passkey", Status: http.StatusBadRequest, Title: "Unusable passkey"}
	PasskeyUnknown          = problem.Code{Name: "passkey_unknown", Status: http.StatusForbidden, Title: "Passkey unknown"}
	PasskeyCounterRegressed = problem.Code{Name: "passkey_counter_regressed", Status: http.StatusForbidden, Title: "Passkey counter went back"}
	CodesOff                = problem.Code{Name: "sign_in_codes_off", Status: http.StatusNotFound, Title: "No sign-in codes here"}
	CodeTooSoon             = problem.Code{Name: "code_too_soon", Status: http.StatusTooManyRequests, Title: "A code was sent a moment ago"}
	TooManyCodes            = problem.Code{Name: "too_many_codes", Status: http.StatusTooManyRequests, Title: "Too many codes this hour"}
	CodeMalformed           = problem.Code{Name: "code_malformed", Status: http.StatusBadRequest, Title: "Not a code"}
	CodeExpired             = problem.Code{Name: "code_expired", Status: http.StatusBadRequest, Title: "Code no longer valid"}
	CodeWrong               = problem.Code{Name: "code_wrong", Status: http.StatusBadRequest, Title: "Wrong code"}
	CodeAttemptsExhausted   = problem.Code{Name: "code_attempts_exhausted", Status: http.StatusForbidden, Title: "Code typed wrong too often"}
	EmailAlreadyConfirmed   = problem.Code{Name: "email_already_confirmed", Status: http.StatusConflict, Title: "Address confirmed already"}
	NoAccountAddress        = problem.Code{Name: "no_account_address", Status: http.StatusConflict, Title: "No address to confirm"}
)

// Codes returns the service's problem codes, the rows of owner accounts in
// docs/problems.md.
func Codes() []problem.Code {
	codes := []problem.Code{InvalidAccount, AccountNotFound, ClientNotFound, AlreadyVerified, InvalidScope, TooManyClients, AccountBusy, NoPartner, KindNotRegistrable,
		CSRFMismatch, InvalidEmail, EmailTaken, CeremonyExpired, PasskeyNotVerified, InvalidPasskey, PasskeyUnknown, PasskeyCounterRegressed,
		CodesOff, CodeTooSoon, TooManyCodes, CodeMalformed, CodeExpired, CodeWrong, CodeAttemptsExhausted,
		EmailAlreadyConfirmed, NoAccountAddress}
	return append(codes, organizationCodeList...)
}

// Problem maps the service's errors to problems; it is the server's
// problem.Mapper.
func Problem(err error) *problem.Error {
	if p := organizationProblem(err); p != nil {
		return p
	}
	var refused *account.RefusalError
	var unverified *people.VerificationError
	switch {
	case errors.Is(err, webpage.ErrCrossOrigin):
		return problem.New(problem.CrossOrigin, "Only the account pages themselves may send this; nothing was changed.").Wrap(err)
	case errors.Is(err, webpage.ErrCSRFMismatch):
		return problem.New(CSRFMismatch, "The form does not belong to this browser's session; reload the page and try again.").Wrap(err)
	case errors.Is(err, webpage.ErrFormTooLarge):
		return problem.Newf(problem.BodyTooLarge, "A form of the account pages holds at most %d KiB.", MaxPeopleBodyBytes>>10).Wrap(err)
	case errors.Is(err, webpage.ErrBadForm):
		return problem.New(problem.InvalidRequest, "The form could not be read.").Wrap(err)
	case errors.Is(err, people.ErrEmailConfirmedElsewhere):
		return problem.New(EmailTaken, "Another account confirmed this address first, and holds it: this account's address stays unconfirmed and nothing was changed.").Wrap(err)
	case errors.Is(err, store.ErrEmailTaken):
		return problem.New(EmailTaken, "An account confirmed this address already: sign in with its passkey, or with a code sent to the address.").Wrap(err)
	case errors.Is(err, people.ErrCeremonyExpired):
		return problem.Newf(CeremonyExpired, "No passkey request of this browser is waiting for this answer: it lasts %d minutes and is answered once. Start again.", int(people.CeremonyTTL/time.Minute)).Wrap(err)
	case errors.As(err, &unverified):
		return problem.Newf(PasskeyNotVerified, "The passkey's answer did not verify (%s). Start again.", problem.Clip(unverified.Detail)).Wrap(err)
	case errors.Is(err, people.ErrCodesOff):
		return problem.New(CodesOff, "This deployment sends no sign-in codes: sign in with your passkey.").Wrap(err)
	case errors.Is(err, store.ErrNotFound):
		return problem.New(AccountNotFound, "No account with this id is operated by this credential's partner in this tenant and environment.").Wrap(err)
	case errors.Is(err, store.ErrConflict):
		return problem.New(AccountBusy, "The account changed concurrently too often; retry.").WithHeader("Retry-After", "1").Wrap(err)
	case errors.As(err, &refused):
		code := map[account.RefusalCode]problem.Code{
			account.CodeInvalidAccount:  InvalidAccount,
			account.CodeNotOperator:     AccountNotFound, // another operator's account is not found for this one
			account.CodeAlreadyVerified: AlreadyVerified,
			account.CodeInvalidScope:    InvalidScope,
			account.CodeTooManyClients:  TooManyClients,
			account.CodeClientNotFound:  ClientNotFound,

			account.CodeInvalidEmail:            InvalidEmail,
			account.CodeInvalidPasskey:          InvalidPasskey,
			account.CodePasskeyUnknown:          PasskeyUnknown,
			account.CodePasskeyCounterRegressed: PasskeyCounterRegressed,
			account.CodeCodeTooSoon:             CodeTooSoon,
			account.CodeTooManyCodes:            TooManyCodes,
			account.CodeCodeMalformed:           CodeMalformed,
			account.CodeCodeExpired:             CodeExpired,
			account.CodeCodeWrong:               CodeWrong,
			account.CodeCodeAttemptsExhausted:   CodeAttemptsExhausted,
			account.CodeEmailAlreadyConfirmed:   EmailAlreadyConfirmed,
			account.CodeNoAccountAddress:        NoAccountAddress,
		}[refused.Code]
		if code.Name == "" {
			return nil
		}
		p := problem.New(code, refused.Detail+".").Wrap(err)
		if code == CodeTooSoon {
			p = p.WithHeader("Retry-After", "60")
		}
		return p
	}
	return nil
}

// Deps are what Register wires.
type Deps struct {
	Credentials *auth.Store
	Agents      *agents.Service
	OAuth       *oauth.Server
	Journal     *idempotency.Journal
	// RegistrationLimiter counts dynamic client registrations per client
	// address (oauth.RegistrationRate), where the server allows them.
	RegistrationLimiter *ratelimit.Limiter
}

// The idempotency operations.
const (
	opRegister  = "registerAccount"
	opAddClient = "addAccountClient"
)

// Register adds the service's routes.
func Register(r *gin.Engine, d Deps) {
	h := &handlers{agents: d.Agents}
	// An account's operator is a partner's orchestrator credential; every
	// account is scoped by its tenant, environment and partner (operator).
	g := r.Group("/api/accounts", auth.Middleware(d.Credentials), auth.RequireRole(auth.RolePlatformOrchestrator), requirePartner)
	g.GET("", private, h.list)
	g.POST("", noStore, d.Journal.Middleware(opRegister), h.register)
	g.GET("/:id", private, h.get)
	g.POST("/:id/attestation", noStore, h.attest)
	g.POST("/:id/clients", noStore, d.Journal.Middleware(opAddClient), h.addClient)
	g.DELETE("/:id/clients/:clientId", noStore, h.revokeClient)

	endpoints, metadata := d.OAuth.Handlers()
	for _, path := range []string{oauth.TokenPath, oauth.RevocationPath, oauth.IntrospectionPath} {
		// POST only, as RFC 6749, 7009 and 7662 have them, with the
		// parameters in the form body (oauthExchange).
		r.POST(path, oauthExchange, gin.WrapH(endpoints))
	}
	r.GET(oauth.MetadataPath, gin.WrapH(metadata))
	// RFC 7591's JSON in and out; 404 where the operator does not allow it.
	r.POST(oauth.RegistrationPath, noStore, gin.WrapH(d.OAuth.RegistrationHandler(d.RegistrationLimiter)))
}

// oauthExchange is what every OAuth endpoint's answer shares: no cache
// keeps it, whatever it is (a token, an introspection, an error), and a
// request with a query string is refused before the library sees it. The
// library reads parameters from the query as well as the form, and a
// client secret or a token in a URL ends up in access logs: RFC 6749
// section 2.3.1 and RFC 6750 section 2.3 keep them out of it.
func oauthExchange(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	c.Header("Pragma", "no-cache")
	if c.Request.URL.RawQuery != "" {
		c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{
			"error":             "invalid_request",
			"error_description": "send the parameters in the form body: a query string ends up in logs",
		})
		return
	}
	c.Next()
}

func private(c *gin.Context) { c.Header("Cache-Control", "private, no-store"); c.Next() }
func noStore(c *gin.Context) { c.Header("Cache-Control", "no-store"); c.Next() }

func requirePartner(c *gin.Context) {
	cred, ok := auth.CredentialFrom(c.Request.Context())
	if !ok || cred.PartnerID == "" {
		_ = c.Error(problem.New(NoPartner, "An agent account is operated by a partner; use a credential bound to one."))
		c.Abort()
		return
	}
	c.Next()
}

type handlers struct {
	agents *agents.Service
}

func operatorOf(c *gin.Context) agents.Operator {
	cred, _ := auth.CredentialFrom(c.Request.Context())
	return agents.Operator{Tenant: cred.Tenant, Environment: string(cred.Environment), PartnerID: cred.PartnerID, CredentialID: cred.PublicID}
}

func data(c *gin.Context, status int, v any) {
	c.JSON(status, gin.H{"data": v, "requestId": requestid.Get(c)})
}

type registerBody struct {
	Kind        string `json:"kind"`
	DisplayName string `json:"displayName"`
}

func (h *handlers) register(c *gin.Context) {
	var b registerBody
	if err := httpserver.DecodeJSON(c, &b); err != nil {
		_ = c.Error(err)
		return
	}
	switch account.Kind(b.Kind) {
	case account.KindAutonomousAgent:
	case account.KindIndividual:
		_ = c.Error(problem.New(KindNotRegistrable, "An operator registers autonomous_agent accounts; an individual account is created by the person signing up at /account/signup."))
		return
	case account.KindOrganization:
		_ = c.Error(problem.New(KindNotRegistrable, "An operator registers autonomous_agent accounts; an organization account is created by a signed-in person at /account/organizations, who becomes its first owner."))
		return
	default:
		_ = c.Error(problem.New(InvalidAccount, "kind must be autonomous_agent (individual and organization accounts are created by signing up)."))
		return
	}
	a, err := h.agents.Register(c.Request.Context(), operatorOf(c), account.Registration{DisplayName: b.DisplayName})
	if err != nil {
		_ = c.Error(err)
		return
	}
	data(c, http.StatusCreated, toView(a))
}

func (h *handlers) list(c *gin.Context) {
	as, err := h.agents.List(c.Request.Context(), operatorOf(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	out := make([]accountView, len(as))
	for i, a := range as {
		out[i] = toView(a)
	}
	data(c, http.StatusOK, out)
}

func (h *handlers) get(c *gin.Context) {
	a, err := h.agents.Get(c.Request.Context(), operatorOf(c), c.Param("id"))
	if err != nil {
		_ = c.Error(err)
		return
	}
	data(c, http.StatusOK, toView(a))
}

type attestationBody struct {
	Model                 string `json:"model"`
	Provider              string `json:"provider"`
	Contact               string `json:"contact"`
	AcceptsResponsibility bool   `json:"acceptsResponsibility"`
}

func (h *handlers) attest(c *gin.Context) {
	var b attestationBody
	if err := httpserver.DecodeJSON(c, &b); err != nil {
		_ = c.Error(err)
		return
	}
	a, err := h.agents.Attest(c.Request.Context(), operatorOf(c), c.Param("id"), account.Attestation{
		Model: b.Model, Provider: b.Provider, Contact: b.Contact, AcceptsResponsibility: b.AcceptsResponsibility,
	})
	if err != nil {
		_ = c.Error(err)
		return
	}
	data(c, http.StatusOK, toView(a))
}

type clientBody struct {
	Scopes []string `json:"scopes"`
}

// newClientView is a registered client with its secret, shown once.
type newClientView struct {
	clientView
	ClientSecret  string `json:"clientSecret,omitempty"`
	TokenEndpoint string `json:"tokenEndpoint"`
}

func (h *handlers) addClient(c *gin.Context) {
	var b clientBody
	if err := httpserver.DecodeJSON(c, &b); err != nil {
		_ = c.Error(err)
		return
	}
	scopes := make([]account.Scope, len(b.Scopes))
	for i, s := range b.Scopes {
		scopes[i] = account.Scope(s)
	}
	nc, err := h.agents.AddClient(c.Request.Context(), operatorOf(c), c.Param("id"), scopes)
	if err != nil {
		_ = c.Error(err)
		return
	}
	shown := newClientView{clientView: toClientView(nc.Client), ClientSecret: nc.Secret, TokenEndpoint: oauth.TokenPath}
	// The secret is shown in this answer alone: the journal keeps the
	// answer without it, so an exact retry replays the client, not the
	// secret, which the account keeps only as its SHA-256.
	kept := shown
	kept.ClientSecret = ""
	journal, err := json.Marshal(gin.H{"data": kept, "requestId": requestid.Get(c)})
	if err != nil {
		_ = c.Error(err)
		return
	}
	idempotency.JournalBody(c, journal)
	data(c, http.StatusCreated, shown)
}

func (h *handlers) revokeClient(c *gin.Context) {
	if _, err := h.agents.RevokeClient(c.Request.Context(), operatorOf(c), c.Param("id"), c.Param("clientId")); err != nil {
		_ = c.Error(err)
		return
	}
	c.Status(http.StatusNoContent)
}

type accountView struct {
	ID          string           `json:"id"`
	Kind        string           `json:"kind"`
	DisplayName string           `json:"displayName"`
	Status      string           `json:"status"`
	Environment string           `json:"environment"`
	Attestation *attestationView `json:"attestation"`
	Clients     []clientView     `json:"clients"`
	CreatedAt   string           `json:"createdAt"`
}

type attestationView struct {
	Model                 string `json:"model"`
	Provider              string `json:"provider"`
	Contact               string `json:"contact"`
	AcceptsResponsibility bool   `json:"acceptsResponsibility"`
	AttestedBy            string `json:"attestedBy"`
	AttestedAt            string `json:"attestedAt"`
}

type clientView struct {
	ClientID  string   `json:"clientId"`
	Scopes    []string `json:"scopes"`
	CreatedAt string   `json:"createdAt"`
	RevokedAt *string  `json:"revokedAt"`
}

// instant spells t as the platform's JSON does: UTC, milliseconds, Z.
func instant(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func toView(a account.Account) accountView {
	v := accountView{ID: a.ID, Kind: string(a.Kind), DisplayName: a.DisplayName, Status: string(a.Status),
		Environment: a.Environment, Clients: make([]clientView, 0, len(a.Clients)), CreatedAt: instant(a.CreatedAt)}
	if a.Status == account.StatusVerified {
		att := a.Attestation
		v.Attestation = &attestationView{Model: att.Model, Provider: att.Provider, Contact: att.Contact,
			AcceptsResponsibility: att.AcceptsResponsibility, AttestedBy: att.AttestedBy, AttestedAt: instant(att.AttestedAt)}
	}
	for _, cl := range a.Clients {
		v.Clients = append(v.Clients, toClientView(cl))
	}
	return v
}

func toClientView(c account.Client) clientView {
	v := clientView{ClientID: c.ID, Scopes: make([]string, len(c.Scopes)), CreatedAt: instant(c.CreatedAt)}
	for i, s := range c.Scopes {
		v.Scopes[i] = string(s)
	}
	if !c.Active() {
		at := instant(c.RevokedAt)
		v.RevokedAt = &at
	}
	return v
}
