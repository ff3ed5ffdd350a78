// Package oauth is the platform's OAuth 2.1 authorization server, on
// zitadel/oidc's op.Server: the library routes and parses the token,
// revocation and introspection requests, authenticates the client's
// transport (Basic or form), and writes RFC 6749 errors; the decisions are
// the agents use cases'.
//
// Built so far (docs/accounts.md): the client credentials grant for
// verified autonomous-agent accounts, revocation (RFC 7009), introspection
// of a client's own tokens (RFC 7662) and the server's metadata (RFC
// 8414). Authorization code with PKCE, refresh tokens and dynamic client
// registration are not built: zitadel/oidc refuses the grants it knows as
// unauthorized_client (no client is registered for them), others as
// unsupported_grant_type.
//
// These endpoints answer in OAuth's own error format, not problem+json:
// RFC 6749 fixes it, and every OAuth client library parses it.
package oauth

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
	"github.com/pcourt/pcourt/services/accounts/internal/agents"
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
}

// Server implements op.Server and op.MetadataServer.
type Server struct {
	op.UnimplementedServer
	op.UnimplementedMetadataServer
	cfg    Config
	agents *agents.Service
	logger *slog.Logger
}

// New returns the server.
func New(cfg Config, uc *agents.Service, logger *slog.Logger) *Server {
	return &Server{cfg: cfg, agents: uc, logger: logger}
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

// VerifyClient authenticates the client by its secret; assertions (RFC
// 7523) are not accepted.
func (s *Server) VerifyClient(ctx context.Context, r *op.Request[op.ClientCredentials]) (op.Client, error) {
	cc := r.Data
	if cc.ClientAssertion != "" {
		return nil, unauthenticated("client assertions are not accepted; authenticate with the client secret (client_secret_basic or client_secret_post)")
	}
	if cc.ClientSecret == "" {
		return nil, unauthenticated("the client secret is missing; every client of this server is confidential")
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
	resp := op.NewResponse(oidc.AccessTokenResponse{
		AccessToken: tok.Secret, TokenType: oidc.BearerToken,
		ExpiresIn: uint64(agents.TokenLifetime / time.Second), Scope: scopes,
	})
	// RFC 6749 5.1: a token response is never stored.
	resp.Header.Set("Cache-Control", "no-store")
	resp.Header.Set("Pragma", "no-cache")
	return resp, nil
}

// audience is the one resource a token is asked for: the API when none is
// named. This server issues tokens for the API only; the MCP server's
// resource is not built.
func (s *Server) audience(resources []string) (string, error) {
	switch {
	case len(resources) == 0:
		return s.cfg.APIAudience, nil
	case len(resources) > 1:
		return "", oidc.ErrInvalidTarget().WithDescription("name one resource: a token is for one audience")
	case resources[0] != s.cfg.APIAudience:
		return "", oidc.ErrInvalidTarget().WithDescription("this server issues tokens for %s only", s.cfg.APIAudience)
	}
	return resources[0], nil
}

// Revocation revokes an access token the client holds (RFC 7009): an
// unknown, expired or revoked token is answered 200 as the RFC asks, a
// token of another client is refused.
func (s *Server) Revocation(ctx context.Context, r *op.ClientRequest[oidc.RevocationRequest]) (*op.Response, error) {
	if hint := r.Data.TokenTypeHint; hint != "" && hint != "access_token" {
		return nil, op.NewStatusError(&oidc.Error{ErrorType: "unsupported_token_type", Description: "this server issues access tokens only"}, http.StatusBadRequest)
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
	cred, err := s.agents.TokenOf(ctx, cc.ClientID, r.Data.Token)
	switch {
	case errors.Is(err, auth.ErrInvalidCredential), errors.Is(err, agents.ErrNotClientsToken):
		return inactive, nil
	case err != nil:
		return nil, s.failure(ctx, err)
	}
	scopes := ""
	for i, sc := range cred.Scopes {
		if i > 0 {
			scopes += " "
		}
		scopes += string(sc)
	}
	resp := op.NewResponse(introspection{
		Active: true, Scope: scopes, ClientID: cred.ClientID, TokenType: oidc.BearerToken,
		Exp: cred.ExpiresAt.Unix(), Iat: cred.CreatedAt.Unix(), Sub: cred.AccountID, Aud: cred.Audience,
		Iss: s.cfg.Issuer, Jti: cred.PublicID,
	})
	resp.Header.Set("Cache-Control", "no-store")
	return resp, nil
}

// metadata is RFC 8414's document, with response_types_supported always
// present (it is required) and empty: there is no authorization endpoint
// yet.
type metadata struct {
	Issuer                                    string   `json:"issuer"`
	TokenEndpoint                             string   `json:"token_endpoint"`
	RevocationEndpoint                        string   `json:"revocation_endpoint"`
	IntrospectionEndpoint                     string   `json:"introspection_endpoint"`
	ScopesSupported                           []string `json:"scopes_supported"`
	ResponseTypesSupported                    []string `json:"response_types_supported"`
	GrantTypesSupported                       []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported         []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported    []string `json:"revocation_endpoint_auth_methods_supported"`
	IntrospectionEndpointAuthMethodsSupported []string `json:"introspection_endpoint_auth_methods_supported"`
	ServiceDocumentation                      string   `json:"service_documentation"`
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
	resp := op.NewResponse(metadata{
		Issuer: s.cfg.Issuer, TokenEndpoint: s.cfg.Issuer + TokenPath, RevocationEndpoint: s.cfg.Issuer + RevocationPath,
		IntrospectionEndpoint: s.cfg.Issuer + IntrospectionPath, ScopesSupported: scopes, ResponseTypesSupported: []string{},
		GrantTypesSupported:               []string{string(oidc.GrantTypeClientCredentials)},
		TokenEndpointAuthMethodsSupported: methods, RevocationEndpointAuthMethodsSupported: methods,
		IntrospectionEndpointAuthMethodsSupported: methods,
		ServiceDocumentation:                      "https://pcourt.dev/docs/accounts",
	})
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
	case errors.Is(err, agents.ErrNotClientsToken):
		return oidc.ErrUnauthorizedClient().WithDescription("the token was not issued to this client")
	case errors.As(err, &refused) && refused.Code == account.CodeInvalidScope:
		return oidc.ErrInvalidScope().WithDescription("%s", refused.Detail)
	case errors.As(err, &refused) && refused.Code == account.CodeNotVerified:
		return oidc.ErrUnauthorizedClient().WithDescription("%s", refused.Detail)
	}
	s.logger.ErrorContext(ctx, "oauth request failed", "err", err)
	return op.NewStatusError(oidc.ErrServerError().WithDescription("the server could not answer; retry"), http.StatusInternalServerError)
}
