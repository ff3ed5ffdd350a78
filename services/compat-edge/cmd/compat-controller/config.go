package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/mail"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/services/compat-edge/internal/controller"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
)

// config is everything the compat-controller reads from its environment.
// Its variables keep the edge's names (EDGE_*, SERVICE_API_*): they
// configure the same compatibility policy, now decided in two processes.
type config struct {
	// Service is the shared part; the HTTP listener serves only the
	// probes, the admin one the metrics.
	Service service.Config
	// PublicURL is the edge's address as partners reach it
	// (EDGE_PUBLIC_URL): the notices link the migration guide there.
	PublicURL string
	// Env is the spec's SERVICE_API_* variables, as the edge reads them:
	// the notices' milestones come from the same policy the edge serves.
	Env policy.Env
	// RefreshInterval is how often the durable family settings are read
	// again (EDGE_COMPAT_REFRESH_INTERVAL).
	RefreshInterval time.Duration
	// Kubernetes is the CompatibilityFamily controller's part
	// (EDGE_KUBERNETES, EDGE_KUBERNETES_NAMESPACE, EDGE_KUBERNETES_LEASE).
	Kubernetes controller.Config
	// Mail is the SMTP server of the milestone notices (EDGE_SMTP_*);
	// without a host no notice is sent.
	Mail mail.Config
	// NoticeInterval is how often the notice scheduler passes
	// (EDGE_NOTICE_INTERVAL).
	NoticeInterval time.Duration
}

func loadConfig(getenv func(string) string) (config, error) {
	r := envconf.New(getenv)
	cfg := config{Service: service.ConfigFromEnv(r, ":8087")}
	cfg.PublicURL = strings.TrimSuffix(r.String("EDGE_PUBLIC_URL", ""), "/")
	cfg.Env = policy.EnvFrom(getenv)
	cfg.RefreshInterval = r.Duration("EDGE_COMPAT_REFRESH_INTERVAL", 10*time.Second)
	cfg.Kubernetes = controller.DefaultConfig()
	cfg.Kubernetes.Mode = controller.Mode(r.String("EDGE_KUBERNETES", string(cfg.Kubernetes.Mode)))
	cfg.Kubernetes.Namespace = controller.Namespace(r.String("EDGE_KUBERNETES_NAMESPACE", ""), getenv)
	cfg.Kubernetes.LeaseName = r.String("EDGE_KUBERNETES_LEASE", cfg.Kubernetes.LeaseName)
	cfg.Mail = mail.FromEnv(r, "EDGE_SMTP_", mail.DefaultConfig())
	cfg.NoticeInterval = r.Duration("EDGE_NOTICE_INTERVAL", time.Minute)
	var errs []error
	if cfg.RefreshInterval <= 0 {
		errs = append(errs, errors.New("EDGE_COMPAT_REFRESH_INTERVAL must be positive"))
	}
	if cfg.NoticeInterval <= 0 {
		errs = append(errs, errors.New("EDGE_NOTICE_INTERVAL must be positive"))
	}
	if cfg.PublicURL != "" {
		if u, err := url.Parse(cfg.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("EDGE_PUBLIC_URL=%q is not an http(s) URL", cfg.PublicURL))
		}
	}
	errs = append(errs, r.Err(), cfg.Service.Validate(), cfg.Kubernetes.Validate(), cfg.Mail.Validate())
	if err := errors.Join(errs...); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}
