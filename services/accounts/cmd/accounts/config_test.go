package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestThePublicBaseURLIsTheIssuerAndTheAudience(t *testing.T) {
	cfg, err := loadConfig(env(map[string]string{"PUBLIC_BASE_URL": "https://api.pcourt.test", "POD_NAME": "p"}))
	require.NoError(t, err)
	require.Equal(t, "https://api.pcourt.test", cfg.OAuth.Issuer)
	require.Equal(t, "https://api.pcourt.test", cfg.OAuth.APIAudience)
	require.Equal(t, ":8089", cfg.Service.HTTP.Addr)
}

func TestAnUnusablePublicBaseURLStopsTheService(t *testing.T) {
	_, err := loadConfig(env(map[string]string{"PUBLIC_BASE_URL": "ftp://x", "POD_NAME": "p"}))
	require.ErrorContains(t, err, "PUBLIC_BASE_URL")
}

func TestAnMCPServerIsConfiguredWholeOrNotAtAll(t *testing.T) {
	base := map[string]string{"PUBLIC_BASE_URL": "https://api.pcourt.test", "POD_NAME": "p"}
	with := func(kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	secret := "pc_ocs_" + strings.Repeat("s", 40)

	cfg, err := loadConfig(env(base))
	require.NoError(t, err)
	require.Empty(t, cfg.OAuth.MCP.Resource, "no MCP server deployed")

	cfg, err = loadConfig(env(with("MCP_RESOURCE_URL", "https://api.pcourt.test/mcp", "MCP_CLIENT_ID", "ocl_mcp", "MCP_CLIENT_SECRET", secret)))
	require.NoError(t, err)
	require.Equal(t, "https://api.pcourt.test/mcp", cfg.OAuth.MCP.Resource)
	require.Equal(t, "ocl_mcp", cfg.OAuth.MCP.ClientID)
	require.Equal(t, secret, cfg.OAuth.MCP.ClientSecret.Reveal())
	logged, err := json.Marshal(cfg)
	require.NoError(t, err)
	require.NotContains(t, string(logged), secret, "the configuration logged at start never shows the secret")

	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"a resource alone":            {with("MCP_RESOURCE_URL", "https://api.pcourt.test/mcp"), "set together"},
		"no secret":                   {with("MCP_RESOURCE_URL", "https://api.pcourt.test/mcp", "MCP_CLIENT_ID", "ocl_mcp"), "set together"},
		"a client without a resource": {with("MCP_CLIENT_ID", "ocl_mcp", "MCP_CLIENT_SECRET", secret), "set together"},
		"a relative resource":         {with("MCP_RESOURCE_URL", "/mcp", "MCP_CLIENT_ID", "ocl_mcp", "MCP_CLIENT_SECRET", secret), "MCP_RESOURCE_URL"},
		"a resource with a query":     {with("MCP_RESOURCE_URL", "https://api.pcourt.test/mcp?x=1", "MCP_CLIENT_ID", "ocl_mcp", "MCP_CLIENT_SECRET", secret), "MCP_RESOURCE_URL"},
		"the API's own audience":      {with("MCP_RESOURCE_URL", "https://api.pcourt.test", "MCP_CLIENT_ID", "ocl_mcp", "MCP_CLIENT_SECRET", secret), "the API's audience"},
		"an agent client's id":        {with("MCP_RESOURCE_URL", "https://api.pcourt.test/mcp", "MCP_CLIENT_ID", "ocl_ABCDEFGHIJKLMNOPQRSTUVWXYZ", "MCP_CLIENT_SECRET", secret), "MCP_CLIENT_ID"},
		"an id with a slash":          {with("MCP_RESOURCE_URL", "https://api.pcourt.test/mcp", "MCP_CLIENT_ID", "mcp/1", "MCP_CLIENT_SECRET", secret), "MCP_CLIENT_ID"},
		"a short secret":              {with("MCP_RESOURCE_URL", "https://api.pcourt.test/mcp", "MCP_CLIENT_ID", "ocl_mcp", "MCP_CLIENT_SECRET", "short"), "MCP_CLIENT_SECRET"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadConfig(env(tc.env))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// People's pages are off until PEOPLE_TENANT names whom they sign people
// up with; on, the public base URL must be a domain a browser takes as a
// passkey's relying party, and the codes' SMTP settings are libs/mail's
// under PEOPLE_SMTP_.
func TestPeoplesPagesServeTheConfiguredTenant(t *testing.T) {
	cfg, err := loadConfig(env(map[string]string{"PUBLIC_BASE_URL": "https://api.pcourt.test", "POD_NAME": "p"}))
	require.NoError(t, err)
	require.False(t, cfg.People.Enabled(), "no tenant, no pages")

	on := map[string]string{"PUBLIC_BASE_URL": "https://api.pcourt.test", "POD_NAME": "p", "PEOPLE_TENANT": "tenant-people",
		"PEOPLE_SMTP_HOST": "smtp.pcourt.test", "PEOPLE_SMTP_PASSWORD": "smtp-secret", "PEOPLE_SMTP_USERNAME": "accounts"}
	cfg, err = loadConfig(env(on))
	require.NoError(t, err)
	require.True(t, cfg.People.Enabled())
	require.Equal(t, "tenant-people", cfg.People.Tenant)
	require.Equal(t, "sandbox", cfg.People.Environment)
	require.True(t, cfg.People.SecureCookie, "https: the cookie is Secure")
	require.Equal(t, 8*time.Hour, cfg.People.SessionTTL)
	require.Equal(t, "smtp.pcourt.test", cfg.People.Mail.Host)
	require.Equal(t, "accounts@pcourt.dev", cfg.People.Mail.From)
	logged, err := json.Marshal(cfg)
	require.NoError(t, err)
	require.NotContains(t, string(logged), "smtp-secret", "the SMTP password never shows in the logged configuration")

	cfg, err = loadConfig(env(map[string]string{"PUBLIC_BASE_URL": "http://localhost:8080", "POD_NAME": "p", "PEOPLE_TENANT": "tenant-dev"}))
	require.NoError(t, err)
	require.False(t, cfg.People.SecureCookie, "plain http on this machine: no Secure cookie")
	require.False(t, cfg.People.Mail.Enabled())

	with := func(kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range on {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"an IP address as the relying party": {with("PUBLIC_BASE_URL", "http://127.0.0.1:8080"), "IP address"},
		"another environment":                {with("PEOPLE_ENVIRONMENT", "staging"), "PEOPLE_ENVIRONMENT"},
		"a tenant with spaces":               {with("PEOPLE_TENANT", " tenant"), "PEOPLE_TENANT"},
		"a session of two days":              {with("PEOPLE_SESSION_TTL", "48h"), "PEOPLE_SESSION_TTL"},
		"an unusable SMTP mode":              {with("PEOPLE_SMTP_STARTTLS", "maybe"), "PEOPLE_SMTP_STARTTLS"},
		"an https page with an open cookie":  {with("PEOPLE_SECURE_COOKIE", "false"), "Secure"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadConfig(env(tc.env))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// Dynamic client registration is off unless the operator allows it.
func TestDynamicRegistrationIsOffUnlessAllowed(t *testing.T) {
	env := map[string]string{"PUBLIC_BASE_URL": "https://api.pcourt.test"}
	cfg, err := loadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.False(t, cfg.OAuth.Registration)
	env["OAUTH_DYNAMIC_REGISTRATION"] = "true"
	cfg, err = loadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.True(t, cfg.OAuth.Registration)
}
