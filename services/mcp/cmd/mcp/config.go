package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/mcp/internal/exchange"
	"github.com/pcourt/pcourt/services/mcp/internal/httpapi"
	"github.com/pcourt/pcourt/services/mcp/internal/resources"
)

// config is everything the MCP server reads from its environment.
type config struct {
	Service service.Config
	// HTTP is the server's identity, from PUBLIC_BASE_URL (the edge's
	// public URL, which is also the accounts service's issuer): its
	// resource identifier is that URL's /mcp.
	HTTP httpapi.Config
	// APIURL is where the tools call the public API and the token
	// endpoint: the edge (MCP_API_URL), as an account's own client would.
	APIURL *url.URL
	// Exchange is the token exchange: the token endpoint behind APIURL,
	// the server's own client (MCP_CLIENT_ID, MCP_CLIENT_SECRET, which the
	// accounts service is given too) and the API's resource identifier.
	Exchange exchange.Config
	// Subscriptions bounds the listen streams this replica holds
	// (MCP_MAX_STREAMS, MCP_MAX_SUBSCRIPTIONS_PER_ACCOUNT,
	// MCP_STREAM_LIFETIME, MCP_NOTIFICATION_WRITE_TIMEOUT).
	Subscriptions resources.Config
	// EventsGroup is this replica's own consumer group on the case events
	// (MCP_EVENTS_GROUP, default pcourt-mcp-<POD_NAME>): every replica
	// reads every event, for the streams it holds.
	EventsGroup string
}

func loadConfig(getenv func(string) string) (config, error) {
	r := envconf.New(getenv)
	cfg := config{Service: service.ConfigFromEnv(r, ":8090")}
	var errs []error
	publicBase, err := x402.ParsePublicBase(r.String("PUBLIC_BASE_URL", x402.DefaultPublicBaseURL))
	if err != nil {
		errs = append(errs, fmt.Errorf("PUBLIC_BASE_URL: %w", err))
	}
	public := publicBase.String()
	cfg.HTTP = httpapi.Config{
		Resource:            public + httpapi.Path,
		MetadataURL:         public + httpapi.MetadataPath,
		AuthorizationServer: public,
	}
	rawAPI := strings.TrimSuffix(r.String("MCP_API_URL", x402.DefaultPublicBaseURL), "/")
	apiURL, err := url.Parse(rawAPI)
	if err != nil || (apiURL.Scheme != "http" && apiURL.Scheme != "https") || apiURL.Host == "" || apiURL.User != nil || apiURL.RawQuery != "" || apiURL.Fragment != "" {
		errs = append(errs, fmt.Errorf("MCP_API_URL %q must be an absolute http(s) URL", rawAPI))
	}
	cfg.APIURL = apiURL
	cfg.Exchange = exchange.Config{
		TokenURL:     rawAPI + "/oauth/token",
		ClientID:     r.String("MCP_CLIENT_ID", ""),
		ClientSecret: r.String("MCP_CLIENT_SECRET", ""),
		Resource:     public,
	}
	def := resources.DefaultConfig()
	cfg.Subscriptions = resources.Config{
		MaxStreams:     r.Int("MCP_MAX_STREAMS", def.MaxStreams),
		MaxPerAccount:  r.Int("MCP_MAX_SUBSCRIPTIONS_PER_ACCOUNT", def.MaxPerAccount),
		StreamLifetime: r.Duration("MCP_STREAM_LIFETIME", def.StreamLifetime),
		WriteTimeout:   r.Duration("MCP_NOTIFICATION_WRITE_TIMEOUT", def.WriteTimeout),
	}
	errs = append(errs, cfg.Subscriptions.Validate())
	if cfg.Subscriptions.MaxStreams >= cfg.Service.HTTP.MaxInFlight {
		errs = append(errs, fmt.Errorf("MCP_MAX_STREAMS %d must stay below the %d requests in flight the HTTP server takes: each stream is one", cfg.Subscriptions.MaxStreams, cfg.Service.HTTP.MaxInFlight))
	}
	cfg.EventsGroup = r.String("MCP_EVENTS_GROUP", "pcourt-mcp-"+cfg.Service.PodName)
	if cfg.Exchange.ClientID == "" || cfg.Exchange.ClientSecret == "" {
		errs = append(errs, errors.New("MCP_CLIENT_ID and MCP_CLIENT_SECRET are required: the server's own client at the accounts service, which exchanges the tokens it is sent for the API's"))
	}
	if err := errors.Join(append(errs, r.Err(), cfg.Service.Validate())...); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}
