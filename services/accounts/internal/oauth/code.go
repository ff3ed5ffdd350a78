// The authorization code grant with PKCE for applications acting for a
// person's account (docs/accounts.md, "The authorization code grant"):
// the authorization request's checks, the answers to the client's
// redirect URI, the code and refresh token grants of the token endpoint,
// and the applications' clients as op.Client.

package oauth

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"github.com/zitadel/schema"

	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/grants"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

// The code grant's paths: the authorization endpoint the application
// sends the browser to, and dynamic client registration (RFC 7591).
const (
	AuthorizationPath = "/oauth/authorize"
	RegistrationPath  = "/oauth/register"
)

// CaseParameter is the authorization request's parameter that binds the
// grant, and every token of it, to one case (the token's CaseID): a
// delegation on an existing case.
const CaseParameter = "case_id"

// WithCodeGrant turns on the authorization code grant, its refresh tokens
// and (where Config.Registration allows it) dynamic client registration,
// run by g. Without it (no people's pages to sign in and consent on) the
// server has no authorization endpoint.
func (s *Server) WithCodeGrant(g *grants.Service) *Server {
	s.grants = g
	return s
}

// CodeGrant reports whether the authorization code grant is on.
func (s *Server) CodeGrant() bool { return s.grants != nil }

// Registration reports whether POST /oauth/register registers clients.
func (s *Server) Registration() bool { return s.grants != nil && s.cfg.Registration }

// appClient is an application's client, as op.Client: the code grant and
// its refresh tokens alone, so zitadel/oidc answers any other grant it
// asks for (client credentials included) with unauthorized_client.
type appClient struct {
	account.App
}

func (c appClient) GetID() string                  { return c.ID }
func (c appClient) RedirectURIs() []string         { return c.App.RedirectURIs }
func (appClient) PostLogoutRedirectURIs() []string { return nil }
func (c appClient) ApplicationType() op.ApplicationType {
	if c.Public() {
		return op.ApplicationTypeNative
	}
	return op.ApplicationTypeWeb
}
func (c appClient) AuthMethod() oidc.AuthMethod { return oidc.AuthMethod(c.App.AuthMethod) }
func (appClient) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (appClient) LoginURL(string) string               { return "" }
func (appClient) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeBearer }
func (appClient) IDTokenLifetime() time.Duration       { return 0 }
func (appClient) DevMode() bool                        { return false }
func (appClient) IDTokenUserinfoClaimsAssertion() bool { return false }
func (appClient) ClockSkew() time.Duration             { return 0 }
func (appClient) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
}
func (c appClient) IsScopeAllowed(scope string) bool {
	return slices.Contains(c.Scopes, account.Scope(scope))
}
func (appClient) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func([]string) []string { return nil }
}
func (appClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// AuthorizationError is a refused authorization request. RedirectTo is
// the client's registered redirect URI with the error (RFC 6749 section
// 4.1.2.1, with state and iss); "" when the request cannot be trusted to
// name where to go (no client, an unknown one, a redirect URI it did not
// register), and the person is shown Err instead, never redirected.
type AuthorizationError struct {
	RedirectTo string
	Err        *oidc.Error
}

func (e *AuthorizationError) Error() string { return e.Err.Error() }

// CheckedAuthorization is an authorization request that passed every
// check, with the client it is for.
type CheckedAuthorization struct {
	account.Authorization
	Client account.App
}

// pkceChallenge is an S256 challenge: the base64url of a SHA-256, 43
// characters (RFC 7636 section 4.2).
var pkceChallenge = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// caseID is the platform's identifier alphabet, as libs/auth checks a
// token's case.
var caseID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,160}$`)

// CheckAuthorization checks GET /oauth/authorize, parsed by zitadel/oidc,
// in this order. Shown to the person (never redirected): a request that
// cannot be parsed, no client_id, a client that is no application's, no
// redirect_uri, or one that is not exactly one of the client's registered
// URIs. Then answered to the redirect URI: a request object
// (request_not_supported), prompt=none (interaction_required: a person always
// decides), a response_type other than code (unsupported_response_type),
// no code_challenge or a method other than S256, plain included
// (invalid_request), no scope or one that is not an account scope the
// client registered (invalid_scope), a resource other than the API or the
// MCP server (invalid_target), an unusable case_id (invalid_request).
func (s *Server) CheckAuthorization(ctx context.Context, r *http.Request) (CheckedAuthorization, error) {
	shown := func(e *oidc.Error) error { return &AuthorizationError{Err: e} }
	if s.grants == nil {
		return CheckedAuthorization{}, shown(oidc.ErrUnauthorizedClient().WithDescription("this server has no authorization code grant"))
	}
	// Parameters the library does not know (resource, case_id, and any
	// other) are ignored by its parse, as RFC 6749 section 3.1 asks; this
	// server reads its own from the form.
	decoder := schema.NewDecoder()
	decoder.IgnoreUnknownKeys(true)
	req, err := op.ParseAuthorizeRequest(r, decoder)
	if err != nil {
		return CheckedAuthorization{}, shown(oidc.ErrInvalidRequest().WithDescription("the authorization request could not be read"))
	}
	if req.ClientID == "" {
		return CheckedAuthorization{}, shown(oidc.ErrInvalidRequest().WithDescription("client_id is missing"))
	}
	app, err := s.grants.App(ctx, req.ClientID)
	if errors.Is(err, store.ErrNotFound) {
		return CheckedAuthorization{}, shown(oidc.ErrInvalidClient().WithDescription("client_id names no registered application"))
	}
	if err != nil {
		return CheckedAuthorization{}, s.failure(ctx, err)
	}
	if req.RedirectURI == "" || !slices.Contains(app.RedirectURIs, req.RedirectURI) {
		return CheckedAuthorization{}, shown(oidc.ErrInvalidRequestRedirectURI().WithDescription("redirect_uri must be exactly one of the URIs the client registered"))
	}
	a := account.Authorization{ClientID: app.ID, RedirectURI: req.RedirectURI, State: req.State, Challenge: req.CodeChallenge, CaseID: r.Form.Get(CaseParameter)}
	redirected := func(e *oidc.Error) error {
		return &AuthorizationError{RedirectTo: s.ErrorRedirect(a, string(e.ErrorType), e.Description), Err: e}
	}
	switch {
	case req.RequestParam != "":
		return CheckedAuthorization{}, redirected(oidc.ErrRequestNotSupported().WithDescription("request objects are not accepted"))
	case slices.Contains(req.Prompt, oidc.PromptNone):
		return CheckedAuthorization{}, redirected(oidc.ErrInteractionRequired().WithDescription("the person decides on every authorization: prompt=none cannot be answered"))
	case req.ResponseType != oidc.ResponseTypeCode:
		return CheckedAuthorization{}, redirected(&oidc.Error{ErrorType: "unsupported_response_type", Description: "response_type must be code"})
	case req.CodeChallenge == "":
		return CheckedAuthorization{}, redirected(oidc.ErrInvalidRequest().WithDescription("code_challenge is required: PKCE with S256"))
	case req.CodeChallengeMethod != oidc.CodeChallengeMethodS256:
		return CheckedAuthorization{}, redirected(oidc.ErrInvalidRequest().WithDescription("code_challenge_method must be S256; plain is not accepted"))
	case !pkceChallenge.MatchString(req.CodeChallenge):
		return CheckedAuthorization{}, redirected(oidc.ErrInvalidRequest().WithDescription("code_challenge must be the 43-character base64url of a SHA-256"))
	case len(req.Scopes) == 0:
		return CheckedAuthorization{}, redirected(oidc.ErrInvalidScope().WithDescription("scope is required: the account scopes asked for"))
	}
	for i, sc := range req.Scopes {
		if !slices.Contains(app.Scopes, account.Scope(sc)) || slices.Contains(req.Scopes[:i], sc) {
			return CheckedAuthorization{}, redirected(oidc.ErrInvalidScope().WithDescription("each scope must be an account scope the client registered, named once"))
		}
		a.Scopes = append(a.Scopes, account.Scope(sc))
	}
	audience, err := s.audience(r.Form["resource"])
	if err != nil {
		var oe *oidc.Error
		errors.As(err, &oe)
		return CheckedAuthorization{}, redirected(oe)
	}
	a.Resource = audience
	if _, given := r.Form[CaseParameter]; given && !caseID.MatchString(a.CaseID) {
		return CheckedAuthorization{}, redirected(oidc.ErrInvalidRequest().WithDescription("case_id must be a case id: 1 to 160 characters of A-Z a-z 0-9 . _ : -"))
	}
	return CheckedAuthorization{Authorization: a, Client: app}, nil
}

// codeAnswer and errorAnswer are the authorization response's query
// parameters (RFC 6749 section 4.1.2 and 4.1.2.1), with the issuer (RFC
// 9207) so the client knows which server answered.
type codeAnswer struct {
	Code  string `schema:"code"`
	State string `schema:"state,omitempty"`
	Iss   string `schema:"iss"`
}

type errorAnswer struct {
	Error       string `schema:"error"`
	Description string `schema:"error_description,omitempty"`
	State       string `schema:"state,omitempty"`
	Iss         string `schema:"iss"`
}

// CodeRedirect is where an approval sends the browser: the redirect URI
// with the code, the state and the issuer.
func (s *Server) CodeRedirect(a account.Authorization, code string) string {
	return s.responseURL(a.RedirectURI, codeAnswer{Code: code, State: a.State, Iss: s.cfg.Issuer})
}

// ErrorRedirect is where a refusal the client may hear (access_denied
// for a denial) sends the browser.
func (s *Server) ErrorRedirect(a account.Authorization, errorCode, description string) string {
	return s.responseURL(a.RedirectURI, errorAnswer{Error: errorCode, Description: description, State: a.State, Iss: s.cfg.Issuer})
}

func (s *Server) responseURL(redirectURI string, answer any) string {
	// The redirect URI is one the client registered (checked absolute,
	// with no fragment): zitadel/oidc adds the answer to its query.
	u, err := op.AuthResponseURL(redirectURI, oidc.ResponseTypeCode, oidc.ResponseModeQuery, answer, schema.NewEncoder())
	if err != nil {
		return redirectURI
	}
	return u
}

// CodeExchange redeems an authorization code (grant_type
// authorization_code) for an access token and a refresh token. zitadel/
// oidc has authenticated the client (GrantTypes admits only applications'
// clients) and required code and redirect_uri; the verifier is checked
// against the code's S256 challenge with zitadel/oidc's
// VerifyCodeChallenge.
func (s *Server) CodeExchange(ctx context.Context, r *op.ClientRequest[oidc.AccessTokenRequest]) (*op.Response, error) {
	if s.grants == nil {
		return nil, oidc.ErrUnauthorizedClient().WithDescription("this server has no authorization code grant")
	}
	req := r.Data
	if req.CodeVerifier == "" {
		return nil, oidc.ErrInvalidRequest().WithDescription("code_verifier is required: PKCE")
	}
	verify := func(challenge string) bool {
		return oidc.VerifyCodeChallenge(&oidc.CodeChallenge{Challenge: challenge, Method: oidc.CodeChallengeMethodS256}, req.CodeVerifier)
	}
	issued, err := s.grants.RedeemCode(ctx, req.Code, r.Client.GetID(), req.RedirectURI, verify)
	if err != nil {
		return nil, s.failure(ctx, err)
	}
	return s.issuedResponse(issued), nil
}

// RefreshToken rotates a refresh token (grant_type refresh_token): the
// presented one dies and a new one is answered with an access token of
// the asked scopes, a subset of the grant's, or all of them.
func (s *Server) RefreshToken(ctx context.Context, r *op.ClientRequest[oidc.RefreshTokenRequest]) (*op.Response, error) {
	if s.grants == nil {
		return nil, oidc.ErrUnauthorizedClient().WithDescription("this server has no authorization code grant")
	}
	var requested []account.Scope
	for _, sc := range r.Data.Scopes {
		if sc != "" { // an empty scope parameter asks for none in particular
			requested = append(requested, account.Scope(sc))
		}
	}
	issued, err := s.grants.Refresh(ctx, r.Data.RefreshToken, r.Client.GetID(), requested)
	if err != nil {
		return nil, s.failure(ctx, err)
	}
	return s.issuedResponse(issued), nil
}

func (s *Server) issuedResponse(issued grants.Issued) *op.Response {
	scopes := make([]string, len(issued.Credential.Scopes))
	for i, sc := range issued.Credential.Scopes {
		scopes[i] = string(sc)
	}
	return tokenResponse(oidc.AccessTokenResponse{
		AccessToken: issued.AccessToken, TokenType: oidc.BearerToken, RefreshToken: issued.RefreshToken,
		ExpiresIn: uint64(grants.TokenLifetime / time.Second), Scope: scopes,
	})
}

// APIAudience is the API's resource identifier, the audience of tokens
// for the API.
func (s *Server) APIAudience() string { return s.cfg.APIAudience }
