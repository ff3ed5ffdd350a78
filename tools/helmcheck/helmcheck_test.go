package helmcheck_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/modfile"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/pcourt/pcourt/libs/nginxtest"
	"github.com/pcourt/pcourt/tools/helmcheck"
)

const repo = "../.."

var (
	chart      = filepath.Join(repo, "deploy", "helm", "pcourt")
	production = filepath.Join(chart, "values-production.yaml")
	// services are what the chart deploys with the default values.
	services = []string{"readiness", "filings", "cases", "webhooks", "compat-edge", "compat-controller", "console", "accounts"}
	// withMCP adds the MCP server, deployed only where services.mcp.enabled
	// (as the production values do).
	withMCP = append(slices.Clone(services), "mcp")
	// enableMCP turns the MCP server on with the Secret of its client.
	enableMCP = []string{"--set", "services.mcp.enabled=true", "--set", "services.accounts.mcpClientSecret.name=pcourt-mcp-client"}
	// controller is the one workload not autoscaled: one leader works.
	controller = "compat-controller"
)

func helm(t *testing.T) string {
	t.Helper()
	h := helmcheck.FindHelm(repo)
	if h == "" {
		t.Skip("no helm binary (bin/helm, $HELM or PATH): run `make helm` to install it; the chart is not checked")
	}
	return h
}

// render runs helm lint --strict and helm template with the extra
// arguments, and decodes the result strictly.
func render(t *testing.T, h string, args ...string) *helmcheck.Manifests {
	t.Helper()
	_, err := helmcheck.Helm(h, append([]string{"lint", "--strict", "--kube-version", helmcheck.KubeVersion, chart}, args...)...)
	require.NoError(t, err)
	out, err := helmcheck.Helm(h, append([]string{"template", "pcourt", chart, "--namespace", "pcourt", "--kube-version", helmcheck.KubeVersion}, args...)...)
	require.NoError(t, err)
	m, err := helmcheck.Decode(out)
	require.NoError(t, err, "every rendered manifest decodes strictly into its API type")
	require.NoError(t, helmcheck.Check(m))
	return m
}

// env returns a container's literal environment (not from a Secret or
// the downward API).
func env(c corev1.Container) map[string]string {
	out := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			out[e.Name] = e.Value
		}
	}
	return out
}

func TestDefaultValues(t *testing.T) {
	m := render(t, helm(t))
	// Per service: ServiceAccount, Deployment, Service, HPA, PDB and
	// NetworkPolicy (the controller: no HPA); then the two Ingresses (the
	// uploads have their own) and the controller's Role and RoleBinding.
	assert.Equal(t, len(services)*6-1+4, m.Count())
	names := func(n int, name func(i int) string) []string {
		var out []string
		for i := range n {
			out = append(out, strings.TrimPrefix(name(i), "pcourt-"))
		}
		slices.Sort(out)
		return out
	}
	want := slices.Sorted(slices.Values(services))
	assert.Equal(t, want, names(len(m.Deployments), func(i int) string { return m.Deployments[i].Name }))
	assert.Equal(t, want, names(len(m.Services), func(i int) string { return m.Services[i].Name }))
	assert.Equal(t, slices.DeleteFunc(slices.Clone(want), func(s string) bool { return s == controller }),
		names(len(m.HPAs), func(i int) string { return m.HPAs[i].Name }), "every service but the controller is autoscaled")
	assert.Equal(t, want, names(len(m.PDBs), func(i int) string { return m.PDBs[i].Name }))
	assert.Empty(t, m.ServiceMonitors, "the ServiceMonitor is behind a value")

	for _, d := range m.Deployments {
		pod := d.Spec.Template
		assert.Equal(t, "true", pod.Annotations["prometheus.io/scrape"], d.Name)
		c := pod.Spec.Containers[0]
		e := env(c)
		port := c.Ports[0].ContainerPort
		assert.Equal(t, port+1000, c.Ports[1].ContainerPort, "%s: the admin port is the public port + 1000", d.Name)
		assert.Equal(t, pod.Annotations["prometheus.io/port"], strings.TrimPrefix(e["ADMIN_ADDR"], ":"), d.Name)
		assert.Equal(t, "standalone", e["REDIS_MODE"])
		if d.Name == "pcourt-compat-edge" {
			assert.Equal(t, "1", e["HTTP_TRUSTED_HOPS"])
			assert.Equal(t, "10.0.0.0/8", e["HTTP_TRUSTED_PROXIES"], "hops are counted behind the ingress's pods only")
		}
		// Only the controller talks to the API server: the edge, facing
		// the internet, holds no token.
		assert.Equal(t, d.Name == "pcourt-compat-controller", *pod.Spec.AutomountServiceAccountToken, d.Name)
		if d.Name == "pcourt-compat-controller" {
			assert.Equal(t, int32(2), *d.Spec.Replicas, "a leader and a standby")
			assert.Equal(t, "compat-controller.compat.pcourt.dev", e["EDGE_KUBERNETES_LEASE"])
			assert.Equal(t, "false", e["SERVICE_API_CANONICAL_ROUTES"], "the notices decide with the edge's variables")
		}
		if d.Name == "pcourt-compat-edge" {
			assert.Equal(t, "http://pcourt-console:8088", e["UPSTREAM_CONSOLE_URL"], "the edge routes /console/ to the console")
			assert.Equal(t, "http://pcourt-accounts:8089", e["UPSTREAM_ACCOUNTS_URL"], "the edge routes /api/accounts, /oauth/ and the OAuth metadata to accounts")
		}
		if d.Name == "pcourt-accounts" {
			assert.Equal(t, "http://pcourt.localhost", e["PUBLIC_BASE_URL"], "the OAuth issuer, and its tokens' audience, is the public URL")
		}
		if d.Name == "pcourt-console" {
			assert.Equal(t, "http://pcourt-compat-edge:8080", e["CONSOLE_API_URL"], "the console calls the public API through the edge")
			assert.Equal(t, "http://pcourt.localhost", e["PUBLIC_BASE_URL"], "its pages' origin is the public URL")
		}
		if d.Name == "pcourt-compat-edge" {
			assert.NotContains(t, e, "EDGE_KUBERNETES", "the edge watches nothing")
			assert.NotContains(t, e, "EDGE_SMTP_HOST", "the edge sends no mail")
		}
	}
	for _, sa := range m.ServiceAccounts {
		assert.Equal(t, sa.Name == "pcourt-compat-controller", *sa.AutomountServiceAccountToken, sa.Name)
	}
	require.Len(t, m.RoleBindings, 1)
	require.Len(t, m.RoleBindings[0].Subjects, 1)
	assert.Equal(t, "pcourt-compat-controller", m.RoleBindings[0].Subjects[0].Name, "the role is bound to the controller alone")
	ing := m.Ingresses[0]
	assert.Equal(t, "pcourt-compat-edge", ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name)
	for k := range ing.Annotations {
		assert.Equal(t, "nginx.ingress.kubernetes.io/proxy-body-size", k, "only the annotations the responses need")
	}
	for _, d := range m.Deployments {
		if d.Name == "pcourt-compat-edge" {
			assert.Equal(t, "115343360", env(d.Spec.Template.Spec.Containers[0])["EDGE_MAX_UPLOAD_BYTES"], "110 MiB")
		}
	}

	role := m.Roles[0]
	allows := func(group, resource, verb string) bool {
		return slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
		})
	}
	for _, verb := range []string{"get", "list", "watch"} {
		assert.True(t, allows("compat.pcourt.dev", "compatibilityfamilies", verb), verb)
	}
	for _, verb := range []string{"update", "patch"} {
		assert.True(t, allows("compat.pcourt.dev", "compatibilityfamilies/status", verb), verb)
		assert.False(t, allows("compat.pcourt.dev", "compatibilityfamilies", verb), "the controller writes status only, never spec")
	}
	assert.True(t, allows("coordination.k8s.io", "leases", "update"))
	for _, r := range role.Rules {
		assert.NotContains(t, r.Verbs, "*")
		assert.NotContains(t, r.Resources, "*")
		assert.NotContains(t, r.Resources, "secrets")
	}
}

func TestProductionValues(t *testing.T) {
	m := render(t, helm(t), "-f", production)
	assert.Len(t, m.ServiceMonitors, len(withMCP), "one per service, the MCP server's among them")
	for _, h := range m.HPAs {
		assert.Equal(t, int32(3), *h.Spec.MinReplicas, h.Name)
	}
	for _, d := range m.Deployments {
		pod := d.Spec.Template.Spec
		assert.Empty(t, d.Spec.Template.Annotations, "the ServiceMonitor replaces the scrape annotations")
		// Hard across nodes; across zones only as far as nodes say theirs.
		spread := map[string]corev1.UnsatisfiableConstraintAction{}
		for _, tsc := range pod.TopologySpreadConstraints {
			spread[tsc.TopologyKey] = tsc.WhenUnsatisfiable
		}
		assert.Equal(t, map[string]corev1.UnsatisfiableConstraintAction{
			"kubernetes.io/hostname":      corev1.DoNotSchedule,
			"topology.kubernetes.io/zone": corev1.ScheduleAnyway,
		}, spread, d.Name)
		c := pod.Containers[0]
		e := env(c)
		assert.Equal(t, "cluster", e["REDIS_MODE"], d.Name)
		assert.Equal(t, "true", e["REDIS_TLS"], d.Name)
		assert.Equal(t, "/etc/pcourt/redis-ca/ca.crt", e["REDIS_TLS_CA_FILE"], d.Name)
		assert.Len(t, strings.Split(e["REDIS_ADDRS"], ","), 3)
		assert.Len(t, strings.Split(e["KAFKA_BROKERS"], ","), 3)
		assert.NotEmpty(t, e["OTEL_EXPORTER_OTLP_ENDPOINT"])
		secrets := map[string]string{}
		for _, ev := range c.Env {
			if ev.ValueFrom != nil && ev.ValueFrom.SecretKeyRef != nil {
				secrets[ev.Name] = ev.ValueFrom.SecretKeyRef.Name
			}
		}
		assert.Equal(t, "pcourt-redis", secrets["REDIS_PASSWORD"], "the password comes from a Secret, never a value")
		if d.Name == "pcourt-compat-controller" {
			assert.Equal(t, "smtp.pcourt.example", e["EDGE_SMTP_HOST"])
			assert.Equal(t, "pcourt-smtp", secrets["EDGE_SMTP_PASSWORD"], "the SMTP password from a Secret")
		}
		assert.NotContains(t, e, "REDIS_PASSWORD", "never a literal password")
	}
	for _, p := range m.PDBs {
		if p.Name == "pcourt-compat-controller" {
			// Two replicas: minAvailable 2 would block every drain.
			assert.Equal(t, 1, p.Spec.MaxUnavailable.IntValue(), p.Name)
			assert.Nil(t, p.Spec.MinAvailable, "a service's budget replaces the default whole")
			continue
		}
		assert.Equal(t, 2, p.Spec.MinAvailable.IntValue(), p.Name)
		assert.Nil(t, p.Spec.MaxUnavailable, "a service's budget replaces the default whole")
	}
	for _, ing := range m.Ingresses {
		require.Len(t, ing.Spec.TLS, 1, ing.Name)
		assert.Equal(t, "pcourt-api-tls", ing.Spec.TLS[0].SecretName, ing.Name)
		assert.Equal(t, []string{"api.pcourt.example"}, ing.Spec.TLS[0].Hosts, ing.Name)
	}
}

// The exhibit uploads have an Ingress of their own, the only place a body
// over 2m gets through: the same host, TLS and class as the main one, the
// paths the ingress tests' nginx has (and the edge's upload routes), a
// body size the edge's own upload limit equals, and no request buffering.
func TestTheUploadIngress(t *testing.T) {
	h := helm(t)
	for _, values := range [][]string{nil, {"-f", production}} {
		m := render(t, h, values...)
		main, uploads := ingressNamed(t, m, "pcourt-compat-edge"), ingressNamed(t, m, "pcourt-compat-edge-uploads")

		assert.Equal(t, "2m", main.Annotations["nginx.ingress.kubernetes.io/proxy-body-size"])
		assert.Equal(t, map[string]string{
			"nginx.ingress.kubernetes.io/proxy-body-size":         nginxtest.UploadBodySize,
			"nginx.ingress.kubernetes.io/proxy-request-buffering": "off",
			"nginx.ingress.kubernetes.io/use-regex":               "true",
		}, uploads.Annotations)
		assert.Equal(t, main.Spec.IngressClassName, uploads.Spec.IngressClassName)
		assert.Equal(t, main.Spec.TLS, uploads.Spec.TLS)
		require.Len(t, uploads.Spec.Rules, 1)
		assert.Equal(t, main.Spec.Rules[0].Host, uploads.Spec.Rules[0].Host)
		var paths []string
		for _, p := range uploads.Spec.Rules[0].HTTP.Paths {
			paths = append(paths, p.Path)
			require.NotNil(t, p.PathType)
			assert.Equal(t, networkingv1.PathTypeImplementationSpecific, *p.PathType, "a regular expression is no Prefix")
			assert.Equal(t, main.Spec.Rules[0].HTTP.Paths[0].Backend, p.Backend, "to the edge, as every other path")
		}
		assert.Equal(t, nginxtest.UploadPaths, paths, "the paths the ingress tests' nginx gives the upload limit")

		for _, d := range m.Deployments {
			if d.Name != "pcourt-compat-edge" {
				continue
			}
			limit, err := strconv.ParseInt(env(d.Spec.Template.Spec.Containers[0])["EDGE_MAX_UPLOAD_BYTES"], 10, 64)
			require.NoError(t, err)
			size, err := strconv.ParseInt(strings.TrimSuffix(nginxtest.UploadBodySize, "m"), 10, 64)
			require.NoError(t, err)
			assert.Equal(t, size<<20, limit, "the edge's upload limit is the ingress's (nginx's m is MiB)")
		}
	}
	// The operator's own annotations reach both Ingresses; the upload
	// ones win on the upload Ingress.
	m := render(t, h, "--set", "ingress.annotations.cert-manager\\.io/cluster-issuer=letsencrypt")
	for _, ing := range m.Ingresses {
		assert.Equal(t, "letsencrypt", ing.Annotations["cert-manager.io/cluster-issuer"], ing.Name)
	}
	assert.Equal(t, "110m", ingressNamed(t, m, "pcourt-compat-edge-uploads").Annotations["nginx.ingress.kubernetes.io/proxy-body-size"])
}

// ingressNamed is the rendered Ingress called name.
func ingressNamed(t *testing.T, m *helmcheck.Manifests, name string) *networkingv1.Ingress {
	t.Helper()
	for _, ing := range m.Ingresses {
		if ing.Name == name {
			return ing
		}
	}
	t.Fatalf("no Ingress %s", name)
	return nil
}

// Where the MCP server is deployed, its listen streams have an Ingress of
// their own: the same host, TLS and class as the main one, the edge's
// stream path (the one the ingress tests' nginx has), unbuffered, and
// read and send timeouts over the stream's lifetime. Without the MCP
// server there is none.
func TestTheStreamsIngress(t *testing.T) {
	h := helm(t)
	for _, ing := range render(t, h).Ingresses {
		assert.NotEqual(t, "pcourt-compat-edge-streams", ing.Name, "no MCP server, no streams Ingress")
	}
	m := render(t, h, "-f", production)
	main, streams := ingressNamed(t, m, "pcourt-compat-edge"), ingressNamed(t, m, "pcourt-compat-edge-streams")
	assert.Equal(t, map[string]string{
		// The operator's annotations, the main Ingress's body size among
		// them (an MCP message is at most 1 MiB), then the stream's.
		"nginx.ingress.kubernetes.io/proxy-body-size":    main.Annotations["nginx.ingress.kubernetes.io/proxy-body-size"],
		"nginx.ingress.kubernetes.io/proxy-buffering":    "off",
		"nginx.ingress.kubernetes.io/proxy-read-timeout": nginxtest.StreamReadTimeout,
		"nginx.ingress.kubernetes.io/proxy-send-timeout": nginxtest.StreamReadTimeout,
		"nginx.ingress.kubernetes.io/use-regex":          "true",
	}, streams.Annotations)
	assert.Equal(t, main.Spec.IngressClassName, streams.Spec.IngressClassName)
	assert.Equal(t, main.Spec.TLS, streams.Spec.TLS)
	require.Len(t, streams.Spec.Rules, 1)
	assert.Equal(t, main.Spec.Rules[0].Host, streams.Spec.Rules[0].Host)
	var paths []string
	for _, p := range streams.Spec.Rules[0].HTTP.Paths {
		paths = append(paths, p.Path)
		assert.Equal(t, main.Spec.Rules[0].HTTP.Paths[0].Backend, p.Backend, "to the edge, as every other path")
	}
	assert.Equal(t, nginxtest.StreamPaths, paths)
	lifetime, err := time.ParseDuration(mcpEnv(t, m)["MCP_STREAM_LIFETIME"])
	require.NoError(t, err)
	timeout, err := strconv.Atoi(nginxtest.StreamReadTimeout)
	require.NoError(t, err)
	assert.Less(t, lifetime, time.Duration(timeout)*time.Second, "a stream ends before the ingress would cut it")
}

// mcpEnv is the MCP server's container environment.
func mcpEnv(t *testing.T, m *helmcheck.Manifests) map[string]string {
	t.Helper()
	for _, d := range m.Deployments {
		if d.Name == "pcourt-mcp" {
			return env(d.Spec.Template.Spec.Containers[0])
		}
	}
	t.Fatal("no mcp Deployment")
	return nil
}

// The award signing keys reach cases from a Secret, mounted read-only
// where AWARD_SIGNING_KEYS_DIR says; only development makes a throwaway
// key instead, and then mounts nothing.
func TestAwardKeysComeFromASecret(t *testing.T) {
	h := helm(t)
	cases := func(m *helmcheck.Manifests) (corev1.PodSpec, corev1.Container) {
		t.Helper()
		for _, d := range m.Deployments {
			if d.Name == "pcourt-cases" {
				return d.Spec.Template.Spec, d.Spec.Template.Spec.Containers[0]
			}
		}
		t.Fatal("no cases Deployment")
		return corev1.PodSpec{}, corev1.Container{}
	}
	for _, values := range [][]string{nil, {"-f", production}} {
		pod, c := cases(render(t, h, values...))
		e := env(c)
		require.Equal(t, "/etc/pcourt/award-keys", e["AWARD_SIGNING_KEYS_DIR"], values)
		require.NotContains(t, e, "AWARD_DEV_EPHEMERAL_KEY", values)
		i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == "award-keys" })
		require.GreaterOrEqual(t, i, 0, "the pod has the award keys volume")
		require.NotNil(t, pod.Volumes[i].Secret)
		assert.Equal(t, "pcourt-award-signing-keys", pod.Volumes[i].Secret.SecretName)
		j := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "award-keys" })
		require.GreaterOrEqual(t, j, 0, "the container mounts the award keys")
		assert.Equal(t, e["AWARD_SIGNING_KEYS_DIR"], c.VolumeMounts[j].MountPath)
		assert.True(t, c.VolumeMounts[j].ReadOnly)
	}

	pod, c := cases(render(t, h, "--set", "services.cases.awardKeysSecret=", "--set", "services.cases.devEphemeralAwardKey=true"))
	e := env(c)
	assert.Equal(t, "true", e["AWARD_DEV_EPHEMERAL_KEY"])
	assert.NotContains(t, e, "AWARD_SIGNING_KEYS_DIR")
	for _, v := range pod.Volumes {
		assert.NotEqual(t, "award-keys", v.Name, "a development key needs no Secret")
	}
}

// Evidence files go to the bucket the values name, with the access key
// from an existing Secret; uploads are spooled in a writable, size-limited
// emptyDir, as the root file system is read-only. Only development keeps
// the files themselves in the pod.
func TestEvidenceStore(t *testing.T) {
	h := helm(t)
	cases := func(m *helmcheck.Manifests) (corev1.PodSpec, corev1.Container) {
		t.Helper()
		for _, d := range m.Deployments {
			if d.Name == "pcourt-cases" {
				return d.Spec.Template.Spec, d.Spec.Template.Spec.Containers[0]
			}
		}
		t.Fatal("no cases Deployment")
		return corev1.PodSpec{}, corev1.Container{}
	}
	volume := func(pod corev1.PodSpec, c corev1.Container, name string) (corev1.Volume, corev1.VolumeMount) {
		t.Helper()
		i := slices.IndexFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == name })
		require.GreaterOrEqual(t, i, 0, "the pod has volume %s", name)
		j := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == name })
		require.GreaterOrEqual(t, j, 0, "the container mounts %s", name)
		return pod.Volumes[i], c.VolumeMounts[j]
	}
	for _, tc := range []struct {
		values                   []string
		endpoint, bucket, region string
		spool                    string
	}{
		{nil, "s3.amazonaws.com", "pcourt-evidence", "", "2Gi"},
		{[]string{"-f", production}, "s3.eu-west-1.amazonaws.com", "pcourt-evidence-production", "eu-west-1", "4Gi"},
	} {
		pod, c := cases(render(t, h, tc.values...))
		e := env(c)
		assert.Equal(t, tc.endpoint, e["EVIDENCE_S3_ENDPOINT"], tc.values)
		assert.Equal(t, tc.bucket, e["EVIDENCE_S3_BUCKET"], tc.values)
		assert.Equal(t, tc.region, e["EVIDENCE_S3_REGION"], tc.values)
		assert.Equal(t, "true", e["EVIDENCE_S3_TLS"], tc.values)
		assert.NotContains(t, e, "EVIDENCE_STORE_DIR", "a bucket, not a directory")
		refs := map[string]*corev1.SecretKeySelector{}
		for _, ev := range c.Env {
			if ev.ValueFrom != nil && ev.ValueFrom.SecretKeyRef != nil {
				refs[ev.Name] = ev.ValueFrom.SecretKeyRef
			}
		}
		for name, key := range map[string]string{"EVIDENCE_S3_ACCESS_KEY_ID": "accessKeyId", "EVIDENCE_S3_SECRET_ACCESS_KEY": "secretAccessKey"} {
			require.Contains(t, refs, name, "%s comes from a Secret, never a value", name)
			assert.Equal(t, "pcourt-evidence-s3", refs[name].Name, name)
			assert.Equal(t, key, refs[name].Key, name)
			assert.NotContains(t, e, name)
		}
		v, m := volume(pod, c, "evidence-spool")
		require.NotNil(t, v.EmptyDir, "the spool is an emptyDir")
		require.NotNil(t, v.EmptyDir.SizeLimit)
		assert.Equal(t, tc.spool, v.EmptyDir.SizeLimit.String())
		assert.Equal(t, e["EVIDENCE_SPOOL_DIR"], m.MountPath)
		assert.False(t, m.ReadOnly, "uploads are written to the spool")
		require.True(t, *c.SecurityContext.ReadOnlyRootFilesystem, "the root file system stays read-only")
	}

	pod, c := cases(render(t, h, "--set", "services.cases.evidenceStore.s3.bucket=", "--set", "services.cases.evidenceStore.devEmptyDir=true",
		"--set", "services.cases.replicas=1", "--set", "services.cases.autoscaling.enabled=false"))
	e := env(c)
	v, m := volume(pod, c, "evidence-store")
	require.NotNil(t, v.EmptyDir)
	assert.Equal(t, e["EVIDENCE_STORE_DIR"], m.MountPath)
	assert.False(t, m.ReadOnly)
	for name := range e {
		assert.False(t, strings.HasPrefix(name, "EVIDENCE_S3_"), "%s: no bucket in development", name)
	}
}

// The x402r refund rail is off by default (cases then answers x402r
// executions as unavailable); on, it pays through the chart's facilitator
// with the operator's key from an existing Secret, never a value.
func TestRefundRail(t *testing.T) {
	h := helm(t)
	casesContainer := func(m *helmcheck.Manifests) corev1.Container {
		t.Helper()
		for _, d := range m.Deployments {
			if d.Name == "pcourt-cases" {
				return d.Spec.Template.Spec.Containers[0]
			}
		}
		t.Fatal("no cases Deployment")
		return corev1.Container{}
	}
	secretRefs := func(c corev1.Container) map[string]*corev1.SecretKeySelector {
		refs := map[string]*corev1.SecretKeySelector{}
		for _, ev := range c.Env {
			if ev.ValueFrom != nil && ev.ValueFrom.SecretKeyRef != nil {
				refs[ev.Name] = ev.ValueFrom.SecretKeyRef
			}
		}
		return refs
	}

	off := casesContainer(render(t, h))
	assert.NotContains(t, env(off), "X402R_NETWORKS")
	assert.NotContains(t, env(off), "FEES_PAY_TO", "without a fee payee appeal fees are invoiced")
	assert.NotContains(t, secretRefs(off), "X402R_OPERATOR_KEY")

	on := casesContainer(render(t, h, "-f", production))
	e, refs := env(on), secretRefs(on)
	assert.Equal(t, "https://facilitator.example", e["FACILITATOR_URL"])
	assert.Equal(t, "eip155:8453,eip155:84532", e["X402R_NETWORKS"])
	require.Contains(t, refs, "X402R_OPERATOR_KEY", "the operator's key comes from a Secret")
	assert.Equal(t, "pcourt-x402r-operator", refs["X402R_OPERATOR_KEY"].Name)
	assert.Equal(t, "operatorKey", refs["X402R_OPERATOR_KEY"].Key)
	assert.NotContains(t, e, "X402R_OPERATOR_KEY")
	require.Contains(t, refs, "FACILITATOR_AUTH_HEADER")
	assert.Equal(t, "pcourt-facilitator", refs["FACILITATOR_AUTH_HEADER"].Name)

	// Appeal fees go to the platform's one fee payee, filings'.
	fees := casesContainer(render(t, h, "--set", "services.filings.feesPayTo=0x00000000000000000000000000000000000000aa"))
	assert.Equal(t, "0x00000000000000000000000000000000000000aa", env(fees)["FEES_PAY_TO"])
}

// The MCP server is deployed in accounts' view by naming the Secret of its
// platform client: accounts then accepts <publicURL>/mcp as a resource and
// reads the client's id and secret from that Secret, never from a value.
// Without one, accounts knows no MCP server.
func TestAccountsKnowsTheMCPServerByItsClientsSecret(t *testing.T) {
	h := helm(t)
	accounts := func(m *helmcheck.Manifests) corev1.Container {
		t.Helper()
		for _, d := range m.Deployments {
			if d.Name == "pcourt-accounts" {
				return d.Spec.Template.Spec.Containers[0]
			}
		}
		t.Fatal("no accounts Deployment")
		return corev1.Container{}
	}
	for _, ev := range accounts(render(t, h)).Env {
		assert.False(t, strings.HasPrefix(ev.Name, "MCP_"), "%s without an MCP client Secret", ev.Name)
	}

	for _, tc := range []struct {
		values   []string
		resource string
	}{
		{[]string{"--set", "publicURL=https://api.pcourt.example/", "--set", "services.accounts.mcpClientSecret.name=pcourt-mcp-client"}, "https://api.pcourt.example/mcp"},
		// The production values name the Secret, for the MCP server they deploy.
		{[]string{"-f", production}, "https://api.pcourt.example/mcp"},
	} {
		c := accounts(render(t, h, tc.values...))
		assert.Equal(t, tc.resource, env(c)["MCP_RESOURCE_URL"], "the MCP server's resource is under the public URL")
		refs := secretRefs(c)
		assert.Equal(t, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "pcourt-mcp-client"}, Key: "clientId"}, refs["MCP_CLIENT_ID"], tc.values)
		assert.Equal(t, corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "pcourt-mcp-client"}, Key: "clientSecret"}, refs["MCP_CLIENT_SECRET"], tc.values)
		assert.NotContains(t, env(c), "MCP_CLIENT_SECRET", "never a literal secret")
	}
}

// secretRefs returns the variables of a container that come from a key
// of a Secret.
func secretRefs(c corev1.Container) map[string]corev1.SecretKeySelector {
	refs := map[string]corev1.SecretKeySelector{}
	for _, ev := range c.Env {
		if ev.ValueFrom != nil && ev.ValueFrom.SecretKeyRef != nil {
			refs[ev.Name] = *ev.ValueFrom.SecretKeyRef
		}
	}
	return refs
}

// deployment returns the container of the chart's Deployment of a
// service, or false when the rendering has none.
func deployment(m *helmcheck.Manifests, name string) (corev1.Container, bool) {
	for _, d := range m.Deployments {
		if d.Name == "pcourt-"+name {
			return d.Spec.Template.Spec.Containers[0], true
		}
	}
	return corev1.Container{}, false
}

// The MCP server is off by default: nothing of it renders and the edge
// is given no upstream for /mcp. Enabled, it exchanges tokens as the
// client accounts knows, from the very Secret and keys accounts reads,
// calls the API through the edge's Service as the console does, reads
// the credential store in Redis like every service, and the edge routes
// /mcp to its Service. Enabled without that Secret, the chart refuses to
// render instead of deploying a server that cannot start.
func TestMCPServerDeploysWithTheAccountsClientSecret(t *testing.T) {
	h := helm(t)
	off := render(t, h)
	_, ok := deployment(off, "mcp")
	assert.False(t, ok, "no MCP server unless enabled")
	for _, s := range off.Services {
		assert.NotEqual(t, "pcourt-mcp", s.Name)
	}
	edge, ok := deployment(off, "compat-edge")
	require.True(t, ok)
	assert.NotContains(t, env(edge), "UPSTREAM_MCP_URL", "no upstream for a server that is not deployed")

	for _, values := range [][]string{
		{"-f", production},
		append(slices.Clone(enableMCP), "--set", "services.accounts.mcpClientSecret.idKey=id", "--set", "services.accounts.mcpClientSecret.secretKey=secret"),
	} {
		m := render(t, h, values...)
		mcp, ok := deployment(m, "mcp")
		require.True(t, ok, "an MCP server where enabled: %v", values)
		accounts, ok := deployment(m, "accounts")
		require.True(t, ok)
		console, ok := deployment(m, "console")
		require.True(t, ok)
		edge, ok := deployment(m, "compat-edge")
		require.True(t, ok)

		refs, accountsRefs := secretRefs(mcp), secretRefs(accounts)
		for _, name := range []string{"MCP_CLIENT_ID", "MCP_CLIENT_SECRET"} {
			require.Contains(t, refs, name, "%s comes from a Secret", name)
			assert.NotEmpty(t, refs[name].Name, name)
			assert.Equal(t, accountsRefs[name], refs[name], "%s: the MCP server's client is the one accounts knows, from the same Secret and key", name)
			assert.NotContains(t, env(mcp), name, "never a literal")
		}
		e := env(mcp)
		assert.Equal(t, env(console)["CONSOLE_API_URL"], e["MCP_API_URL"], "the MCP server calls the API through the edge's Service, as the console does")
		assert.Equal(t, env(accounts)["PUBLIC_BASE_URL"], e["PUBLIC_BASE_URL"], "its resource is under the public URL, the issuer accounts names")
		assert.Equal(t, env(accounts)["MCP_RESOURCE_URL"], strings.TrimSuffix(e["PUBLIC_BASE_URL"], "/")+"/mcp", "accounts issues tokens for the resource the server is")
		assert.NotEmpty(t, e["REDIS_ADDRS"], "it authenticates tokens from the credential store")
		assert.Equal(t, "mcp", e["OTEL_SERVICE_NAME"])
		assert.Equal(t, ":8090", e["HTTP_ADDR"])
		assert.Equal(t, "http://pcourt-mcp:8090", env(edge)["UPSTREAM_MCP_URL"], "the edge routes /mcp and its metadata to the MCP server")

		// Every URL the services are given names a Service of the
		// rendering, on a port it has.
		urls := map[string]string{"MCP_API_URL": e["MCP_API_URL"]}
		for k, v := range env(edge) {
			if strings.HasPrefix(k, "UPSTREAM_") {
				urls[k] = v
			}
		}
		for k, raw := range urls {
			host, port, found := strings.Cut(strings.TrimPrefix(raw, "http://"), ":")
			require.True(t, found, "%s=%s names a port", k, raw)
			assert.True(t, slices.ContainsFunc(m.Services, func(s *corev1.Service) bool {
				return s.Name == host && slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return strconv.Itoa(int(p.Port)) == port })
			}), "%s=%s: a Service of the chart on that port", k, raw)
		}
		assert.True(t, slices.ContainsFunc(m.HPAs, func(a *autoscalingv2.HorizontalPodAutoscaler) bool { return a.Name == "pcourt-mcp" }), "stateless: it scales on CPU like the others")
	}

	// Enabled with no Secret at all is in TestRefusedValues.
	refuse(t, h, "services.mcp.enabled needs services.accounts.mcpClientSecret.name", "-f", production, "--set", "services.accounts.mcpClientSecret.name=")
}

// Values that must not render: each is a mistake an operator can make.
func TestRefusedValues(t *testing.T) {
	h := helm(t)
	for name, tc := range map[string]struct {
		set  []string
		want string
	}{
		"live readiness paying the public dev account": {[]string{"services.readiness.environment=live"}, "public development account"},
		"webhooks without signing keys":                {[]string{"services.webhooks.signingKeysSecret="}, "signingKeysSecret"},
		"cases without award keys":                     {[]string{"services.cases.awardKeysSecret="}, "awardKeysSecret"},
		"sentinel without a master":                    {[]string{"redis.mode=sentinel"}, "sentinelMaster"},
		"no Kafka":                                     {[]string{"kafka.brokers=null"}, "kafka.brokers"},
		"edge hops with no proxy to count them behind": {[]string{"podNetworkCIDRs=null"}, "trustedProxies"},
		"SMTP still set on the edge":                   {[]string{"services.compat-edge.smtp.host=smtp.example"}, "moved to services.compat-controller.smtp"},
		"cases without an evidence bucket":             {[]string{"services.cases.evidenceStore.s3.bucket="}, "evidenceStore.s3.bucket must name"},
		"an evidence bucket without its Secret":        {[]string{"services.cases.evidenceStore.s3.existingSecret="}, "evidenceStore.s3.existingSecret"},
		"an evidence bucket without an endpoint":       {[]string{"services.cases.evidenceStore.s3.endpoint="}, "evidenceStore.s3.endpoint"},
		"a bucket and a dev directory at once":         {[]string{"services.cases.evidenceStore.devEmptyDir=true"}, "both set"},
		"a refund rail without its operator's Secret":  {[]string{"services.cases.refundRail.enabled=true"}, "refundRail.existingSecret"},
		"the MCP server without its client's Secret":   {[]string{"services.mcp.enabled=true"}, "services.mcp.enabled needs services.accounts.mcpClientSecret.name"},
		"a dev evidence directory in two replicas": {[]string{"services.cases.evidenceStore.s3.bucket=", "services.cases.evidenceStore.devEmptyDir=true"},
			"needs services.cases.replicas: 1"},
	} {
		t.Run(name, func(t *testing.T) {
			args := []string{"template", "pcourt", chart, "--kube-version", helmcheck.KubeVersion}
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			_, err := helmcheck.Helm(h, args...)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// The strict decoder is what catches a misspelt field: prove it does.
func TestDecodeIsStrict(t *testing.T) {
	_, err := helmcheck.Decode([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replica: 2\n"))
	require.ErrorContains(t, err, "replica")
	_, err = helmcheck.Decode([]byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec:\n  ports:\n    - port: eighty\n"))
	require.Error(t, err, "a wrong type fails")
	_, err = helmcheck.Decode([]byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: x\n"))
	require.ErrorContains(t, err, "not expected", "the chart renders no Secret")
}

func TestCheckFindsBrokenWiring(t *testing.T) {
	m, err := helmcheck.Decode([]byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: a
spec:
  replicas: 1
  selector:
    matchLabels: {app: a}
  template:
    metadata:
      labels: {app: b}
    spec:
      containers:
        - name: a
          image: a
          ports: [{name: http, containerPort: 8080}]
          env: [{name: HTTP_TRUSTED_HOPS, value: "1"}]
          volumeMounts:
            - {name: keys, mountPath: /keys}
            - {name: scratch, mountPath: /scratch}
      volumes:
        - {name: keys, secret: {secretName: keys}}
        - {name: scratch, emptyDir: {}}
---
apiVersion: v1
kind: Service
metadata:
  name: a
spec:
  selector: {app: b}
  ports: [{name: http, port: 80, targetPort: web}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: a
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: missing}
  maxReplicas: 3
`))
	require.NoError(t, err)
	err = helmcheck.Check(m)
	require.Error(t, err)
	for _, want := range []string{
		"selector does not select its own pods",
		"maxUnavailable 0",
		"no HTTP liveness probe",
		"no HTTP readiness probe",
		"resources must request",
		"must run as non-root",
		"read-only",
		"targets web",
		"not a Deployment of the chart",
		"spread across nodes and zones",
		"HTTP_TRUSTED_HOPS=1 without HTTP_TRUSTED_PROXIES",
		"mounts keys writable",
		"mounts scratch writable: only an emptyDir with a sizeLimit",
	} {
		assert.ErrorContains(t, err, want)
	}
}

// The CompatibilityFamily CRD: the names the compat-controller is
// written against, a structural schema, and the shape of its fields.
func TestCompatibilityFamilyCRD(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chart, "crds", "compatibilityfamilies.yaml"))
	require.NoError(t, err)
	m, err := helmcheck.Decode(raw)
	require.NoError(t, err)
	require.Len(t, m.CRDs, 1)
	crd := m.CRDs[0]
	assert.Equal(t, "compatibilityfamilies.compat.pcourt.dev", crd.Name)
	assert.Equal(t, "compat.pcourt.dev", crd.Spec.Group)
	assert.Equal(t, "Namespaced", string(crd.Spec.Scope))
	assert.Equal(t, "CompatibilityFamily", crd.Spec.Names.Kind)
	assert.Equal(t, "compatibilityfamilies", crd.Spec.Names.Plural)
	require.Len(t, crd.Spec.Versions, 1)
	v := crd.Spec.Versions[0]
	assert.Equal(t, "v1alpha1", v.Name)
	assert.True(t, v.Served && v.Storage)
	require.NotNil(t, v.Subresources)
	assert.NotNil(t, v.Subresources.Status, "status is a subresource: the controller writes it alone")
	var columns []string
	for _, c := range v.AdditionalPrinterColumns {
		columns = append(columns, c.JSONPath)
	}
	assert.Subset(t, columns, []string{".spec.family", ".spec.stage", ".spec.generalAvailabilityDate", ".status.windowEnd"})

	require.NoError(t, helmcheck.CheckCRDSchema(crd))
	root := v.Schema.OpenAPIV3Schema
	prop := func(path ...string) string {
		p := helmcheck.Property(root, path...)
		require.NotNil(t, p, "%v", path)
		return p.Type
	}
	assert.Equal(t, []string{"v2-cases", "v2-filings", "website-cases"}, helmcheck.Enum(helmcheck.Property(root, "spec", "family")))
	assert.Equal(t, []string{"brownout", "retired", "warn"}, helmcheck.Enum(helmcheck.Property(root, "spec", "stage")))
	assert.Equal(t, "string", prop("spec", "generalAvailabilityDate"))
	assert.NotEmpty(t, helmcheck.Property(root, "spec", "generalAvailabilityDate").Pattern)
	for _, f := range []string{"integration", "sunset", "approvedBy", "approvedAt"} {
		assert.Equal(t, "string", prop("spec", "extensions", "[]", f), f)
	}
	assert.Equal(t, "date-time", helmcheck.Property(root, "spec", "extensions", "[]", "approvedAt").Format)
	for _, f := range []string{"start", "end"} {
		assert.Equal(t, "date-time", helmcheck.Property(root, "spec", "brownouts", "[]", f).Format, f)
	}
	assert.Equal(t, "string", prop("status", "windowEnd"))
	assert.Equal(t, "object", prop("status", "nextMilestone"), "the next notice: its name and when it is due")
	for _, f := range []string{"type", "status", "observedGeneration", "lastTransitionTime", "reason", "message"} {
		prop("status", "conditions", "[]", f)
	}
}

// The chart is rendered for the Kubernetes release whose kube-apiserver
// tools/kubeassets builds (make kube-assets), which accepts it in the dry
// run.
func TestKubeVersionIsTheAPIServersRelease(t *testing.T) {
	b, err := os.ReadFile("../kubeassets/go.mod")
	require.NoError(t, err)
	f, err := modfile.ParseLax("go.mod", b, nil)
	require.NoError(t, err)
	for _, r := range f.Require {
		if r.Mod.Path == "k8s.io/kubernetes" {
			require.Equal(t, "v"+helmcheck.KubeVersion, r.Mod.Version)
			return
		}
	}
	t.Fatal("tools/kubeassets/go.mod requires no k8s.io/kubernetes")
}
