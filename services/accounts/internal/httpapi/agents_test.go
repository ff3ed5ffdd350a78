package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/accounts/internal/agents"
	"github.com/pcourt/pcourt/services/accounts/internal/httpapi"
	"github.com/pcourt/pcourt/services/accounts/internal/oauth"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

const audience = "https://api.pcourt.test"

type stack struct {
	url      string
	rdb      redis.UniversalClient
	creds    *auth.Store
	operator string // orchestrator of partner-test, sandbox
	other    string // orchestrator of another partner
	live     string // partner-test, live
	agent    string // a claimant agent credential of partner-test
}

// newStack is the service with no MCP server deployed.
func newStack(t *testing.T) *stack {
	t.Helper()
	return newStackWith(t, oauth.Config{Issuer: audience, APIAudience: audience})
}

func newStackWith(t *testing.T, cfg oauth.Config) *stack {
	t.Helper()
	rdb := redistest.NewClient(t)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := &stack{rdb: rdb, creds: auth.NewStore(rdb, auth.DefaultStoreConfig())}
	s.operator, _ = authtest.Mint(t, s.creds, auth.RolePlatformOrchestrator)
	s.other, _ = authtest.Mint(t, s.creds, auth.RolePlatformOrchestrator, authtest.WithPartner("partner-other"))
	s.live, _ = authtest.Mint(t, s.creds, auth.RolePlatformOrchestrator, func(r *auth.MintRequest) { r.Environment = auth.Live })
	s.agent, _ = authtest.Mint(t, s.creds, auth.RoleClaimantAgent)
	journal, err := idempotency.NewJournal(rdb, idempotency.DefaultConfig("pc:acct"), logger)
	require.NoError(t, err)
	uc := agents.New(store.New(rdb), s.creds, logger, nil)
	srv := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "accounts", Logger: logger, Mapper: httpapi.Problem})
	httpapi.Register(srv.Router(), httpapi.Deps{
		Credentials: s.creds, Agents: uc, Journal: journal,
		OAuth: oauth.New(cfg, uc, logger),
	})
	ts := httptest.NewServer(srv.Router())
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

// call sends a JSON request with a bearer and an Idempotency-Key,
// validates the exchange against the OpenAPI document, and decodes the
// answer into out (the data member of a success, the problem otherwise).
func (s *stack) call(t *testing.T, method, path, bearer string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+bearer)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", rand.Text())
	}
	resp, raw := apitest.Do(t, http.DefaultClient, req)
	if len(raw) == 0 {
		return resp.StatusCode, nil
	}
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	if d, ok := out["data"].(map[string]any); ok {
		return resp.StatusCode, d
	}
	return resp.StatusCode, out
}

// registerAgent registers an agent account of the operator and adds a
// client with scopes; it returns the account id and the client's
// credentials.
func (s *stack) registerAgent(t *testing.T, scopes ...string) (string, clientcredentials.Config) {
	t.Helper()
	status, a := s.call(t, http.MethodPost, "/api/accounts", s.operator, map[string]any{"kind": "autonomous_agent", "displayName": "Claims bot " + t.Name()})
	require.Equal(t, http.StatusCreated, status, a)
	require.Equal(t, "unverified", a["status"])
	id := a["id"].(string)
	status, c := s.call(t, http.MethodPost, "/api/accounts/"+id+"/clients", s.operator, map[string]any{"scopes": scopes})
	require.Equal(t, http.StatusCreated, status, c)
	require.True(t, strings.HasPrefix(c["clientSecret"].(string), "pc_ocs_"))
	return id, clientcredentials.Config{
		ClientID: c["clientId"].(string), ClientSecret: c["clientSecret"].(string), TokenURL: s.url + oauth.TokenPath,
		AuthStyle: oauth2.AuthStyleInHeader,
	}
}

func (s *stack) attest(t *testing.T, id string) {
	t.Helper()
	status, a := s.call(t, http.MethodPost, "/api/accounts/"+id+"/attestation", s.operator, map[string]any{
		"model": "claims-model-7", "provider": "Acme Labs", "contact": "ops@acme.test", "acceptsResponsibility": true,
	})
	require.Equal(t, http.StatusOK, status, a)
	require.Equal(t, "verified", a["status"])
}

// validated returns a context whose x/oauth2 client validates every
// exchange against the OpenAPI document, as call does.
func validated(tb testing.TB) context.Context {
	client := &http.Client{Transport: validating{tb: tb, next: http.DefaultTransport}}
	return context.WithValue(context.Background(), oauth2.HTTPClient, client)
}

// validating checks each exchange it carries with apitest.Response and
// hands the response on with its body restored.
type validating struct {
	tb   testing.TB
	next http.RoundTripper
}

func (v validating) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := v.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	apitest.Response(v.tb, req, resp, body) // puts the body back on resp
	return resp, nil
}

// oauthError is the RFC 6749 error an x/oauth2 client got.
func oauthError(t *testing.T, err error) (int, string) {
	t.Helper()
	var re *oauth2.RetrieveError
	require.ErrorAs(t, err, &re)
	return re.Response.StatusCode, re.ErrorCode
}

func TestAVerifiedAgentGetsATokenByClientCredentialsThatEveryServiceAuthenticates(t *testing.T) {
	s := newStack(t)
	id, cc := s.registerAgent(t, "cases:read", "cases:act")

	_, err := cc.Token(validated(t))
	status, code := oauthError(t, err)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "unauthorized_client", code, "an unverified agent gets no token")

	s.attest(t, id)
	tok, err := cc.Token(validated(t))
	require.NoError(t, err)
	require.Equal(t, "Bearer", tok.TokenType)
	require.True(t, strings.HasPrefix(tok.AccessToken, "pc_oat_sbx_"))
	require.Equal(t, "cases:read cases:act", tok.Extra("scope"))

	cred, err := s.creds.Authenticate(context.Background(), tok.AccessToken)
	require.NoError(t, err)
	require.Equal(t, id, cred.AccountID)
	require.Equal(t, cc.ClientID, cred.ClientID)
	require.Equal(t, audience, cred.Audience)
	require.Empty(t, cred.PartnerID, "an account token is no partner's")
	require.Empty(t, cred.Role, "an account token has no role")
	require.Equal(t, []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct}, cred.Scopes)
	require.Equal(t, auth.Sandbox, cred.Environment)
}

func TestATokenCarriesOnlyScopesItsClientWasRegisteredWith(t *testing.T) {
	s := newStack(t)
	id, cc := s.registerAgent(t, "cases:read")
	s.attest(t, id)

	cc.Scopes = []string{"cases:read", "executions:report"}
	_, err := cc.Token(validated(t))
	status, code := oauthError(t, err)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_scope", code, "OAuth never widens a client's scopes")

	cc.Scopes = []string{"administrator"}
	_, err = cc.Token(validated(t))
	_, code = oauthError(t, err)
	require.Equal(t, "invalid_scope", code, "no scope names administrator powers")

	cc.Scopes = []string{"cases:read"}
	tok, err := cc.Token(validated(t))
	require.NoError(t, err)
	cred, err := s.creds.Authenticate(context.Background(), tok.AccessToken)
	require.NoError(t, err)
	require.False(t, cred.HasScope(auth.ScopeExecutionsReport))
}

func TestATokenIsForTheAPIOnly(t *testing.T) {
	s := newStack(t)
	id, cc := s.registerAgent(t, "cases:read")
	s.attest(t, id)
	for _, resource := range []string{"https://elsewhere.test", audience + "/mcp"} {
		cc.EndpointParams = url.Values{"resource": {resource}}
		_, err := cc.Token(validated(t))
		_, code := oauthError(t, err)
		require.Equal(t, "invalid_target", code, "%s: no MCP server is deployed", resource)
	}

	cc.EndpointParams = url.Values{"resource": {audience}}
	_, err := cc.Token(validated(t))
	require.NoError(t, err)
}

func TestAWrongSecretOrAnUnknownClientIsUnauthenticated(t *testing.T) {
	s := newStack(t)
	id, cc := s.registerAgent(t, "cases:read")
	s.attest(t, id)
	for name, mutate := range map[string]func(*clientcredentials.Config){
		"wrong secret":   func(c *clientcredentials.Config) { c.ClientSecret += "x" },
		"unknown client": func(c *clientcredentials.Config) { c.ClientID = "ocl_NOSUCHCLIENT" },
		"no secret":      func(c *clientcredentials.Config) { c.ClientSecret = ""; c.AuthStyle = oauth2.AuthStyleInParams },
	} {
		t.Run(name, func(t *testing.T) {
			c := cc
			mutate(&c)
			_, err := c.Token(validated(t))
			status, code := oauthError(t, err)
			require.Equal(t, http.StatusUnauthorized, status)
			require.Equal(t, "invalid_client", code)
		})
	}
}

func TestAnotherPartnerNeitherSeesNorManagesTheAccount(t *testing.T) {
	s := newStack(t)
	id, cc := s.registerAgent(t, "cases:read")
	for _, bearer := range []string{s.other, s.live} {
		status, p := s.call(t, http.MethodGet, "/api/accounts/"+id, bearer, nil)
		require.Equal(t, http.StatusNotFound, status)
		require.Equal(t, "account_not_found", p["code"])
		status, p = s.call(t, http.MethodPost, "/api/accounts/"+id+"/attestation", bearer, map[string]any{
			"model": "m", "provider": "p", "contact": "c", "acceptsResponsibility": true,
		})
		require.Equal(t, http.StatusNotFound, status, p)
		status, _ = s.call(t, http.MethodDelete, "/api/accounts/"+id+"/clients/"+cc.ClientID, bearer, nil)
		require.Equal(t, http.StatusNotFound, status)
		status, list := s.call(t, http.MethodGet, "/api/accounts", bearer, nil)
		require.Equal(t, http.StatusOK, status)
		require.NotContains(t, jsonString(t, list), id)
	}
	status, p := s.call(t, http.MethodGet, "/api/accounts/"+id, s.agent, nil)
	require.Equal(t, http.StatusForbidden, status, "an agent credential does not operate accounts")
	require.Equal(t, "forbidden", p["code"])

	status, a := s.call(t, http.MethodGet, "/api/accounts/"+id, s.operator, nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "unverified", a["status"], "nothing the others sent changed it")
}

func jsonString(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestBadRegistrationsAndAttestationsAreProblemsThatChangeNothing(t *testing.T) {
	s := newStack(t)
	for _, tc := range []struct {
		body   map[string]any
		status int
		code   string
	}{
		{map[string]any{"kind": "autonomous_agent", "displayName": ""}, 400, "invalid_account"},
		{map[string]any{"kind": "robot", "displayName": "x"}, 400, "invalid_account"},
		{map[string]any{"kind": "individual", "displayName": "x"}, 422, "account_kind_not_registrable"},
		{map[string]any{"kind": "organization", "displayName": "x"}, 422, "account_kind_not_registrable"},
		{map[string]any{"kind": "autonomous_agent", "displayName": "x", "extra": 1}, 400, "unknown_field"},
	} {
		status, p := s.call(t, http.MethodPost, "/api/accounts", s.operator, tc.body)
		require.Equal(t, tc.status, status, p)
		require.Equal(t, tc.code, p["code"])
		if tc.body["kind"] == "organization" {
			require.Contains(t, p["detail"], "/account/organizations", "the detail says where organisations are created")
		}
	}
	status, list := s.call(t, http.MethodGet, "/api/accounts", s.operator, nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "[]", jsonString(t, list["data"]))

	id, _ := s.registerAgent(t, "cases:read")
	status, p := s.call(t, http.MethodPost, "/api/accounts/"+id+"/attestation", s.operator, map[string]any{
		"model": "m", "provider": "p", "contact": "c", "acceptsResponsibility": false,
	})
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_account", p["code"])
	s.attest(t, id)
	status, p = s.call(t, http.MethodPost, "/api/accounts/"+id+"/attestation", s.operator, map[string]any{
		"model": "m2", "provider": "p", "contact": "c", "acceptsResponsibility": true,
	})
	require.Equal(t, http.StatusConflict, status)
	require.Equal(t, "account_already_verified", p["code"])
	_, a := s.call(t, http.MethodGet, "/api/accounts/"+id, s.operator, nil)
	require.Equal(t, "claims-model-7", a["attestation"].(map[string]any)["model"], "the first attestation stands")

	status, p = s.call(t, http.MethodPost, "/api/accounts/"+id+"/clients", s.operator, map[string]any{"scopes": []string{"cases:read", "cases:read"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_scope", p["code"])
}

func TestRevokingAClientRevokesTheTokensItHolds(t *testing.T) {
	s := newStack(t)
	id, cc := s.registerAgent(t, "cases:read")
	s.attest(t, id)
	tok, err := cc.Token(validated(t))
	require.NoError(t, err)

	status, _ := s.call(t, http.MethodDelete, "/api/accounts/"+id+"/clients/"+cc.ClientID, s.operator, nil)
	require.Equal(t, http.StatusNoContent, status)
	fresh := auth.NewStore(s.rdb, auth.DefaultStoreConfig())
	_, err = fresh.Authenticate(context.Background(), tok.AccessToken)
	require.ErrorIs(t, err, auth.ErrInvalidCredential, "the client's live token is revoked with it")

	_, err = cc.Token(validated(t))
	status, code := oauthError(t, err)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, "invalid_client", code)
}

func TestRevocationAndIntrospectionAnswerForTheClientsOwnTokens(t *testing.T) {
	s := newStack(t)
	id, cc := s.registerAgent(t, "cases:read")
	s.attest(t, id)
	_, other := s.registerAgent(t, "cases:read")
	tok, err := cc.Token(validated(t))
	require.NoError(t, err)

	introspect := func(c clientcredentials.Config, token string) map[string]any {
		form := url.Values{"token": {token}}
		req, _ := http.NewRequest(http.MethodPost, s.url+oauth.IntrospectionPath, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(c.ClientID, c.ClientSecret)
		resp, raw := apitest.Do(t, http.DefaultClient, req)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
		var out map[string]any
		require.NoError(t, json.Unmarshal(raw, &out))
		return out
	}
	revoke := func(c clientcredentials.Config, token string) (int, map[string]any) {
		form := url.Values{"token": {token}}
		req, _ := http.NewRequest(http.MethodPost, s.url+oauth.RevocationPath, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(c.ClientID, c.ClientSecret)
		resp, raw := apitest.Do(t, http.DefaultClient, req)
		var out map[string]any
		require.NoError(t, json.Unmarshal(raw, &out))
		return resp.StatusCode, out
	}

	got := introspect(cc, tok.AccessToken)
	require.Equal(t, true, got["active"])
	require.Equal(t, id, got["sub"])
	require.Equal(t, "cases:read", got["scope"])
	require.Equal(t, audience, got["aud"])
	require.Equal(t, false, introspect(other, tok.AccessToken)["active"], "another client learns nothing of the token")

	status, body := revoke(other, tok.AccessToken)
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "unauthorized_client", body["error"])
	_, err = s.creds.Authenticate(context.Background(), tok.AccessToken)
	require.NoError(t, err, "another client's revocation changed nothing")

	status, _ = revoke(cc, tok.AccessToken)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, false, introspect(cc, tok.AccessToken)["active"])
	status, _ = revoke(cc, tok.AccessToken)
	require.Equal(t, http.StatusOK, status, "revoking a revoked token is answered 200 (RFC 7009)")
}

func TestTheMetadataDescribesTheServer(t *testing.T) {
	s := newStack(t)
	req, err := http.NewRequest(http.MethodGet, s.url+oauth.MetadataPath, nil)
	require.NoError(t, err)
	resp, raw := apitest.Do(t, http.DefaultClient, req)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "public, max-age=300", resp.Header.Get("Cache-Control"))
	var md map[string]any
	require.NoError(t, json.Unmarshal(raw, &md))
	require.Equal(t, audience, md["issuer"])
	require.Equal(t, audience+oauth.TokenPath, md["token_endpoint"])
	require.Equal(t, []any{"client_credentials"}, md["grant_types_supported"])
	require.Equal(t, []any{"cases:read", "cases:act", "evidence:file", "readiness:buy", "executions:report"}, md["scopes_supported"])
	require.Equal(t, []any{}, md["response_types_supported"])
	require.Equal(t, []any{"S256"}, md["code_challenge_methods_supported"], "MCP clients refuse a server that does not name PKCE's S256")
}

func TestGrantsThatAreNotBuiltAreRefusedAsUnsupported(t *testing.T) {
	s := newStack(t)
	id, cc := s.registerAgent(t, "cases:read")
	s.attest(t, id)
	for _, grant := range []string{"authorization_code", "refresh_token", "password"} {
		form := url.Values{"grant_type": {grant}, "code": {"x"}, "redirect_uri": {"https://x.test"}, "refresh_token": {"x"}}
		req, _ := http.NewRequest(http.MethodPost, s.url+oauth.TokenPath, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(cc.ClientID, cc.ClientSecret)
		resp, raw := apitest.Do(t, http.DefaultClient, req)
		var out map[string]any
		require.NoError(t, json.Unmarshal(raw, &out))
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, grant)
		require.Contains(t, []any{"unsupported_grant_type", "unauthorized_client"}, out["error"], grant)
	}
}

// Every instant of the views is spelled as everywhere in the API: UTC,
// milliseconds, Z.
func TestTheViewsSpellInstantsInUTCWithMilliseconds(t *testing.T) {
	s := newStack(t)
	id, cc := s.registerAgent(t, "cases:read")
	s.attest(t, id)
	status, _ := s.call(t, http.MethodDelete, "/api/accounts/"+id+"/clients/"+cc.ClientID, s.operator, nil)
	require.Equal(t, http.StatusNoContent, status)

	status, a := s.call(t, http.MethodGet, "/api/accounts/"+id, s.operator, nil)
	require.Equal(t, http.StatusOK, status)
	client := a["clients"].([]any)[0].(map[string]any)
	instant := regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$`)
	for name, v := range map[string]any{
		"createdAt":              a["createdAt"],
		"attestation.attestedAt": a["attestation"].(map[string]any)["attestedAt"],
		"clients[0].createdAt":   client["createdAt"],
		"clients[0].revokedAt":   client["revokedAt"],
	} {
		require.Regexp(t, instant, v, name)
	}
}

// The OAuth endpoints refuse a malformed request in RFC 6749's format,
// with the statuses zitadel/oidc gives them (the document lists them), and
// take the client's secret in the form as well as in HTTP Basic.
func TestTheOAuthEndpointsAnswerMalformedRequestsInOAuthsFormat(t *testing.T) {
	s := newStack(t)
	id, cc := s.registerAgent(t, "cases:read")
	s.attest(t, id)
	tok, err := cc.Token(validated(t))
	require.NoError(t, err)

	post := cc
	post.AuthStyle = oauth2.AuthStyleInParams
	_, err = post.Token(validated(t))
	require.NoError(t, err, "client_secret_post")

	secretInForm := url.Values{"client_id": {cc.ClientID}, "client_secret": {cc.ClientSecret}}
	for _, tc := range []struct {
		name, path, contentType string
		basic                   bool
		form                    url.Values
		status                  int
		code                    string
	}{
		{"credentials in the query string", oauth.TokenPath + "?" + with(secretInForm, "grant_type", "client_credentials").Encode(), "application/x-www-form-urlencoded", false, url.Values{}, 400, "invalid_request"},
		{"a token in the query string", oauth.IntrospectionPath + "?token=" + tok.AccessToken, "application/x-www-form-urlencoded", true, url.Values{}, 400, "invalid_request"},
		{"no grant type", oauth.TokenPath, "application/x-www-form-urlencoded", true, url.Values{}, 400, "invalid_request"},
		{"a JSON body is no form", oauth.TokenPath, "application/json", true, nil, 400, "invalid_request"},
		{"an oversize form", oauth.TokenPath, "application/x-www-form-urlencoded", true, url.Values{"grant_type": {"client_credentials"}, "pad": {strings.Repeat("a", 1<<20)}}, 400, "invalid_request"},
		{"two authentication methods", oauth.TokenPath, "application/x-www-form-urlencoded", true, with(secretInForm, "grant_type", "client_credentials"), 400, "invalid_request"},
		{"a grant that is not built", oauth.TokenPath, "application/x-www-form-urlencoded", true, url.Values{"grant_type": {"password"}}, 400, "unsupported_grant_type"},
		{"two resources", oauth.TokenPath, "application/x-www-form-urlencoded", true, url.Values{"grant_type": {"client_credentials"}, "resource": {audience, audience + "/mcp"}}, 400, "invalid_target"},
		{"introspection without a secret", oauth.IntrospectionPath, "application/x-www-form-urlencoded", false, url.Values{"client_id": {cc.ClientID}, "token": {tok.AccessToken}}, 400, "invalid_client"},
		{"introspection without a token", oauth.IntrospectionPath, "application/x-www-form-urlencoded", false, secretInForm, 400, "invalid_request"},
		{"revocation with an unknown hint", oauth.RevocationPath, "application/x-www-form-urlencoded", true, url.Values{"token": {tok.AccessToken}, "token_type_hint": {"id_token"}}, 400, "unsupported_token_type"},
		{"revocation without a token", oauth.RevocationPath, "application/x-www-form-urlencoded", true, url.Values{}, 400, "invalid_request"},
		{"revocation with a wrong secret", oauth.RevocationPath, "application/x-www-form-urlencoded", false, url.Values{"client_id": {cc.ClientID}, "client_secret": {"x"}, "token": {tok.AccessToken}}, 401, "invalid_client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.form.Encode()
			if tc.form == nil {
				body = `{"grant_type":"client_credentials"}`
			}
			req, err := http.NewRequest(http.MethodPost, s.url+tc.path, strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", tc.contentType)
			if tc.basic {
				req.SetBasicAuth(cc.ClientID, cc.ClientSecret)
			}
			resp, raw := apitest.Do(t, http.DefaultClient, req)
			require.Equal(t, tc.status, resp.StatusCode, string(raw))
			require.Equal(t, "no-store", resp.Header.Get("Cache-Control"), "no cache keeps an OAuth answer")
			var e struct{ Error string }
			require.NoError(t, json.Unmarshal(raw, &e))
			require.Equal(t, tc.code, e.Error)
		})
	}
	_, err = s.creds.Authenticate(context.Background(), tok.AccessToken)
	require.NoError(t, err, "no refused request revoked the token")
}

func with(v url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = vs
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Add(kv[i], kv[i+1])
	}
	return out
}

// A client's secret is shown in the answer that registers it, and only
// there: an exact retry replays the client without it, and no key in
// Redis holds it.
func TestAClientSecretIsShownOnceAndNeverStored(t *testing.T) {
	s := newStack(t)
	status, a := s.call(t, http.MethodPost, "/api/accounts", s.operator, map[string]any{"kind": "autonomous_agent", "displayName": "Claims bot"})
	require.Equal(t, http.StatusCreated, status, a)
	add := func() (*http.Response, map[string]any) {
		req, err := http.NewRequest(http.MethodPost, s.url+"/api/accounts/"+a["id"].(string)+"/clients", strings.NewReader(`{"scopes":["cases:read"]}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+s.operator)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "add-client-once")
		resp, raw := apitest.Do(t, http.DefaultClient, req)
		var out struct{ Data map[string]any }
		require.NoError(t, json.Unmarshal(raw, &out), string(raw))
		return resp, out.Data
	}
	first, shown := add()
	require.Equal(t, http.StatusCreated, first.StatusCode)
	secret, _ := shown["clientSecret"].(string)
	require.True(t, strings.HasPrefix(secret, "pc_ocs_"))

	replay, again := add()
	require.Equal(t, http.StatusCreated, replay.StatusCode)
	require.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
	require.Equal(t, shown["clientId"], again["clientId"])
	require.NotContains(t, again, "clientSecret", "a replay never shows the secret again")

	ctx := context.Background()
	keys, err := s.rdb.Keys(ctx, "*").Result()
	require.NoError(t, err)
	for _, k := range keys {
		dump, err := s.rdb.Dump(ctx, k).Result()
		require.NoError(t, err)
		require.NotContains(t, dump, secret, "key %s holds the client's secret", k)
	}
}
