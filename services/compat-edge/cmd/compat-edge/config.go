package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/services/compat-edge/internal/legacyuse"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/proxy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/routing"
)

// DefaultMaxConnections is the edge's HTTP_MAX_CONNECTIONS.
const DefaultMaxConnections = 512

// DefaultMaxUploadBytes is the edge's EDGE_MAX_UPLOAD_BYTES: 110 MiB.
const DefaultMaxUploadBytes = 110 << 20

// config is everything the edge reads from its environment.
type config struct {
	Service service.Config
	// Routes holds the proxy's body limits and transfer timeout.
	Routes     proxy.Config
	Upstreams  map[routing.Owner]*url.URL
	Forwarding proxy.Forwarding
	// PublicURL is the address clients reach the edge at (the ingress);
	// the served OpenAPI document names it as its server. Empty keeps the
	// document's relative server.
	PublicURL string
	Compat    compatConfig
	// AdminToken is the bearer of the compatibility admin API on the admin
	// listener (EDGE_ADMIN_TOKEN, from a Secret); unset refuses every
	// request.
	AdminToken envconf.Secret
}

// compatConfig is the compatibility policy's part.
type compatConfig struct {
	// Env is the spec's SERVICE_API_* variables as given. Invalid dates
	// are not a configuration error: the spec says they announce nothing,
	// and the edge logs each one at start.
	Env policy.Env
	// RefreshInterval is how often the durable family settings are read
	// again (EDGE_COMPAT_REFRESH_INTERVAL): the delay before an
	// administrator's change, or a CompatibilityFamily resource's that
	// the compat-controller saved, acts on every replica.
	RefreshInterval time.Duration
	// LegacyUse sizes the legacy-use recorder (EDGE_LEGACY_USE_BUFFER,
	// EDGE_LEGACY_USE_FLUSH_INTERVAL, EDGE_LEGACY_USE_MAX_PENDING).
	LegacyUse legacyuse.Config
}

func defaultCompatConfig() compatConfig {
	return compatConfig{RefreshInterval: 10 * time.Second, LegacyUse: legacyuse.DefaultConfig()}
}

// Validate reports an unusable setting.
func (c compatConfig) Validate() error {
	if c.RefreshInterval <= 0 {
		return errors.New("EDGE_COMPAT_REFRESH_INTERVAL must be positive")
	}
	return c.LegacyUse.Validate()
}

func loadConfig(getenv func(string) string) (config, error) {
	r := envconf.New(getenv)
	cfg := config{Service: service.ConfigFromEnv(r, ":8080"), Upstreams: map[routing.Owner]*url.URL{}}
	// The edge passes bodies through; each owner enforces its own, smaller
	// limit. This cap only protects the edge itself.
	cfg.Routes.MaxBodyBytes = int64(r.Int("HTTP_MAX_BODY_BYTES", 16<<20))
	// Exhibit uploads (proxy.Uploads) stream through under their own
	// limit: the largest file any rules version allows (100 MiB) and the
	// multipart framing around it; the ingress gives the same paths 110m.
	cfg.Routes.MaxUploadBytes = int64(r.Int("EDGE_MAX_UPLOAD_BYTES", DefaultMaxUploadBytes))
	// 110 MiB at 2 Mbit/s takes about 8 minutes.
	cfg.Routes.TransferTimeout = r.Duration("EDGE_TRANSFER_TIMEOUT", 10*time.Minute)
	// The server's default only bounds what a route can allow: every
	// route of the edge names its own limit (proxy.Register).
	cfg.Service.HTTP.MaxBodyBytes = max(cfg.Routes.MaxBodyBytes, cfg.Routes.MaxUploadBytes)
	// The edge faces the internet: connections that never finish their
	// headers are held to this many (each can hold up to twice
	// HTTP_MAX_HEADER_BYTES, and more while the collector catches up), so
	// a flood of them stays inside the pod's memory limit (256 MiB):
	// measured, 5,000 of them peak at 269 MiB with 1024 (see the docs for 512).
	// docs/security-limits.md has the figures.
	cfg.Service.HTTP.MaxConnections = r.Int("HTTP_MAX_CONNECTIONS", DefaultMaxConnections)
	// TLS ends at the ingress in production; the client address comes
	// from its X-Forwarded-For, on requests from HTTP_TRUSTED_PROXIES (the
	// ingress), when HTTP_TRUSTED_HOPS says how many proxies stand in
	// front of the edge.
	cfg.Forwarding.TLSTerminated = r.Bool("EDGE_TLS_TERMINATED", false)
	defaults := map[routing.Owner]string{
		routing.Readiness: "http://127.0.0.1:8081",
		routing.Filings:   "http://127.0.0.1:8082",
		routing.Cases:     "http://127.0.0.1:8083",
		routing.Webhooks:  "http://127.0.0.1:8084",
		routing.Console:   "http://127.0.0.1:8088",
		routing.Accounts:  "http://127.0.0.1:8089",
		routing.MCP:       "http://127.0.0.1:8090",
	}
	cfg.PublicURL = strings.TrimSuffix(r.String("EDGE_PUBLIC_URL", ""), "/")
	cfg.Compat = defaultCompatConfig()
	cfg.Compat.Env = policy.EnvFrom(getenv)
	cfg.Compat.RefreshInterval = r.Duration("EDGE_COMPAT_REFRESH_INTERVAL", cfg.Compat.RefreshInterval)
	cfg.Compat.LegacyUse.Buffer = r.Int("EDGE_LEGACY_USE_BUFFER", cfg.Compat.LegacyUse.Buffer)
	cfg.Compat.LegacyUse.FlushInterval = r.Duration("EDGE_LEGACY_USE_FLUSH_INTERVAL", cfg.Compat.LegacyUse.FlushInterval)
	cfg.Compat.LegacyUse.MaxPending = r.Int("EDGE_LEGACY_USE_MAX_PENDING", cfg.Compat.LegacyUse.MaxPending)
	cfg.AdminToken = r.Secret("EDGE_ADMIN_TOKEN")
	var errs []error
	if cfg.Routes.MaxBodyBytes <= 0 {
		errs = append(errs, errors.New("HTTP_MAX_BODY_BYTES must be positive"))
	}
	if cfg.Routes.MaxUploadBytes <= 0 {
		errs = append(errs, errors.New("EDGE_MAX_UPLOAD_BYTES must be positive"))
	}
	if cfg.Routes.TransferTimeout <= 0 {
		errs = append(errs, errors.New("EDGE_TRANSFER_TIMEOUT must be positive"))
	}
	if t := cfg.AdminToken.Reveal(); t != "" && len(t) < 16 {
		errs = append(errs, errors.New("EDGE_ADMIN_TOKEN must be at least 16 characters"))
	}
	if cfg.PublicURL != "" {
		if u, err := url.Parse(cfg.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("EDGE_PUBLIC_URL=%q is not an http(s) URL", cfg.PublicURL))
		}
	}
	for _, owner := range routing.Owners {
		name := "UPSTREAM_" + envName(owner) + "_URL"
		raw := r.String(name, defaults[owner])
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("%s=%q is not an http(s) URL", name, raw))
			continue
		}
		if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			// The partner's path is the owner's: the edge adds none.
			errs = append(errs, fmt.Errorf("%s=%q must name the owner's scheme and host alone (http(s)://host[:port])", name, raw))
			continue
		}
		cfg.Upstreams[owner] = u
	}
	errs = append(errs, r.Err(), cfg.Service.Validate(), cfg.Compat.Validate())
	if err := errors.Join(errs...); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}

func envName(o routing.Owner) string {
	b := []byte(o)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
