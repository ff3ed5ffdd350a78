package main

import (
	"errors"
	"fmt"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/service"
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
	// for the API's (RFC 8693). All three or none.
	OAuth oauth.Config
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
	}}
	if err := errors.Join(append(errs, r.Err(), cfg.Service.Validate(), cfg.OAuth.Validate())...); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}
