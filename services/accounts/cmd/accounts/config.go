package main

import (
	"errors"
	"fmt"
	"github.com/pcourt/pcourt/libs/auth"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/mail"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/accounts/internal/oauth"
)

// config is everything the accounts service reads from its environment.
type config struct {
	Service service.Config
	// OAuth is the authorization server's identity: PUBLIC_BASE_URL, the
	// API's public origin, is both its issuer and the audience of the
	// tokens it issues for the API (the value every service accepts
	// account tokens for). Its MCP member is the MCP server, when one is
	// deployed: MCP_RESOURCE_URL, its resource identifier (tokens for it
	// are issued by client credentials), and MCP_CLIENT_ID and
	// MCP_CLIENT_SECRET, the platform client with which it exchanges them
	// for the API's (RFC 8693). All three or none. Its Registration is
	// OAUTH_DYNAMIC_REGISTRATION (false by default): applications register
	// their own clients for the authorization code grant (RFC 7591), which
	// is on where people's pages are.
	OAuth oauth.Config
	// People is people's sign-up and sign-in pages under /account
	// (PEOPLE_*), served only where PEOPLE_TENANT names the tenant they
	// sign people up with.
	People peopleConfig
}

// peopleConfig is people's pages. The pages reach browsers at
// PUBLIC_BASE_URL, whose origin is the only one heard and whose host is
// the passkeys' relying party.
type peopleConfig struct {
	// Tenant and Environment are whom every person of the deployment
	// signs up and in with (PEOPLE_TENANT, PEOPLE_ENVIRONMENT: sandbox or
	// live, sandbox by default). No Tenant: no pages.
	Tenant      string
	Environment string
	// PublicBaseURL is PUBLIC_BASE_URL, where the pages are.
	PublicBaseURL string
	// SecureCookie marks the session cookie Secure (PEOPLE_SECURE_COOKIE;
	// by default unless PUBLIC_BASE_URL is http://).
	SecureCookie bool
	// SessionTTL is how long a sign-in lasts (PEOPLE_SESSION_TTL, 8 h).
	SessionTTL time.Duration
	// RPName is the name a browser shows for the passkeys (PEOPLE_RP_NAME).
	RPName string
	// Mail is the SMTP server the sign-in codes go through
	// (PEOPLE_SMTP_*, as libs/mail reads them); no host, no codes.
	Mail mail.Config
}

// Bounds of PEOPLE_SESSION_TTL.
const (
	minSessionTTL = time.Minute
	maxSessionTTL = auth.MaxAccountSessionLifetime
)

// Enabled reports whether the deployment serves people's pages.
func (c peopleConfig) Enabled() bool { return c.Tenant != "" }

// Validate reports every unusable setting of an enabled configuration.
func (c peopleConfig) Validate() error {
	if !c.Enabled() {
		return nil
	}
	var errs []error
	if strings.TrimSpace(c.Tenant) != c.Tenant || strings.ContainsAny(c.Tenant, "\x00\r\n") || len(c.Tenant) > 128 {
		errs = append(errs, fmt.Errorf("PEOPLE_TENANT=%q must be a tenant id without spaces around it", c.Tenant))
	}
	if c.Environment != "sandbox" && c.Environment != "live" {
		errs = append(errs, fmt.Errorf("PEOPLE_ENVIRONMENT=%q is not sandbox or live", c.Environment))
	}
	if _, err := webpage.NewSite(c.PublicBaseURL, c.SecureCookie); err != nil {
		errs = append(errs, fmt.Errorf("people's pages: %w", err))
	} else if u, _ := url.Parse(c.PublicBaseURL); net.ParseIP(u.Hostname()) != nil {
		errs = append(errs, fmt.Errorf("people's pages: PUBLIC_BASE_URL %q names an IP address, which no browser accepts as a passkey's relying party: use a domain name (localhost on this machine)", c.PublicBaseURL))
	}
	if c.SessionTTL < minSessionTTL || c.SessionTTL > maxSessionTTL {
		errs = append(errs, fmt.Errorf("PEOPLE_SESSION_TTL=%s is not within %s..%s", c.SessionTTL, minSessionTTL, maxSessionTTL))
	}
	if c.RPName == "" {
		errs = append(errs, errors.New("PEOPLE_RP_NAME must not be empty"))
	}
	return errors.Join(append(errs, c.Mail.Validate())...)
}

func loadConfig(getenv func(string) string) (config, error) {
	r := envconf.New(getenv)
	cfg := config{Service: service.ConfigFromEnv(r, ":8089")}
	publicBase, err := x402.ParsePublicBase(r.String("PUBLIC_BASE_URL", x402.DefaultPublicBaseURL))
	var errs []error
	if err != nil {
		errs = append(errs, fmt.Errorf("PUBLIC_BASE_URL: %w", err))
	}
	cfg.OAuth = oauth.Config{Issuer: publicBase.String(), APIAudience: publicBase.String(), MCP: oauth.MCP{
		Resource: r.String("MCP_RESOURCE_URL", ""), ClientID: r.String("MCP_CLIENT_ID", ""), ClientSecret: r.Secret("MCP_CLIENT_SECRET"),
	}, Registration: r.Bool("OAUTH_DYNAMIC_REGISTRATION", false)}
	mailDefaults := mail.DefaultConfig()
	mailDefaults.From, mailDefaults.HelloName = "accounts@pcourt.dev", "accounts"
	cfg.People = peopleConfig{
		Tenant: r.String("PEOPLE_TENANT", ""), Environment: r.String("PEOPLE_ENVIRONMENT", "sandbox"),
		PublicBaseURL: publicBase.String(),
		SecureCookie:  r.Bool("PEOPLE_SECURE_COOKIE", !strings.HasPrefix(strings.ToLower(publicBase.String()), "http://")),
		SessionTTL:    r.Duration("PEOPLE_SESSION_TTL", 8*time.Hour), RPName: r.String("PEOPLE_RP_NAME", "pcourt"),
		Mail: mail.FromEnv(r, "PEOPLE_SMTP_", mailDefaults),
	}
	if err := errors.Join(append(errs, r.Err(), cfg.Service.Validate(), cfg.OAuth.Validate(), cfg.People.Validate())...); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}
