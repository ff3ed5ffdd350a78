// Package oauth is the platform's OAuth 2.1 authorization server, on
// zitadel/oidc's op.Server: the library routes and parses the token,
// revocation and introspection requests and the authorization request,
// authenticates the client's transport (Basic or form), checks PKCE and
// writes RFC 6749 errors; the decisions are the agents and grants use
// cases'.
//
// Built (docs/accounts.md): the client credentials grant for verified
// autonomous-agent accounts, for the API or the MCP server, the MCP
// server's token exchange (RFC 8693) of its tokens for the API's; where
// people's pages are served, the authorization code grant with PKCE for
// applications acting for a person's account, with rotating refresh
// tokens and dynamic client registration (RFC 7591, where the operator
// allows it) (code.go, registration.go); revocation (RFC 7009),
// introspection of a client's own tokens (RFC 7662) and the server's
// metadata (RFC 8414). zitadel/oidc refuses the other grants it knows as
// unauthorized_client (no client is registered for them), others as
// unsupported_grant_type.
//
// These endpoints answer in OAuth's own error format, not problem+json:
// RFC 6749 fixes it, and every OAuth client library parses it.
package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/agents"
	"github.com/pcourt/pcourt/services/accounts/internal/grants"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

// The endpoints' paths, as the edge routes them to this service.
const (
	TokenPath         = "/oauth/token"
	RevocationPath    = "/oauth/revoke"
	IntrospectionPath = "/oauth/introspect"
	MetadataPath      = "/.well-known/oauth-authorization-server"
)

// Config is what the server announces and accepts.
type Config struct {
	// Issuer is the server's identifier (RFC 8414): the API's public
	// origin, under which its endpoints are.
	Issuer string
	// APIAudience is the resource (RFC 8707) a token is for when the
	// client names none: the public API, whose services accept tokens of
	// that audience only.
	APIAudience string
	// MCP is the MCP server, when one is deployed (its Resource set).
	MCP MCP
	// Registration lets applications register their own clients for the
	// authorization code grant (RFC 7591, POST /oauth/register:
	// OAUTH_DYNAMIC_REGISTRATION), where the code grant is on.
	Registration bool
}

// MCP is the MCP server as this server knows it: a resource of its own,
// whose tokens client credentials issue when it is named, and a platform
// client that exchanges them for tokens of the API (RFC 8693) and does
// nothing else.
type MCP struct {
	// Resource is the MCP server's resource identifier (RFC 8707,
	// MCP_RESOURCE_URL), the audience of the tokens it accepts; "" when no
	// MCP server is deployed.
	Resource string
	// ClientID and ClientSecret authenticate the MCP server
	// (MCP_CLIENT_ID, MCP_CLIENT_SECRET).
	ClientID     string
	ClientSecret envconf.Secret
}

// MinClientSecretLength is the shortest MCP client secret accepted: a
// secret is random, not a password.
const MinClientSecretLength = 32

// agentClientID is the form of an agent's client ids: the MCP client's id
// may not take it, so that it never shadows an account's client.
var agentClientID = regexp.MustCompile(`^ocl_[A-Z2-7]{26}$`)

// platformClientID is the alphabet and length of the MCP client's id.
var platformClientID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,160}$`)

// Validate reports what is unusable: an MCP server is configured whole
// (its resource, its client's id and secret) or not at all, its resource
// is an absolute http or https URL other than the API's, and its client's
// id is not of an agent's client's form.
func (c Config) Validate() error {
	m := c.MCP
	if m.Resource == "" && m.ClientID == "" && m.ClientSecret == "" {
		return nil
	}
	var errs []error
	if m.Resource == "" || m.ClientID == "" || m.ClientSecret == "" {
		errs = append(errs, errors.New("MCP_RESOURCE_URL, MCP_CLIENT_ID and MCP_CLIENT_SECRET are set together or not at all"))
	}
	if m.Resource != "" {
		u, err := url.Parse(m.Resource)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" ||
			u.ForceQuery || u.Fragment != "" || u.Opaque != "" || strings.ContainsAny(m.Resource, " \t\r\n"):
			errs = append(errs, fmt.Errorf("MCP_RESOURCE_URL %q must be an absolute http or https URL with a host and no user, query or fragment", m.Resource))
		case m.Resource == c.APIAudience:
			errs = append(errs, fmt.Errorf("MCP_RESOURCE_URL %q is the API's audience: the MCP server is a resource of its own", m.Resource))
		}
	}
	if m.ClientID != "" && (!platformClientID.MatchString(m.ClientID) || agentClientID.MatchString(m.ClientID)) {
		errs = append(errs, fmt.Errorf("MCP_CLIENT_ID %q must be 1 to 160 characters of A-Z a-z 0-9 . _ : - and not of an agent's client's form (ocl_ and 26 of A-Z 2-7)", m.ClientID))
	}
	if m.ClientSecret != "" && len(m.ClientSecret.Reveal()) < MinClientSecretLength {
		errs = append(errs, fmt.Errorf("MCP_CLIENT_SECRET must be at least %d characters", MinClientSecretLength))
	}
	return errors.Join(errs...)
}

// Server implements op.Server and op.MetadataServer.
type Server struct {
	op.UnimplementedServer
	op.UnimplementedMetadataServer
	cfg    Config
	mcp    agents.PlatformClient // zero without an MCP server
	agents *agents.Service
	grants *grants.Service // nil: no authorization code grant (WithCodeGrant)
	logger *slog.Logger
}

// New returns the server. It keeps the MCP client's secret only as its
// SHA-256.
func New(cfg Config, uc *agents.Service, logger *slog.Logger) *Server {
	s := &Server{cfg: cfg, agents: uc, logger: logger}
	if cfg.MCP.Resource != "" {
		s.mcp = agents.PlatformClient{ID: cfg.MCP.ClientID, SecretHash: auth.HashToken(cfg.MCP.ClientSecret.Reveal())}
	}
	s.cfg.MCP.ClientSecret = ""
	return s
}

// Handlers returns the HTTP handlers of the endpoints (mounted at their
// paths as they are) and of the metadata.
func (s *Server) Handlers() (endpoints, metadata http.Handler) {
	eps := op.Endpoints{
		Token:         op.NewEndpoint(TokenPath),
		Revocation:    op.NewEndpoint(RevocationPath),
		Introspection: op.NewEndpoint(IntrospectionPath),
	}
	// No CORS on the endpoints: the clients are confidential and hold
	// secrets, and no browser page calls them. The metadata is public and
	// keeps the library's open CORS policy, for browser-based clients
	// discovering the server.
	return op.RegisterServer(s, eps, op.WithServerCORSOptions(nil)), op.RegisterMetadataServer(s)
}

// client is an authenticated client of an agent account, as op.Client.
type client struct {
	account.Client
}

func (c client) GetID() string                      { return c.ID }
func (client) RedirectURIs() []string               { return nil }
func (client) PostLogoutRedirectURIs() []string     { return nil }
func (client) ApplicationType() op.ApplicationType  { return op.ApplicationTypeWeb }
func (client) AuthMethod() oidc.AuthMethod          { return oidc.AuthMethodBasic }
func (client) ResponseTypes() []oidc.ResponseType   { return nil }
func (client) GrantTypes() []oidc.GrantType         { return []oidc.GrantType{oidc.GrantTypeClientCredentials} }
func (client) LoginURL(string) string               { return "" }
func (client) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeBearer }
func (client) IDTokenLifetime() time.Duration       { return 0 }
func (client) DevMode() bool                        { return false }
func (client) IDTokenUserinfoClaimsAssertion() bool { return false }
func (client) ClockSkew() time.Duration             { return 0 }
func (c client) IsScopeAllowed(scope string) bool {
	return slices.Contains(c.Scopes, account.Scope(scope))
}
func (client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func([]string) []string { return nil }
}
func (client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// mcpClient is the MCP server's platform client, as op.Client: it may use
// the token exchange grant alone, so zitadel/oidc answers any other grant
// it asks for with unauthorized_client.
type mcpClient struct {
	id string
}

func (c mcpClient) GetID() string                      { return c.id }
func (mcpClient) RedirectURIs() []string               { return nil }
func (mcpClient) PostLogoutRedirectURIs() []string     { return nil }
func (mcpClient) ApplicationType() op.ApplicationType  { return op.ApplicationTypeWeb }
func (mcpClient) AuthMethod() oidc.AuthMethod          { return oidc.AuthMethodBasic }
func (mcpClient) ResponseTypes() []oidc.ResponseType   { return nil }
func (mcpClient) GrantTypes() []oidc.GrantType         { return []oidc.GrantType{oidc.GrantTypeTokenExchange} }
func (mcpClient) LoginURL(string) string               { return "" }
func (mcpClient) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeBearer }
func (mcpClient) IDTokenLifetime() time.Duration       { return 0 }
func (mcpClient) DevMode() bool                        { return false }
func (mcpClient) IDTokenUserinfoClaimsAssertion() bool { return false }
func (mcpClient) ClockSkew() time.Duration             { return 0 }
func (mcpClient) IsScopeAllowed(scope string) bool {
	return slices.Contains(account.Scopes, account.Scope(scope))
}
func (mcpClient) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func([]string) []string { return nil }
}
func (mcpClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// VerifyClient authenticates the client: an application's client (its id
// begins oapp_) by its secret, or by none for a public one; the MCP
// server's platform client when one is configured and the id is its id;
// else an agent's client by its secret. Assertions (RFC 7523) are not
// accepted.
func (s *Server) VerifyClient(ctx context.Context, r *op.Request[op.ClientCredentials]) (op.Client, error) {
	cc := r.Data
	if cc.ClientAssertion != "" {
		return nil, unauthenticated("client assertions are not accepted; authenticate with the client secret (client_secret_basic or client_secret_post)")
	}
	if s.grants != nil && strings.HasPrefix(cc.ClientID, account.AppClientPrefix) {
		app, err := s.grants.AuthenticateApp(ctx, cc.ClientID, cc.ClientSecret)
		if err != nil {
			return nil, s.failure(ctx, err)
		}
		return appClient{app}, nil
	}
	if cc.ClientSecret == "" {
		return nil, unauthenticated("the client secret is missing; every client of this server is confidential")
	}
	if s.mcp.ID != "" && cc.ClientID == s.mcp.ID {
		if err := s.mcp.Authenticate(cc.ClientID, cc.ClientSecret); err != nil {
			return nil, s.failure(ctx, err)
		}
		return mcpClient{id: s.mcp.ID}, nil
	}
	_, c, err := s.agents.AuthenticateClient(ctx, cc.ClientID, cc.ClientSecret)
	if err != nil {
		return nil, s.failure(ctx, err)
	}
	return client{c}, nil
}

// ClientCredentialsExchange issues an access token to a verified agent's
// client, for the resource it names (RFC 8707) or the API.
func (s *Server) ClientCredentialsExchange(ctx context.Context, r *op.ClientRequest[oidc.ClientCredentialsRequest]) (*op.Response, error) {
	audience, err := s.audience(r.Form["resource"])
	if err != nil {
		return nil, err
	}
	requested := make([]account.Scope, len(r.Data.Scope))
	for i, sc := range r.Data.Scope {
		requested[i] = account.Scope(sc)
	}
	tok, err := s.agents.IssueClientCredentialsToken(ctx, r.Client.GetID(), requested, audience)
	if err != nil {
		return nil, s.failure(ctx, err)
	}
	scopes := make([]string, len(tok.Credential.Scopes))
	for i, sc := range tok.Credential.Scopes {
		scopes[i] = string(sc)
	}
	return tokenResponse(oidc.AccessTokenResponse{
		AccessToken: tok.Secret, TokenType: oidc.BearerToken,
		ExpiresIn: uint64(agents.TokenLifetime / time.Second), Scope: scopes,
	}), nil
}

// tokenResponse is a token endpoint's answer, which is never stored (RFC
// 6749 section 5.1).
func tokenResponse(body any) *op.Response {
	resp := op.NewResponse(body)
	resp.Header.Set("Cache-Control", "no-store")
	resp.Header.Set("Pragma", "no-cache")
	return resp
}

// audience is the one resource a token is asked for by client
// credentials: the API when none is named, else the API or, when an MCP
// server is deployed, the MCP server.
func (s *Server) audience(resources []string) (string, error) {
	switch {
	case len(resources) == 0:
		return s.cfg.APIAudience, nil
	case len(resources) > 1:
		return "", oidc.ErrInvalidTarget().WithDescription("name one resource: a token is for one audience")
	case resources[0] == s.cfg.APIAudience, s.cfg.MCP.Resource != "" && resources[0] == s.cfg.MCP.Resource:
		return resources[0], nil
	case s.cfg.MCP.Resource != "":
		return "", oidc.ErrInvalidTarget().WithDescription("this server issues tokens for %s and %s only", s.cfg.APIAudience, s.cfg.MCP.Resource)
	}
	return "", oidc.ErrInvalidTarget().WithDescription("this server issues tokens for %s only", s.cfg.APIAudience)
}

// exchangeTarget is the one resource an exchanged token is for: the API,
// whether named by resource (RFC 8707) or by RFC 8693's audience, or
// neither.
func (s *Server) exchangeTarget(resources, audiences []string) error {
	for _, target := range slices.Concat(resources, audiences) {
		if target != s.cfg.APIAudience {
			return oidc.ErrInvalidTarget().WithDescription("tokens are exchanged for %s only", s.cfg.APIAudience)
		}
	}
	return nil
}

// exchangeResponse is RFC 8693's answer (section 2.2.1), expires_in
// always present: an exchanged token may live less than TokenLifetime.
type exchangeResponse struct {
	AccessToken     string         `json:"access_token"`
	IssuedTokenType oidc.TokenType `json:"issued_token_type"`
	TokenType       string         `json:"token_type"`
	ExpiresIn       int64          `json:"expires_in"`
	Scope           string         `json:"scope"`
}

// TokenExchange issues to the MCP server, for an access token of its
// audience (the subject), an access token for the API with the subject's
// account, client and case, the asked scopes or all of the subject's,
// expiring no later than the subject (RFC 8693). The library has
// authenticated the MCP client (no other may use the grant: GrantTypes),
// required subject_token and a subject_token_type it knows; this server
// exchanges access tokens alone, acting for nobody else (no actor token).
func (s *Server) TokenExchange(ctx context.Context, r *op.ClientRequest[oidc.TokenExchangeRequest]) (*op.Response, error) {
	if _, ok := r.Client.(mcpClient); !ok || s.cfg.MCP.Resource == "" {
		return nil, oidc.ErrUnauthorizedClient().WithDescription("only the MCP server exchanges tokens")
	}
	req := r.Data
	switch {
	case req.SubjectTokenType != oidc.AccessTokenType:
		return nil, oidc.ErrInvalidRequest().WithDescription("subject_token_type must be %s", oidc.AccessTokenType)
	case req.ActorToken != "" || req.ActorTokenType != "":
		return nil, oidc.ErrInvalidRequest().WithDescription("actor tokens are not accepted: an exchanged token acts for its subject's account alone")
	case req.RequestedTokenType != "" && req.RequestedTokenType != oidc.AccessTokenType:
		return nil, oidc.ErrInvalidRequest().WithDescription("requested_token_type must be %s: this server issues access tokens only", oidc.AccessTokenType)
	}
	if err := s.exchangeTarget(req.Resource, req.Audience); err != nil {
		return nil, err
	}
	requested := make([]account.Scope, len(req.Scopes))
	for i, sc := range req.Scopes {
		requested[i] = account.Scope(sc)
	}
	tok, err := s.agents.ExchangeToken(ctx, agents.ExchangeRequest{
		SubjectToken: req.SubjectToken, From: s.cfg.MCP.Resource, Audience: s.cfg.APIAudience, Scopes: requested,
	})
	if err != nil {
		return nil, s.failure(ctx, err)
	}
	return tokenResponse(exchangeResponse{
		AccessToken: tok.Secret, IssuedTokenType: oidc.AccessTokenType, TokenType: oidc.BearerToken,
		ExpiresIn: int64(tok.Credential.ExpiresAt.Sub(tok.Credential.CreatedAt) / time.Second), Scope: joinScopes(tok.Credential.Scopes),
	}), nil
}

func joinScopes(scopes []auth.Scope) string {
	out := make([]string, len(scopes))
	for i, sc := range scopes {
		out[i] = string(sc)
	}
	return strings.Join(out, " ")
}

// Revocation revokes a token the client holds (RFC 7009): an access
// token alone, or a refresh token with its whole family (the grant, and
// every access token it issued). An unknown, expired or revoked token is
// answered 200 as the RFC asks, a token of another client is refused.
// The hint is not needed: the token's form tells which it is.
func (s *Server) Revocation(ctx context.Context, r *op.ClientRequest[oidc.RevocationRequest]) (*op.Response, error) {
	if hint := r.Data.TokenTypeHint; hint != "" && hint != "access_token" && hint != "refresh_token" {
		return nil, op.NewStatusError(&oidc.Error{ErrorType: "unsupported_token_type", Description: "this server issues access and refresh tokens only"}, http.StatusBadRequest)
	}
	if s.grants != nil && grants.IsRefreshToken(r.Data.Token) {
		g, err := s.grants.RefreshTokenOf(ctx, r.Client.GetID(), r.Data.Token)
		switch {
		case errors.Is(err, store.ErrGrantNotFound):
			return op.NewResponse(struct{}{}), nil
		case err != nil:
			return nil, s.failure(ctx, err)
		}
		if err := s.grants.RevokeGrant(ctx, g.ID); err != nil {
			return nil, s.failure(ctx, err)
		}
		return op.NewResponse(struct{}{}), nil
	}
	cred, err := s.agents.TokenOf(ctx, r.Client.GetID(), r.Data.Token)
	switch {
	case errors.Is(err, auth.ErrInvalidCredential):
		return op.NewResponse(struct{}{}), nil
	case err != nil:
		return nil, s.failure(ctx, err)
	}
	if err := s.agents.RevokeToken(ctx, cred); err != nil {
		return nil, s.failure(ctx, err)
	}
	return op.NewResponse(struct{}{}), nil
}

// introspection is RFC 7662's answer for an active token.
type introspection struct {
	Active    bool   `json:"active"`
	Scope     string `json:"scope,omitempty"`
	ClientID  string `json:"client_id,omitempty"`
	TokenType string `json:"token_type,omitempty"`
	Exp       int64  `json:"exp,omitempty"`
	Iat       int64  `json:"iat,omitempty"`
	Sub       string `json:"sub,omitempty"`
	Aud       string `json:"aud,omitempty"`
	Iss       string `json:"iss,omitempty"`
	Jti       string `json:"jti,omitempty"`
}

// Introspect answers whether a token the calling client holds is active
// (RFC 7662). The platform's own services never call it: they look tokens
// up in the credential store like every credential. A client introspects
// only its own tokens; any other token is inactive to it.
func (s *Server) Introspect(ctx context.Context, r *op.Request[op.IntrospectionRequest]) (*op.Response, error) {
	cc := r.Data.ClientCredentials
	if _, err := s.VerifyClient(ctx, &op.Request[op.ClientCredentials]{Data: cc}); err != nil {
		return nil, err
	}
	inactive := op.NewResponse(introspection{Active: false})
	inactive.Header.Set("Cache-Control", "no-store")
	if s.grants != nil && grants.IsRefreshToken(r.Data.Token) {
		return s.introspectRefresh(ctx, cc.ClientID, r.Data.Token, inactive)
	}
	cred, err := s.agents.TokenOf(ctx, cc.ClientID, r.Data.Token)
	switch {
	case errors.Is(err, auth.ErrInvalidCredential), errors.Is(err, agents.ErrNotClientsToken):
		return inactive, nil
	case err != nil:
		return nil, s.failure(ctx, err)
	}
	resp := op.NewResponse(introspection{
		Active: true, Scope: joinScopes(cred.Scopes), ClientID: cred.ClientID, TokenType: oidc.BearerToken,
		Exp: cred.ExpiresAt.Unix(), Iat: cred.CreatedAt.Unix(), Sub: cred.AccountID, Aud: cred.Audience,
		Iss: s.cfg.Issuer, Jti: cred.PublicID,
	})
	resp.Header.Set("Cache-Control", "no-store")
	return resp, nil
}

// introspectRefresh answers for a refresh token: active while it is the
// grant's current one, unexpired, of a live grant, and the calling
// client's.
func (s *Server) introspectRefresh(ctx context.Context, clientID, token string, inactive *op.Response) (*op.Response, error) {
	g, err := s.grants.RefreshTokenOf(ctx, clientID, token)
	switch {
	case errors.Is(err, store.ErrGrantNotFound), errors.Is(err, grants.ErrNotClientsGrant):
		return inactive, nil
	case err != nil:
		return nil, s.failure(ctx, err)
	}
	scopes := make([]auth.Scope, len(g.Scopes))
	for i, sc := range g.Scopes {
		scopes[i] = auth.Scope(sc)
	}
	resp := op.NewResponse(introspection{
		Active: true, Scope: joinScopes(scopes), ClientID: g.ClientID, TokenType: "refresh_token",
		Exp: g.RefreshExpiresAt.Unix(), Iat: g.CreatedAt.Unix(), Sub: g.AccountID, Aud: g.Resource, Iss: s.cfg.Issuer,
	})
	resp.Header.Set("Cache-Control", "no-store")
	return resp, nil
}

// metadata is RFC 8414's document, with response_types_supported always
// present (it is required): ["code"] where the authorization code grant
// is on, empty otherwise.
type metadata struct {
	Issuer                                    string   `json:"issuer"`
	AuthorizationEndpoint                     string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint                             string   `json:"token_endpoint"`
	RegistrationEndpoint                      string   `json:"registration_endpoint,omitempty"`
	RevocationEndpoint                        string   `json:"revocation_endpoint"`
	IntrospectionEndpoint                     string   `json:"introspection_endpoint"`
	ScopesSupported                           []string `json:"scopes_supported"`
	ResponseTypesSupported                    []string `json:"response_types_supported"`
	GrantTypesSupported                       []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported         []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported    []string `json:"revocation_endpoint_auth_methods_supported"`
	IntrospectionEndpointAuthMethodsSupported []string `json:"introspection_endpoint_auth_methods_supported"`
	// CodeChallengeMethodsSupported is S256 alone, the one PKCE method
	// OAuth 2.1 permits and the one the authorization code grant takes.
	// It is announced where that grant is off too: MCP clients read this
	// member before any grant and refuse a server without it (the MCP
	// authorization specification; the Go SDK's client-credentials
	// handler does).
	CodeChallengeMethodsSupported []string `json:"code_challenge_methods_supported"`
	// AuthorizationResponseIssParameterSupported: the authorization
	// response names the issuer (RFC 9207), where the code grant is on.
	AuthorizationResponseIssParameterSupported bool   `json:"authorization_response_iss_parameter_supported,omitempty"`
	ServiceDocumentation                       string `json:"service_documentation"`
}

// AuthorizationServerMetadata serves RFC 8414's document for the issuer,
// which has no path.
func (s *Server) AuthorizationServerMetadata(_ context.Context, r *op.Request[op.MetadataRequest]) (*op.Response, error) {
	if r.Data.IssuerPath != "" {
		return nil, op.NewStatusError(oidc.ErrInvalidRequest().WithDescription("no issuer at this path"), http.StatusNotFound)
	}
	scopes := make([]string, len(account.Scopes))
	for i, sc := range account.Scopes {
		scopes[i] = string(sc)
	}
	methods := []string{string(oidc.AuthMethodBasic), string(oidc.AuthMethodPost)}
	grantTypes := []string{string(oidc.GrantTypeClientCredentials)}
	if s.cfg.MCP.Resource != "" {
		grantTypes = append(grantTypes, string(oidc.GrantTypeTokenExchange))
	}
	md := metadata{
		Issuer: s.cfg.Issuer, TokenEndpoint: s.cfg.Issuer + TokenPath, RevocationEndpoint: s.cfg.Issuer + RevocationPath,
		IntrospectionEndpoint: s.cfg.Issuer + IntrospectionPath, ScopesSupported: scopes, ResponseTypesSupported: []string{},
		GrantTypesSupported:               grantTypes,
		TokenEndpointAuthMethodsSupported: methods, RevocationEndpointAuthMethodsSupported: methods,
		IntrospectionEndpointAuthMethodsSupported: methods,
		CodeChallengeMethodsSupported:             []string{"S256"},
		ServiceDocumentation:                      "https://pcourt.dev/docs/accounts",
	}
	if s.CodeGrant() {
		// A public application's client authenticates with none (PKCE
		// alone) at the token endpoint, and at the revocation of its own
		// tokens; introspection wants a confidential client (zitadel/oidc
		// refuses one without a secret, as RFC 7662 section 2.1 asks).
		withNone := append(slices.Clone(methods), string(oidc.AuthMethodNone))
		md.AuthorizationEndpoint = s.cfg.Issuer + AuthorizationPath
		md.ResponseTypesSupported = []string{string(oidc.ResponseTypeCode)}
		md.GrantTypesSupported = append(md.GrantTypesSupported, string(oidc.GrantTypeCode), string(oidc.GrantTypeRefreshToken))
		md.TokenEndpointAuthMethodsSupported, md.RevocationEndpointAuthMethodsSupported = withNone, withNone
		md.AuthorizationResponseIssParameterSupported = true
	}
	if s.Registration() {
		md.RegistrationEndpoint = s.cfg.Issuer + RegistrationPath
	}
	resp := op.NewResponse(md)
	resp.Header.Set("Cache-Control", "public, max-age=300")
	return resp, nil
}

func unauthenticated(description string) error {
	return op.NewStatusError(oidc.ErrInvalidClient().WithDescription("%s", description), http.StatusUnauthorized)
}

// failure turns a use case's error into the OAuth error the client reads.
// Nothing but the refusal's own detail reaches the client: a store
// failure is logged and answered as server_error without its cause.
func (s *Server) failure(ctx context.Context, err error) error {
	var refused *account.RefusalError
	switch {
	case errors.Is(err, agents.ErrClientAuthentication), errors.Is(err, store.ErrNotFound):
		return unauthenticated("the client id names no active client, or the secret is not its secret")
	case errors.Is(err, grants.ErrClientAuthentication):
		return unauthenticated("the client id names no registered application, or its authentication is not the client's: a public client sends no secret, a confidential one its secret")
	case errors.Is(err, grants.ErrNotClientsGrant):
		return oidc.ErrUnauthorizedClient().WithDescription("the token was not issued to this client")
	case errors.Is(err, agents.ErrNotClientsToken):
		return oidc.ErrUnauthorizedClient().WithDescription("the token was not issued to this client")
	case errors.As(err, &refused) && refused.Code == account.CodeInvalidScope:
		return oidc.ErrInvalidScope().WithDescription("%s", refused.Detail)
	case errors.As(err, &refused) && refused.Code == account.CodeNotVerified:
		return oidc.ErrUnauthorizedClient().WithDescription("%s", refused.Detail)
	case errors.As(err, &refused) && refused.Code == account.CodeInvalidGrant:
		return oidc.ErrInvalidGrant().WithDescription("%s", refused.Detail)
	}
	s.logger.ErrorContext(ctx, "oauth request failed", "err", err)
	return op.NewStatusError(oidc.ErrServerError().WithDescription("the server could not answer; retry"), http.StatusInternalServerError)
}
