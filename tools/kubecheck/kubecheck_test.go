package kubecheck_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/pcourt/pcourt/tools/helmcheck"
	"github.com/pcourt/pcourt/tools/kubecheck"
)

const (
	repo      = "../.."
	namespace = "pcourt"
)

var chart = filepath.Join(repo, "deploy", "helm", "pcourt")

// startAPIServer starts etcd and kube-apiserver from the assets with the
// chart's CRD and the Prometheus Operator's (testdata/crds) installed, and
// returns a client to it.
func startAPIServer(t *testing.T) client.Client {
	t.Helper()
	assets := kubecheck.Assets(repo)
	if assets == "" {
		t.Skip("no etcd and kube-apiserver (bin/k8s/" + helmcheck.KubeVersion + " or $KUBEBUILDER_ASSETS): run `make kube-assets` to build them; the chart is not applied to an API server")
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		// The chart's CRD, and minimal ones of the Prometheus Operator's
		// kinds the chart renders (testdata/crds/README.md).
		CRDDirectoryPaths:     []string{filepath.Join(chart, "crds"), filepath.Join("testdata", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	require.NoError(t, err, "etcd and kube-apiserver from %s start", assets)
	t.Cleanup(func() { require.NoError(t, env.Stop()) })
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	return c
}

// manifests renders the chart (CRDs included) and returns every document.
func manifests(t *testing.T, h string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := helmcheck.Helm(h, append([]string{"template", "pcourt", chart, "--namespace", namespace,
		"--kube-version", helmcheck.KubeVersion, "--include-crds"}, args...)...)
	require.NoError(t, err)
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		var u unstructured.Unstructured
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if len(u.Object) > 0 {
			objs = append(objs, &u)
		}
	}
	return objs
}

// Every manifest the chart renders, with the default values and with the
// production-like ones, is accepted by a real API server under server-side
// apply with dry run: nothing is stored, everything is validated, defaulted
// and admitted as a real install would be.
func TestChartAppliesToAnAPIServer(t *testing.T) {
	c := startAPIServer(t)
	h := helmcheck.FindHelm(repo)
	if h == "" {
		t.Skip("no helm binary (bin/helm, $HELM or PATH): run `make helm` to install it; the chart is not applied")
	}
	ctx := context.Background()
	// Namespaced objects need their namespace to exist even in a dry run.
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}))

	for _, tc := range []struct {
		values []string
		// mcp: the MCP server is enabled (the production values).
		mcp bool
	}{
		{nil, false},
		{[]string{"-f", filepath.Join(chart, "values-production.yaml")}, true},
		// The policies' other shapes: address ranges beside the ingress
		// controller's pods, a monitoring selector by expression.
		{[]string{"--set", "networkPolicy.ingressController.ipBlocks={192.168.10.0/24,fd00::/64}",
			"--set", "networkPolicy.monitoring.podSelector.matchExpressions[0].key=app.kubernetes.io/name",
			"--set", "networkPolicy.monitoring.podSelector.matchExpressions[0].operator=In",
			"--set", "networkPolicy.monitoring.podSelector.matchExpressions[0].values={prometheus}",
			"--set", "defaults.topologySpread.zones=DoNotSchedule"}, false},
	} {
		values := tc.values
		t.Run("values "+valuesName(values), func(t *testing.T) {
			objs := manifests(t, h, values...)
			require.NotEmpty(t, objs)
			applied, policies, mcp := 0, 0, false
			for _, u := range objs {
				what := u.GetKind() + " " + u.GetName()
				// helm install puts namespaced objects into its namespace;
				// helm template leaves metadata.namespace to the installer.
				namespaced, err := c.IsObjectNamespaced(u)
				require.NoError(t, err, "%s: the API server serves its kind", what)
				if namespaced && u.GetNamespace() == "" {
					u.SetNamespace(namespace)
				}
				err = dryRunApply(ctx, c, u)
				require.NoError(t, err, "%s is accepted by the API server", what)
				applied++
				if u.GetKind() == "NetworkPolicy" {
					policies++
				}
				if what == "Deployment pcourt-mcp" {
					mcp = true
				}
			}
			require.Equal(t, tc.mcp, mcp, "the MCP server is deployed where it is enabled")
			// readiness, filings, cases, webhooks, console, accounts,
			// compat-edge, compat-controller, and the MCP server.
			want := 8
			if tc.mcp {
				want++
			}
			require.Equal(t, want, policies, "a NetworkPolicy per service deployed")
			t.Logf("%d manifests accepted by kube-apiserver %s with server-side apply, dry run", applied, helmcheck.KubeVersion)
		})
	}
}

// dryRunApply sends u as a server-side apply with dry run: the API server
// validates, defaults and admits it, and stores nothing.
func dryRunApply(ctx context.Context, c client.Client, u *unstructured.Unstructured) error {
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.DryRunAll, client.FieldOwner("kubecheck"), client.ForceOwnership)
}

func valuesName(args []string) string {
	switch {
	case len(args) == 0:
		return "default"
	case args[0] == "-f":
		return filepath.Base(args[1])
	}
	return "set"
}

// The API server refuses what the chart must never render: the check above
// would not fail on a broken manifest if a dry run accepted anything.
func TestAPIServerRefusesABrokenManifest(t *testing.T) {
	c := startAPIServer(t)
	ctx := context.Background()
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}))
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "broken", "namespace": namespace},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "a"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "b"}}, // does not match the selector
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "x"}}},
			},
		},
	}}
	err := dryRunApply(ctx, c, bad)
	require.Error(t, err)
	require.Contains(t, err.Error(), "selector")

	policy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
		"metadata": map[string]any{"name": "broken", "namespace": namespace},
		"spec": map[string]any{
			"podSelector": map[string]any{"matchLabels": map[string]any{"app": "a"}},
			"ingress": []any{map[string]any{
				"from": []any{map[string]any{"ipBlock": map[string]any{"cidr": "ingress-nginx"}}},
			}},
		},
	}}
	err = dryRunApply(ctx, c, policy)
	require.Error(t, err, "NetworkPolicies are validated, not stored blind")
	require.Contains(t, err.Error(), "cidr")

	family := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "compat.pcourt.dev/v1alpha1", "kind": "CompatibilityFamily",
		"metadata": map[string]any{"name": "cases", "namespace": namespace},
		"spec":     map[string]any{"family": "v2-cases", "stage": "warn", "unknownField": true},
	}}
	err = dryRunApply(ctx, c, family)
	require.Error(t, err, "the installed CRD's schema is enforced")
	require.Contains(t, err.Error(), "unknownField")

	rule := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
		"metadata": map[string]any{"name": "broken", "namespace": namespace},
		"spec": map[string]any{"groups": []any{map[string]any{"name": "g", "rules": []any{
			map[string]any{"alert": "A", "expr": "up == 0", "for": "five minutes"},
		}}}},
	}}
	err = dryRunApply(ctx, c, rule)
	require.Error(t, err, "the PrometheusRule's schema is enforced")
	require.Contains(t, err.Error(), "for")
}
