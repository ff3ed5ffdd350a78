package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/services/accounts/internal/oauth"
)

func TestAPersonApprovesAnApplicationWhichGetsTokensByCodeWithPKCEAndRefreshesThem(t *testing.T) {
	s := newCodeStack(t, true)
	b, accountID := s.person(t, "Ada")
	cfg := s.publicApp(t, "cases:read", "cases:act")

	verifier := oauth2.GenerateVerifier()
	consent := b.authorize(t, cfg.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("case_id", "case_123")))
	require.Equal(t, http.StatusOK, consent.status, consent.body)
	require.Contains(t, consent.body, `id="client-name">Case Helper<`)
	require.Contains(t, consent.body, `id="client-unverified"`)
	require.Contains(t, consent.body, "read the cases your account takes part in")
	require.Contains(t, consent.body, "act on your side of those cases")
	require.Contains(t, consent.body, "only case <code>case_123</code>")
	require.Contains(t, consent.body, "10 minutes at a time")
	require.Contains(t, consent.header.Get("Content-Security-Policy"), "form-action 'self' http://127.0.0.1:9", "the decision may redirect to the client")

	back := b.decide(t, consent, "approve")
	require.Equal(t, "http", back.Scheme)
	require.Equal(t, "127.0.0.1:9", back.Host)
	require.Equal(t, "state-1", back.Query().Get("state"))
	require.Equal(t, audience, back.Query().Get("iss"), "RFC 9207")

	tok, err := cfg.Exchange(validated(t), back.Query().Get("code"), oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(tok.AccessToken, "pc_oat_sbx_"))
	require.True(t, strings.HasPrefix(tok.RefreshToken, "pc_ort_"))
	require.Equal(t, "cases:read cases:act", tok.Extra("scope"))

	cred, err := s.creds.Authenticate(context.Background(), tok.AccessToken)
	require.NoError(t, err)
	require.Equal(t, accountID, cred.AccountID)
	require.Equal(t, cfg.ClientID, cred.ClientID)
	require.Equal(t, "case_123", cred.CaseID, "the grant's case binds its tokens")
	require.Equal(t, audience, cred.Audience)
	require.Equal(t, "tenant-people", cred.Tenant)
	require.Empty(t, cred.Role)
	require.Equal(t, http.StatusNoContent, protected(t, s.creds)(tok.AccessToken), "every service's middleware accepts it")

	// The refresh: x/oauth2 refreshes an expired token with the refresh token.
	tok.Expiry = time.Now().Add(-time.Minute)
	next, err := cfg.TokenSource(validated(t), tok).Token()
	require.NoError(t, err)
	require.NotEqual(t, tok.AccessToken, next.AccessToken)
	require.NotEqual(t, tok.RefreshToken, next.RefreshToken, "the refresh token rotates")
	require.True(t, s.live(t, next.AccessToken))
}

func TestTheSignInComesBackToTheConsentPage(t *testing.T) {
	s := newCodeStack(t, true)
	_, _ = s.person(t, "Grace") // an account to sign in to
	cfg := s.publicApp(t, "cases:read")
	b := s.browser(t)
	u, _ := url.Parse(cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	sent := b.get(t, u.RequestURI())
	require.Equal(t, http.StatusSeeOther, sent.status)
	consent := b.get(t, sent.location)
	require.Equal(t, http.StatusSeeOther, consent.status, "no session: to sign in first")
	signin, err := url.Parse(consent.location)
	require.NoError(t, err)
	require.Equal(t, "/account/signin", signin.Path)
	require.Equal(t, sent.location, signin.Query().Get("next"))
	page := b.get(t, consent.location)
	require.Contains(t, page.body, `data-finish="/account/signin?next=`+url.QueryEscape(sent.location), "the passkey's sign-in comes back")
}

func TestANextThatLeavesTheAccountPagesGoesToTheAccount(t *testing.T) {
	s := newCodeStack(t, true)
	b, _ := s.person(t, "Alan")
	for _, next := range []string{"https://evil.test/", "//evil.test/account/", `/\evil.test`, "/account/..//evil.test", "/account/../oauth/x", "javascript:alert(1)", "/elsewhere"} {
		p := b.get(t, "/account/signin?"+url.Values{"next": {next}}.Encode())
		require.Equal(t, http.StatusSeeOther, p.status, next)
		require.Equal(t, "/account/", p.location, "signed in, %q is not followed", next)
	}
	p := b.get(t, "/account/signin?"+url.Values{"next": {"/account/consent?request=oaz_X"}}.Encode())
	require.Equal(t, "/account/consent?request=oaz_X", p.location, "a path of the pages is")
}

func TestDenyingSendsAccessDeniedAndGrantsNothing(t *testing.T) {
	s := newCodeStack(t, true)
	b, _ := s.person(t, "Ada")
	cfg := s.publicApp(t, "cases:read")
	consent := b.authorize(t, cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	back := b.decide(t, consent, "deny")
	require.Equal(t, "access_denied", back.Query().Get("error"))
	require.Equal(t, "st", back.Query().Get("state"))
	require.Empty(t, back.Query().Get("code"))
	again := b.form(t, "/account/consent", url.Values{"csrf": {consent.csrf(t)}, "request": {requestOf(t, consent)}, "decision": {"approve"}})
	require.Equal(t, http.StatusNotFound, again.status, "a request is decided once")
}

// authorizeError sends a browser to the authorization endpoint with the
// query and answers where it went.
func authorizeRefusal(t *testing.T, s *codeStack, q url.Values) page {
	t.Helper()
	b := s.browser(t)
	return b.get(t, oauth.AuthorizationPath+"?"+q.Encode())
}

func goodQuery(clientID string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {callback}, "scope": {"cases:read"},
		"state": {"st"}, "code_challenge": {oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())}, "code_challenge_method": {"S256"}}
}

func TestAnUnknownClientOrAnUnregisteredRedirectURIIsShownNeverRedirected(t *testing.T) {
	s := newCodeStack(t, true)
	cfg := s.publicApp(t, "cases:read")
	for name, change := range map[string]func(url.Values){
		"no client":              func(q url.Values) { q.Del("client_id") },
		"unknown client":         func(q url.Values) { q.Set("client_id", "oapp_AAAAAAAAAAAAAAAAAAAAAAAAAA") },
		"an agent's client":      func(q url.Values) { q.Set("client_id", "ocl_AAAAAAAAAAAAAAAAAAAAAAAAAA") },
		"no redirect_uri":        func(q url.Values) { q.Del("redirect_uri") },
		"unregistered":           func(q url.Values) { q.Set("redirect_uri", "https://evil.test/callback") },
		"another port":           func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:10/callback") },
		"a registered one, more": func(q url.Values) { q.Set("redirect_uri", callback+"?x=1") },
	} {
		q := goodQuery(cfg.ClientID)
		change(q)
		p := authorizeRefusal(t, s, q)
		require.Equal(t, http.StatusBadRequest, p.status, name)
		require.Empty(t, p.location, "%s: never redirected", name)
		require.Contains(t, p.body, `data-page="authorizeerror"`, name)
	}
}

func TestRefusalsAfterTheRedirectURIGoBackToTheClient(t *testing.T) {
	s := newCodeStack(t, true)
	cfg := s.publicApp(t, "cases:read")
	for name, c := range map[string]struct {
		change func(url.Values)
		error  string
	}{
		"no PKCE":             {func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") }, "invalid_request"},
		"plain PKCE":          {func(q url.Values) { q.Set("code_challenge_method", "plain") }, "invalid_request"},
		"no method":           {func(q url.Values) { q.Del("code_challenge_method") }, "invalid_request"},
		"a token response":    {func(q url.Values) { q.Set("response_type", "token") }, "unsupported_response_type"},
		"no scope":            {func(q url.Values) { q.Del("scope") }, "invalid_scope"},
		"an unknown scope":    {func(q url.Values) { q.Set("scope", "cases:read admin") }, "invalid_scope"},
		"another resource":    {func(q url.Values) { q.Set("resource", "https://evil.test") }, "invalid_target"},
		"an unusable case id": {func(q url.Values) { q.Set("case_id", "a b") }, "invalid_request"},
		"prompt none":         {func(q url.Values) { q.Set("prompt", "none") }, "interaction_required"},
	} {
		q := goodQuery(cfg.ClientID)
		c.change(q)
		p := authorizeRefusal(t, s, q)
		require.Equal(t, http.StatusFound, p.status, name)
		back, err := url.Parse(p.location)
		require.NoError(t, err)
		require.Equal(t, "127.0.0.1:9", back.Host, name)
		require.Equal(t, c.error, back.Query().Get("error"), name)
		require.Equal(t, "st", back.Query().Get("state"), name)
		require.Equal(t, audience, back.Query().Get("iss"), name)
	}
}

func TestACodeIsRedeemedOnlyWithItsVerifierByItsClient(t *testing.T) {
	s := newCodeStack(t, true)
	b, _ := s.person(t, "Ada")
	cfg := s.publicApp(t, "cases:read")
	other := s.publicApp(t, "cases:read")
	verifier := oauth2.GenerateVerifier()
	code := approvedCode(t, b, cfg, verifier)

	_, err := cfg.Exchange(validated(t), code, oauth2.VerifierOption(oauth2.GenerateVerifier()))
	_, e := oauthError(t, err)
	require.Equal(t, "invalid_grant", e, "a wrong verifier")
	_, err = cfg.Exchange(validated(t), code)
	_, e = oauthError(t, err)
	require.Equal(t, "invalid_request", e, "no verifier")
	_, err = other.Exchange(validated(t), code, oauth2.VerifierOption(verifier))
	_, e = oauthError(t, err)
	require.Equal(t, "invalid_grant", e, "another client's code")
	elsewhere := *cfg
	elsewhere.RedirectURL = "http://127.0.0.1:9/other"
	_, err = elsewhere.Exchange(validated(t), code, oauth2.VerifierOption(verifier))
	_, e = oauthError(t, err)
	require.Equal(t, "invalid_grant", e, "another redirect_uri")

	tok, err := cfg.Exchange(validated(t), code, oauth2.VerifierOption(verifier))
	require.NoError(t, err, "the refusals spent nothing")
	require.True(t, s.live(t, tok.AccessToken))
}

func TestACodeUsedTwiceRevokesEveryTokenIssuedFromIt(t *testing.T) {
	s := newCodeStack(t, true)
	b, _ := s.person(t, "Ada")
	cfg := s.publicApp(t, "cases:read")
	verifier := oauth2.GenerateVerifier()
	code := approvedCode(t, b, cfg, verifier)
	tok, err := cfg.Exchange(validated(t), code, oauth2.VerifierOption(verifier))
	require.NoError(t, err)

	_, err = cfg.Exchange(validated(t), code, oauth2.VerifierOption(verifier))
	_, e := oauthError(t, err)
	require.Equal(t, "invalid_grant", e)
	require.False(t, s.live(t, tok.AccessToken), "the access token it issued died")
	tok.Expiry = time.Now().Add(-time.Minute)
	_, err = cfg.TokenSource(validated(t), tok).Token()
	_, e = oauthError(t, err)
	require.Equal(t, "invalid_grant", e, "and its refresh token")
}

func TestACodeExpiresAfterAMinute(t *testing.T) {
	s := newCodeStack(t, true)
	b, _ := s.person(t, "Ada")
	cfg := s.publicApp(t, "cases:read")
	verifier := oauth2.GenerateVerifier()
	code := approvedCode(t, b, cfg, verifier)
	s.clock.advance(61 * time.Second)
	_, err := cfg.Exchange(validated(t), code, oauth2.VerifierOption(verifier))
	_, e := oauthError(t, err)
	require.Equal(t, "invalid_grant", e)
}

func TestARefreshTokenReusedAfterItsRotationRevokesTheFamily(t *testing.T) {
	s := newCodeStack(t, true)
	b, _ := s.person(t, "Ada")
	cfg := s.publicApp(t, "cases:read")
	verifier := oauth2.GenerateVerifier()
	first, err := cfg.Exchange(validated(t), approvedCode(t, b, cfg, verifier), oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	first.Expiry = time.Now().Add(-time.Minute)
	second, err := cfg.TokenSource(validated(t), first).Token()
	require.NoError(t, err)
	require.True(t, s.live(t, second.AccessToken))

	_, err = cfg.TokenSource(validated(t), first).Token() // the rotated refresh token, again
	_, e := oauthError(t, err)
	require.Equal(t, "invalid_grant", e)
	require.False(t, s.live(t, first.AccessToken), "every access token of the family died")
	require.False(t, s.live(t, second.AccessToken))
	second.Expiry = time.Now().Add(-time.Minute)
	_, err = cfg.TokenSource(validated(t), second).Token()
	_, e = oauthError(t, err)
	require.Equal(t, "invalid_grant", e, "the current refresh token too")
}

// refresh posts a refresh grant by hand, for what x/oauth2's token source
// does not send (a scope).
func (s *codeStack) refresh(t *testing.T, clientID, refreshToken, scope string) (int, map[string]any) {
	t.Helper()
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refreshToken}, "client_id": {clientID}, "scope": {scope}}
	req, _ := http.NewRequest(http.MethodPost, s.url+oauth.TokenPath, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, raw := apitest.Do(t, http.DefaultClient, req)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out))
	return resp.StatusCode, out
}

func TestARefreshNarrowsTheScopesAndNeverWidensThem(t *testing.T) {
	s := newCodeStack(t, true)
	b, _ := s.person(t, "Ada")
	cfg := s.publicApp(t, "cases:read", "cases:act")
	verifier := oauth2.GenerateVerifier()
	tok, err := cfg.Exchange(validated(t), approvedCode(t, b, cfg, verifier), oauth2.VerifierOption(verifier))
	require.NoError(t, err)

	status, out := s.refresh(t, cfg.ClientID, tok.RefreshToken, "cases:read evidence:file")
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_scope", out["error"], "a scope the person did not grant")

	status, out = s.refresh(t, cfg.ClientID, tok.RefreshToken, "cases:read")
	require.Equal(t, http.StatusOK, status, out)
	require.Equal(t, "cases:read", out["scope"])
	status, out = s.refresh(t, cfg.ClientID, out["refresh_token"].(string), " ")
	require.Equal(t, http.StatusOK, status, out)
	require.Equal(t, "cases:read cases:act", out["scope"], "the family keeps the grant's scopes")
}

func TestRevokingARefreshTokenRevokesItsFamilyAndIntrospectionSeesIt(t *testing.T) {
	s := newCodeStack(t, true)
	b, _ := s.person(t, "Ada")
	// A confidential client: introspection (RFC 7662) wants an authenticated one.
	status, c := s.register(t, map[string]any{"client_name": "Server App", "redirect_uris": []string{callback}})
	require.Equal(t, http.StatusCreated, status, c)
	cfg := &oauth2.Config{ClientID: c["client_id"].(string), ClientSecret: c["client_secret"].(string), RedirectURL: callback, Scopes: []string{"cases:read"},
		Endpoint: oauth2.Endpoint{AuthURL: s.url + oauth.AuthorizationPath, TokenURL: s.url + oauth.TokenPath, AuthStyle: oauth2.AuthStyleInHeader}}
	verifier := oauth2.GenerateVerifier()
	tok, err := cfg.Exchange(validated(t), approvedCode(t, b, cfg, verifier), oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	post := func(path string, form url.Values) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(cfg.ClientID, cfg.ClientSecret)
		resp, raw := apitest.Do(t, http.DefaultClient, req)
		var out map[string]any
		require.NoError(t, json.Unmarshal(raw, &out))
		return resp.StatusCode, out
	}
	status, out := post(oauth.IntrospectionPath, url.Values{"token": {tok.RefreshToken}})
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, true, out["active"])
	require.Equal(t, "refresh_token", out["token_type"])

	other := s.publicApp(t, "cases:read")
	req, _ := http.NewRequest(http.MethodPost, s.url+oauth.RevocationPath, strings.NewReader(url.Values{"token": {tok.RefreshToken}, "client_id": {other.ClientID}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, _ := apitest.Do(t, http.DefaultClient, req)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "another client's refresh token")
	require.True(t, s.live(t, tok.AccessToken))

	status, _ = post(oauth.RevocationPath, url.Values{"token": {tok.RefreshToken}, "token_type_hint": {"refresh_token"}})
	require.Equal(t, http.StatusOK, status)
	require.False(t, s.live(t, tok.AccessToken), "the family's access token died with it")
	status, out = post(oauth.IntrospectionPath, url.Values{"token": {tok.RefreshToken}})
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, map[string]any{"active": false}, out)
}

func TestAConsentPostWithoutTheCSRFTokenOrFromAnotherOriginDecidesNothing(t *testing.T) {
	s := newCodeStack(t, true)
	b, _ := s.person(t, "Ada")
	cfg := s.publicApp(t, "cases:read")
	consent := b.authorize(t, cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	request := requestOf(t, consent)

	p := b.form(t, "/account/consent", url.Values{"request": {request}, "decision": {"approve"}})
	require.Equal(t, http.StatusForbidden, p.status, "no CSRF token")
	require.Contains(t, p.body, `data-refusal="csrf_mismatch"`)
	b.origin = "https://evil.test"
	p = b.form(t, "/account/consent", url.Values{"csrf": {consent.csrf(t)}, "request": {request}, "decision": {"approve"}})
	require.Equal(t, http.StatusForbidden, p.status, "another origin")
	require.Contains(t, p.body, `data-refusal="cross_origin"`)

	b.origin = s.origin
	back := b.decide(t, consent, "approve")
	require.NotEmpty(t, back.Query().Get("code"), "the request was still waiting")
}

func TestAnotherPersonsSessionCannotDecideWithTheFirstsCSRFToken(t *testing.T) {
	s := newCodeStack(t, true)
	ada, _ := s.person(t, "Ada")
	mallory, _ := s.person(t, "Mallory")
	cfg := s.publicApp(t, "cases:read")
	consent := ada.authorize(t, cfg.AuthCodeURL("st", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	p := mallory.form(t, "/account/consent", url.Values{"csrf": {consent.csrf(t)}, "request": {requestOf(t, consent)}, "decision": {"approve"}})
	require.Equal(t, http.StatusForbidden, p.status)
}

func TestRegistrationIsOffUnlessTheOperatorAllowsIt(t *testing.T) {
	s := newCodeStack(t, false)
	status, out := s.register(t, map[string]any{"client_name": "X", "redirect_uris": []string{callback}})
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "invalid_request", out["error"])
	md := metadataOf(t, s.url)
	require.NotContains(t, md, "registration_endpoint")
	require.Equal(t, audience+oauth.AuthorizationPath, md["authorization_endpoint"])
}

func TestRegistrationRefusesBadMetadataInRFC7591sFormat(t *testing.T) {
	s := newCodeStack(t, true)
	for name, c := range map[string]struct {
		metadata map[string]any
		error    string
	}{
		"no redirect URI":        {map[string]any{"client_name": "X"}, "invalid_redirect_uri"},
		"plain http elsewhere":   {map[string]any{"client_name": "X", "redirect_uris": []string{"http://app.test/cb"}}, "invalid_redirect_uri"},
		"localhost by name":      {map[string]any{"client_name": "X", "redirect_uris": []string{"http://localhost:8000/cb"}}, "invalid_redirect_uri"},
		"a fragment":             {map[string]any{"client_name": "X", "redirect_uris": []string{"https://app.test/cb#x"}}, "invalid_redirect_uri"},
		"a custom scheme":        {map[string]any{"client_name": "X", "redirect_uris": []string{"com.app:/cb"}}, "invalid_redirect_uri"},
		"no name":                {map[string]any{"redirect_uris": []string{callback}}, "invalid_client_metadata"},
		"client credentials":     {map[string]any{"client_name": "X", "redirect_uris": []string{callback}, "grant_types": []string{"client_credentials"}}, "invalid_client_metadata"},
		"an unknown auth method": {map[string]any{"client_name": "X", "redirect_uris": []string{callback}, "token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"},
		"a scope that is none":   {map[string]any{"client_name": "X", "redirect_uris": []string{callback}, "scope": "admin"}, "invalid_client_metadata"},
		"a wrong type":           {map[string]any{"client_name": 7, "redirect_uris": []string{callback}}, "invalid_client_metadata"},
		"an implicit response":   {map[string]any{"client_name": "X", "redirect_uris": []string{callback}, "response_types": []string{"token"}}, "invalid_client_metadata"},
	} {
		status, out := s.register(t, c.metadata)
		require.Equal(t, http.StatusBadRequest, status, name)
		require.Equal(t, c.error, out["error"], name)
		require.NotEmpty(t, out["error_description"], name)
	}
}

func TestRegistrationIsRateLimitedPerAddress(t *testing.T) {
	s := newCodeStack(t, true)
	for range oauth.RegistrationRate.Burst {
		status, out := s.register(t, map[string]any{"client_name": "X", "redirect_uris": []string{callback}, "token_endpoint_auth_method": "none"})
		require.Equal(t, http.StatusCreated, status, out)
	}
	status, out := s.register(t, map[string]any{"client_name": "X", "redirect_uris": []string{callback}})
	require.Equal(t, http.StatusTooManyRequests, status)
	require.Equal(t, "temporarily_unavailable", out["error"])
}

func TestAConfidentialClientAuthenticatesWithItsSecretAndNeverByClientCredentials(t *testing.T) {
	s := newCodeStack(t, true)
	b, _ := s.person(t, "Ada")
	status, c := s.register(t, map[string]any{"client_name": "Server App", "redirect_uris": []string{"https://app.test/cb", callback}, "scope": "cases:read"})
	require.Equal(t, http.StatusCreated, status, c)
	require.Equal(t, "client_secret_basic", c["token_endpoint_auth_method"])
	require.Equal(t, []any{"authorization_code", "refresh_token"}, c["grant_types"])
	secret := c["client_secret"].(string)
	cfg := &oauth2.Config{ClientID: c["client_id"].(string), ClientSecret: secret, RedirectURL: callback, Scopes: []string{"cases:read"},
		Endpoint: oauth2.Endpoint{AuthURL: s.url + oauth.AuthorizationPath, TokenURL: s.url + oauth.TokenPath, AuthStyle: oauth2.AuthStyleInHeader}}

	form := url.Values{"grant_type": {"client_credentials"}}
	req, _ := http.NewRequest(http.MethodPost, s.url+oauth.TokenPath, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(cfg.ClientID, secret)
	resp, raw := apitest.Do(t, http.DefaultClient, req)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, string(raw), "unauthorized_client", "an application's client never gets a token by client credentials")

	verifier := oauth2.GenerateVerifier()
	code := approvedCode(t, b, cfg, verifier)
	wrong := *cfg
	wrong.ClientSecret = "pc_ocs_wrong"
	_, err := wrong.Exchange(validated(t), code, oauth2.VerifierOption(verifier))
	st, e := oauthError(t, err)
	require.Equal(t, http.StatusUnauthorized, st)
	require.Equal(t, "invalid_client", e)
	tok, err := cfg.Exchange(validated(t), code, oauth2.VerifierOption(verifier))
	require.NoError(t, err)
	require.True(t, s.live(t, tok.AccessToken))
}

func metadataOf(t *testing.T, base string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+oauth.MetadataPath, nil)
	_, raw := apitest.Do(t, http.DefaultClient, req)
	var md map[string]any
	require.NoError(t, json.Unmarshal(raw, &md))
	return md
}

func TestTheMetadataDescribesTheCodeGrant(t *testing.T) {
	s := newCodeStack(t, true)
	md := metadataOf(t, s.url)
	require.Equal(t, audience+oauth.AuthorizationPath, md["authorization_endpoint"])
	require.Equal(t, audience+oauth.RegistrationPath, md["registration_endpoint"])
	require.Equal(t, []any{"code"}, md["response_types_supported"])
	require.Equal(t, []any{"client_credentials", "authorization_code", "refresh_token"}, md["grant_types_supported"])
	require.Equal(t, []any{"S256"}, md["code_challenge_methods_supported"])
	require.Contains(t, md["token_endpoint_auth_methods_supported"], "none")
	require.Equal(t, true, md["authorization_response_iss_parameter_supported"])
}

var _ = auth.ScopeCasesRead
