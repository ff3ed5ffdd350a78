package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/compat-edge/internal/controller"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
)

func TestLoadConfig(t *testing.T) {
	cfg, err := loadConfig(func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, ":8087", cfg.Service.HTTP.Addr)
	require.Equal(t, 10*time.Second, cfg.RefreshInterval)
	require.False(t, cfg.Mail.Enabled(), "no notices without an SMTP host")
	require.Equal(t, time.Minute, cfg.NoticeInterval)
	require.False(t, policy.Resolve(cfg.Env, nil).Enabled, "announcements are off by default")

	for _, tc := range []struct {
		name string
		env  map[string]string
	}{
		{"a public URL without host", map[string]string{"EDGE_PUBLIC_URL": "https://"}},
		{"a refresh interval of zero", map[string]string{"EDGE_COMPAT_REFRESH_INTERVAL": "0s"}},
		{"an SMTP sender that is not an address", map[string]string{"EDGE_SMTP_HOST": "smtp.example", "EDGE_SMTP_FROM": "edge"}},
		{"an unknown STARTTLS mode", map[string]string{"EDGE_SMTP_STARTTLS": "maybe"}},
		{"an SMTP user without password", map[string]string{"EDGE_SMTP_USERNAME": "edge"}},
		{"a notice interval of zero", map[string]string{"EDGE_NOTICE_INTERVAL": "0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(func(k string) string { return tc.env[k] })
			require.Error(t, err)
		})
	}

	cfg, err = loadConfig(func(k string) string {
		return map[string]string{
			"EDGE_PUBLIC_URL": "https://api.pcourt.dev/", "EDGE_SMTP_HOST": "smtp.example", "EDGE_SMTP_FROM": "compat@pcourt.dev",
			"SERVICE_API_CANONICAL_ROUTES": "true", "SERVICE_API_V2_CASES_GA": "2026-01-15",
		}[k]
	})
	require.NoError(t, err)
	require.Equal(t, "https://api.pcourt.dev", cfg.PublicURL)
	require.True(t, cfg.Mail.Enabled())
	require.Equal(t, "2026-01-15", policy.Resolve(cfg.Env, nil).Window(inventory.V2Cases).GA.String(),
		"the notices decide with the edge's variables")
}

func TestLoadConfigKubernetes(t *testing.T) {
	cfg, err := loadConfig(func(k string) string { return map[string]string{"POD_NAMESPACE": "pcourt"}[k] })
	require.NoError(t, err)
	require.Equal(t, controller.Auto, cfg.Kubernetes.Mode, "watch when a cluster is found")
	require.Equal(t, "pcourt", cfg.Kubernetes.Namespace)
	require.Equal(t, "compat-controller", cfg.Kubernetes.LeaseName)

	cfg, err = loadConfig(func(k string) string {
		return map[string]string{"EDGE_KUBERNETES": "off", "EDGE_KUBERNETES_NAMESPACE": "edge", "POD_NAMESPACE": "pcourt"}[k]
	})
	require.NoError(t, err)
	require.Equal(t, controller.Off, cfg.Kubernetes.Mode)
	require.Equal(t, "edge", cfg.Kubernetes.Namespace)

	_, err = loadConfig(func(k string) string { return map[string]string{"EDGE_KUBERNETES": "yes"}[k] })
	require.ErrorContains(t, err, "EDGE_KUBERNETES")
}

// Outside a cluster, auto leaves the policy to the admin API's settings
// and the environment (and says so); on refuses to start; off never looks.
func TestKubernetesManagerOutsideACluster(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	noEnv := func(string) string { return "" }
	deps := controller.Deps{SaveLayer: func(context.Context, map[inventory.Family]policy.Settings) (bool, error) { return false, nil }, Now: time.Now, Logger: logger}

	mgr, err := kubernetesManager(controller.Config{Mode: controller.Auto, Namespace: "pcourt", LeaseName: "l"}, noEnv, deps, logger)
	require.NoError(t, err)
	require.Nil(t, mgr)
	require.Contains(t, logs.String(), "not in a Kubernetes cluster")
	require.Contains(t, logs.String(), "admin API's settings and the environment")

	_, err = kubernetesManager(controller.Config{Mode: controller.On, Namespace: "pcourt", LeaseName: "l"}, noEnv, deps, logger)
	require.ErrorIs(t, err, controller.ErrNoCluster)

	_, err = kubernetesManager(controller.Config{Mode: controller.On, Namespace: "pcourt", LeaseName: "l"},
		func(k string) string { return map[string]string{"KUBECONFIG": "/nonexistent/kubeconfig"}[k] }, deps, logger)
	require.ErrorContains(t, err, "KUBECONFIG")

	logs.Reset()
	mgr, err = kubernetesManager(controller.Config{Mode: controller.Off}, func(string) string { panic("off never looks") }, deps, logger)
	require.NoError(t, err)
	require.Nil(t, mgr)
	require.Contains(t, logs.String(), "EDGE_KUBERNETES=off")
}

// With a kubeconfig the manager is built (not started: no API server here).
func TestKubernetesManagerWithAKubeconfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600))
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	deps := controller.Deps{SaveLayer: func(context.Context, map[inventory.Family]policy.Settings) (bool, error) { return false, nil }, Now: time.Now, Logger: logger}
	mgr, err := kubernetesManager(controller.Config{Mode: controller.Auto, Namespace: "pcourt", LeaseName: "l"},
		func(k string) string { return map[string]string{"KUBECONFIG": path}[k] }, deps, logger)
	require.NoError(t, err)
	require.NotNil(t, mgr)
}
