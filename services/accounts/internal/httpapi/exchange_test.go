package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/services/accounts/internal/oauth"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

const (
	mcpResource     = audience + "/mcp"
	mcpClientID     = "ocl_mcp"
	mcpClientSecret = "pc_ocs_the-mcp-servers-secret-for-these-tests"

	tokenExchange   = "urn:ietf:params:oauth:grant-type:token-exchange"
	accessTokenType = "urn:ietf:params:oauth:token-type:access_token"
)

// newMCPStack is the service with an MCP server deployed at mcpResource.
func newMCPStack(t *testing.T) *stack {
	t.Helper()
	return newStackWith(t, oauth.Config{Issuer: audience, APIAudience: audience, MCP: oauth.MCP{
		Resource: mcpResource, ClientID: mcpClientID, ClientSecret: envconf.Secret(mcpClientSecret),
	}})
}

// exchanger returns the MCP server's x/oauth2 client for exchanging
// subject; edit changes its parameters.
func (s *stack) exchanger(subject string, edit func(url.Values)) clientcredentials.Config {
	params := url.Values{"grant_type": {tokenExchange}, "subject_token": {subject}, "subject_token_type": {accessTokenType}}
	if edit != nil {
		edit(params)
	}
	return clientcredentials.Config{
		ClientID: mcpClientID, ClientSecret: mcpClientSecret, TokenURL: s.url + oauth.TokenPath,
		AuthStyle: oauth2.AuthStyleInHeader, EndpointParams: params,
	}
}

// mcpToken is a token of the agent's client for the MCP server, by client
// credentials.
func mcpToken(t *testing.T, cc clientcredentials.Config, scopes ...string) *oauth2.Token {
	t.Helper()
	cc.Scopes = scopes
	cc.EndpointParams = url.Values{"resource": {mcpResource}}
	tok, err := cc.Token(validated(t))
	require.NoError(t, err)
	return tok
}

// verifiedAgent registers and attests an agent with a client of scopes.
func (s *stack) verifiedAgent(t *testing.T, scopes ...string) (string, clientcredentials.Config) {
	t.Helper()
	id, cc := s.registerAgent(t, scopes...)
	s.attest(t, id)
	return id, cc
}

// protected is a route of the API that accepts account tokens for the
// API's audience, as every service's does.
func protected(t *testing.T, creds *auth.Store) func(token string) int {
	t.Helper()
	r := gin.New()
	r.GET("/probe", auth.Middleware(creds, auth.AcceptAccountTokens(audience)), func(c *gin.Context) { c.Status(http.StatusNoContent) })
	return func(token string) int {
		req := httptest.NewRequest(http.MethodGet, "/probe", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		return w.Code
	}
}

func TestWithAnMCPServerClientCredentialsIssueTokensForIt(t *testing.T) {
	s := newMCPStack(t)
	_, cc := s.verifiedAgent(t, "cases:read")

	tok := mcpToken(t, cc)
	cred, err := s.creds.Authenticate(context.Background(), tok.AccessToken)
	require.NoError(t, err)
	require.Equal(t, mcpResource, cred.Audience, "the token is for the MCP server")
	require.Equal(t, http.StatusUnauthorized, protected(t, s.creds)(tok.AccessToken), "and refused by the API")

	cc.EndpointParams = url.Values{"resource": {audience}}
	tok, err = cc.Token(validated(t))
	require.NoError(t, err)
	cred, err = s.creds.Authenticate(context.Background(), tok.AccessToken)
	require.NoError(t, err)
	require.Equal(t, audience, cred.Audience)

	for _, resource := range []string{"https://elsewhere.test", mcpResource + "/", audience + "/mcp/tools"} {
		cc.EndpointParams = url.Values{"resource": {resource}}
		_, err = cc.Token(validated(t))
		_, code := oauthError(t, err)
		require.Equal(t, "invalid_target", code, resource)
	}
}

func TestTheMCPServerExchangesItsTokenForOneOfTheAPIWithTheSameAccountScopesAndCase(t *testing.T) {
	s := newMCPStack(t)
	ctx := context.Background()
	id, cc := s.verifiedAgent(t, "cases:read", "cases:act", "evidence:file")
	api := protected(t, s.creds)

	// A token the MCP server received, by client credentials: all the
	// subject's scopes when none are asked, and never a later expiry.
	subject := mcpToken(t, cc, "cases:read", "cases:act")
	subjectCred, err := s.creds.Authenticate(ctx, subject.AccessToken)
	require.NoError(t, err)
	exchange := s.exchanger(subject.AccessToken, nil)
	tok, err := exchange.Token(validated(t))
	require.NoError(t, err)
	require.Equal(t, "Bearer", tok.TokenType)
	require.Equal(t, accessTokenType, tok.Extra("issued_token_type"))
	require.Equal(t, "cases:read cases:act", tok.Extra("scope"))
	require.NotEqual(t, subject.AccessToken, tok.AccessToken, "a new token, never the subject passed on")

	cred, err := s.creds.Authenticate(ctx, tok.AccessToken)
	require.NoError(t, err)
	require.Equal(t, audience, cred.Audience)
	require.Equal(t, id, cred.AccountID)
	require.Equal(t, cc.ClientID, cred.ClientID, "the subject's client, whose revocation kills it")
	require.Equal(t, []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct}, cred.Scopes)
	require.Equal(t, subjectCred.Tenant, cred.Tenant)
	require.Equal(t, subjectCred.Environment, cred.Environment)
	require.Empty(t, cred.CaseID)
	require.False(t, cred.ExpiresAt.After(subjectCred.ExpiresAt), "expires %s, after its subject %s", cred.ExpiresAt, subjectCred.ExpiresAt)
	require.Equal(t, http.StatusNoContent, api(tok.AccessToken), "the API accepts the exchanged token")
	require.Equal(t, http.StatusUnauthorized, api(subject.AccessToken), "and never the subject")

	// A subject bound to a case, with three minutes left, for fewer
	// scopes: the same case, the asked scopes, the subject's expiry.
	secret, bound, err := s.creds.MintAccountToken(ctx, auth.AccountTokenRequest{
		Tenant: subjectCred.Tenant, Environment: subjectCred.Environment, AccountID: id, ClientID: cc.ClientID,
		Scopes: []auth.Scope{auth.ScopeCasesRead, auth.ScopeEvidenceFile}, Audience: mcpResource, CaseID: "case_delegated", Lifetime: 3 * time.Minute,
	})
	require.NoError(t, err)
	exchange = s.exchanger(secret, func(v url.Values) { v.Set("scope", "evidence:file"); v.Set("resource", audience) })
	tok, err = exchange.Token(validated(t))
	require.NoError(t, err)
	require.Equal(t, "evidence:file", tok.Extra("scope"))
	require.WithinDuration(t, bound.ExpiresAt, tok.Expiry, 2*time.Second, "expires_in counts down to the subject's expiry")
	cred, err = s.creds.Authenticate(ctx, tok.AccessToken)
	require.NoError(t, err)
	require.Equal(t, "case_delegated", cred.CaseID, "bound to the subject's case")
	require.Equal(t, []auth.Scope{auth.ScopeEvidenceFile}, cred.Scopes)
	require.True(t, cred.ExpiresAt.Equal(bound.ExpiresAt), "expires with its subject: %s, not %s", cred.ExpiresAt, bound.ExpiresAt)
	require.Equal(t, http.StatusNoContent, api(tok.AccessToken))
}

func TestTheExchangeAnswersNoStoreAndIsListedInTheMetadata(t *testing.T) {
	s := newMCPStack(t)
	_, cc := s.verifiedAgent(t, "cases:read")
	form := s.exchanger(mcpToken(t, cc).AccessToken, nil).EndpointParams
	req, err := http.NewRequest(http.MethodPost, s.url+oauth.TokenPath, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(mcpClientID, mcpClientSecret)
	resp, raw := apitest.Do(t, http.DefaultClient, req)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	var body map[string]any
	require.NoError(t, json.Unmarshal(raw, &body))
	require.ElementsMatch(t, []string{"access_token", "issued_token_type", "token_type", "expires_in", "scope"}, keys(body))
	require.LessOrEqual(t, body["expires_in"], float64(600))

	req, err = http.NewRequest(http.MethodGet, s.url+oauth.MetadataPath, nil)
	require.NoError(t, err)
	_, raw = apitest.Do(t, http.DefaultClient, req)
	var md map[string]any
	require.NoError(t, json.Unmarshal(raw, &md))
	require.Equal(t, []any{"client_credentials", tokenExchange}, md["grant_types_supported"], "listed where an MCP server is deployed")
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestAnExchangeIsRefusedUnlessTheMCPServerAsksItForItsOwnLiveToken(t *testing.T) {
	s := newMCPStack(t)
	ctx := context.Background()
	id, cc := s.verifiedAgent(t, "cases:read", "cases:act")
	subject := mcpToken(t, cc, "cases:read").AccessToken
	cc.EndpointParams = url.Values{"resource": {audience}}
	apiToken, err := cc.Token(validated(t))
	require.NoError(t, err)
	revoked := mcpToken(t, cc).AccessToken
	revokedCred, err := s.creds.Authenticate(ctx, revoked)
	require.NoError(t, err)
	require.NoError(t, s.creds.Revoke(ctx, revokedCred.PublicID))
	partner := s.agent // a partner's credential, no account token

	accounts := store.New(s.rdb)
	held, err := accounts.HeldTokens(ctx, id, cc.ClientID, time.Now())
	require.NoError(t, err)

	for _, tc := range []struct {
		name   string
		client clientcredentials.Config
		status int
		code   string
	}{
		{"a subject for the API", s.exchanger(apiToken.AccessToken, nil), 400, "invalid_grant"},
		{"a revoked subject", s.exchanger(revoked, nil), 400, "invalid_grant"},
		{"an unknown subject", s.exchanger("pc_oat_sbx_nosuchtoken", nil), 400, "invalid_grant"},
		{"a partner credential as subject", s.exchanger(partner, nil), 400, "invalid_grant"},
		{"a wider scope", s.exchanger(subject, func(v url.Values) { v.Set("scope", "cases:read cases:act") }), 400, "invalid_scope"},
		{"another resource", s.exchanger(subject, func(v url.Values) { v.Set("resource", mcpResource) }), 400, "invalid_target"},
		{"another audience", s.exchanger(subject, func(v url.Values) { v.Set("audience", "https://elsewhere.test") }), 400, "invalid_target"},
		{"an actor token", s.exchanger(subject, func(v url.Values) { v.Set("actor_token", subject); v.Set("actor_token_type", accessTokenType) }), 400, "invalid_request"},
		{"a refresh token asked", s.exchanger(subject, func(v url.Values) {
			v.Set("requested_token_type", "urn:ietf:params:oauth:token-type:refresh_token")
		}), 400, "invalid_request"},
		{"an ID token as subject", s.exchanger(subject, func(v url.Values) { v.Set("subject_token_type", "urn:ietf:params:oauth:token-type:id_token") }), 400, "invalid_request"},
		{"no subject token", s.exchanger("", nil), 400, "invalid_request"},
		{"a wrong MCP secret", func() clientcredentials.Config {
			c := s.exchanger(subject, nil)
			c.ClientSecret += "x"
			return c
		}(), 401, "invalid_client"},
		{"an agent's client exchanging", func() clientcredentials.Config {
			c := cc
			c.EndpointParams = s.exchanger(subject, nil).EndpointParams
			return c
		}(), 400, "unauthorized_client"},
		{"the MCP client by client credentials", func() clientcredentials.Config {
			c := s.exchanger(subject, nil)
			c.EndpointParams = nil
			return c
		}(), 400, "unauthorized_client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.client.Token(validated(t))
			status, code := oauthError(t, err)
			require.Equal(t, tc.status, status)
			require.Equal(t, tc.code, code)
		})
	}
	after, err := accounts.HeldTokens(ctx, id, cc.ClientID, time.Now())
	require.NoError(t, err)
	require.ElementsMatch(t, held, after, "no refused exchange issued a token")
	_, err = s.creds.Authenticate(ctx, subject)
	require.NoError(t, err, "nor touched the subject")
}

func TestWithoutAnMCPServerNoClientExchanges(t *testing.T) {
	s := newStack(t)
	_, cc := s.verifiedAgent(t, "cases:read")
	tok, err := cc.Token(validated(t))
	require.NoError(t, err)
	cc.EndpointParams = s.exchanger(tok.AccessToken, nil).EndpointParams
	_, err = cc.Token(validated(t))
	_, code := oauthError(t, err)
	require.Equal(t, "unauthorized_client", code)

	mcp := s.exchanger(tok.AccessToken, nil)
	_, err = mcp.Token(validated(t))
	status, code := oauthError(t, err)
	require.Equal(t, http.StatusUnauthorized, status, "no MCP client is configured")
	require.Equal(t, "invalid_client", code)
}

func TestRevokingTheAgentsClientRevokesTheTokensExchangedForItsTokens(t *testing.T) {
	s := newMCPStack(t)
	id, cc := s.verifiedAgent(t, "cases:read")
	subject := mcpToken(t, cc)
	exchange := s.exchanger(subject.AccessToken, nil)
	tok, err := exchange.Token(validated(t))
	require.NoError(t, err)
	api := protected(t, auth.NewStore(s.rdb, auth.DefaultStoreConfig()))
	require.Equal(t, http.StatusNoContent, api(tok.AccessToken))

	status, _ := s.call(t, http.MethodDelete, "/api/accounts/"+id+"/clients/"+cc.ClientID, s.operator, nil)
	require.Equal(t, http.StatusNoContent, status)
	fresh := auth.NewStore(s.rdb, auth.DefaultStoreConfig())
	for name, token := range map[string]string{"subject": subject.AccessToken, "exchanged": tok.AccessToken} {
		_, err = fresh.Authenticate(context.Background(), token)
		require.ErrorIs(t, err, auth.ErrInvalidCredential, "the %s token is revoked with its client", name)
	}

	_, err = exchange.Token(validated(t))
	_, code := oauthError(t, err)
	require.Equal(t, "invalid_grant", code, "a revoked client's token is not exchanged")
}
