package helmcheck_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pcourt/pcourt/tools/helmcheck"
)

var schema = filepath.Join(chart, "values.schema.json")

// refuse renders the chart with args and requires helm to refuse it with
// a message containing want.
func refuse(t *testing.T, h string, want string, args ...string) {
	t.Helper()
	_, err := helmcheck.Helm(h, append([]string{"template", "pcourt", chart, "--kube-version", helmcheck.KubeVersion}, args...)...)
	require.Error(t, err, "helm renders %v", args)
	assert.ErrorContains(t, err, want, args)
}

// peers describes who an ingress rule admits, one string per peer.
func peers(rule networkingv1.NetworkPolicyIngressRule) []string {
	var out []string
	for _, p := range rule.From {
		var parts []string
		if p.NamespaceSelector != nil {
			parts = append(parts, "namespace "+metav1.FormatLabelSelector(p.NamespaceSelector))
		}
		if p.PodSelector != nil {
			parts = append(parts, "pods "+metav1.FormatLabelSelector(p.PodSelector))
		}
		if p.IPBlock != nil {
			parts = append(parts, "addresses "+p.IPBlock.CIDR)
		}
		out = append(out, strings.Join(parts, " "))
	}
	slices.Sort(out)
	return out
}

// admitted maps a port name to who may open connections to it.
func admitted(p *networkingv1.NetworkPolicy) map[string][]string {
	out := map[string][]string{}
	for _, rule := range p.Spec.Ingress {
		for _, port := range rule.Ports {
			out[port.Port.String()] = append(out[port.Port.String()], peers(rule)...)
		}
	}
	return out
}

const (
	edgePods       = "pods app.kubernetes.io/instance=pcourt,app.kubernetes.io/name=compat-edge"
	consolePods    = "pods app.kubernetes.io/instance=pcourt,app.kubernetes.io/name=console"
	mcpPods        = "pods app.kubernetes.io/instance=pcourt,app.kubernetes.io/name=mcp"
	ingressNginx   = "namespace kubernetes.io/metadata.name=ingress-nginx pods app.kubernetes.io/component=controller,app.kubernetes.io/name=ingress-nginx"
	monitoringPods = "namespace kubernetes.io/metadata.name=monitoring pods <none>"
)

// Every service admits its port only from who calls it, and its admin
// port (metrics, pprof, the edge's compatibility admin API) only from the
// monitoring namespace.
func TestNetworkPolicies(t *testing.T) {
	h := helm(t)
	admin := []string{monitoringPods}
	// The console calls the public API through the edge's Service.
	want := map[string]map[string][]string{
		"compat-edge": {"http": {ingressNginx, consolePods}, "admin": admin},
		"readiness":   {"http": {edgePods}, "admin": admin},
		"filings":     {"http": {edgePods}, "admin": admin},
		"cases":       {"http": {edgePods}, "admin": admin},
		"webhooks":    {"http": {edgePods}, "admin": admin},
		"console":     {"http": {edgePods}, "admin": admin},
		"accounts":    {"http": {edgePods}, "admin": admin},
		// Its HTTP port serves the kubelet's probes alone.
		"compat-controller": {"admin": admin},
	}
	// Where the MCP server is deployed it admits the edge alone, and the
	// edge admits it: its tools call the API through the edge's Service.
	wantMCP := maps.Clone(want)
	wantMCP["compat-edge"] = map[string][]string{"http": {ingressNginx, consolePods, mcpPods}, "admin": admin}
	wantMCP["mcp"] = map[string][]string{"http": {edgePods}, "admin": admin}
	for _, tc := range []struct {
		values []string
		want   map[string]map[string][]string
	}{
		{nil, want},
		{[]string{"-f", production}, wantMCP},
		{enableMCP, wantMCP},
	} {
		values := tc.values
		m := render(t, h, values...)
		require.Len(t, m.NetworkPolicies, len(tc.want), "one per service")
		got := map[string]map[string][]string{}
		for _, p := range m.NetworkPolicies {
			assert.Equal(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, p.Spec.PolicyTypes, "%s: egress is left open (docs/operations.md)", p.Name)
			got[strings.TrimPrefix(p.Name, "pcourt-")] = admitted(p)
		}
		assert.Equal(t, tc.want, got, values)

		// The services believe X-Forwarded-For from the pod network, where
		// the policies leave the edge the only peer that reaches them.
		for _, d := range m.Deployments {
			e := env(d.Spec.Template.Spec.Containers[0])
			if d.Name == "pcourt-compat-edge" || d.Name == "pcourt-compat-controller" {
				continue
			}
			assert.NotEmpty(t, e["HTTP_TRUSTED_PROXIES"], d.Name)
			assert.NotContains(t, e, "HTTP_TRUSTED_HOPS", "%s: only the edge counts hops", d.Name)
		}
	}

	m := render(t, h, "--set", "networkPolicy.ingressController.ipBlocks={192.168.10.0/24}",
		"--set", "networkPolicy.monitoring.namespaceSelector.matchLabels.team=observability",
		"--set", "networkPolicy.monitoring.podSelector.matchLabels.app\\.kubernetes\\.io/name=prometheus")
	for _, p := range m.NetworkPolicies {
		a := admitted(p)
		assert.Equal(t, []string{"namespace kubernetes.io/metadata.name=monitoring,team=observability pods app.kubernetes.io/name=prometheus"}, a["admin"], p.Name)
		if p.Name == "pcourt-compat-edge" {
			assert.Equal(t, []string{"addresses 192.168.10.0/24", ingressNginx, consolePods}, a["http"])
		}
	}

	assert.Empty(t, render(t, h, "--set", "networkPolicy.enabled=false").NetworkPolicies)
}

// The checks refuse a policy that would not protect: a pod left out, a
// rule that admits everyone, a port the pods do not have.
func TestCheckFindsOpenNetworkPolicies(t *testing.T) {
	m, err := helmcheck.Decode([]byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: a}
spec:
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: a}}
    spec:
      containers: [{name: a, image: a, ports: [{name: http, containerPort: 8080}]}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: b}
spec:
  selector: {matchLabels: {app: b}}
  template:
    metadata: {labels: {app: b}}
    spec:
      containers: [{name: b, image: b}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: a}
spec:
  podSelector: {matchLabels: {app: a}}
  policyTypes: [Ingress]
  ingress:
    - ports: [{port: http}]
    - ports: [{port: admin}]
      from: [{namespaceSelector: {}}]
    - from: [{ipBlock: {cidr: 0.0.0.0/0}}]
`))
	require.NoError(t, err)
	err = helmcheck.Check(m)
	for _, want := range []string{
		"rule 0 names no peer, so it admits every source",
		"rule 1 admits a port the pods of a do not have",
		"rule 1 admits every namespace",
		"rule 2 names no port",
		"rule 2 admits every address",
		"Deployment b: its pods are selected by 0 NetworkPolicies",
	} {
		assert.ErrorContains(t, err, want)
	}
}

// Each image is <repository>/<service>:<tag> until its digest pins it.
func TestImagesByDigest(t *testing.T) {
	h := helm(t)
	images := func(m *helmcheck.Manifests) map[string]string {
		out := map[string]string{}
		for _, d := range m.Deployments {
			out[strings.TrimPrefix(d.Name, "pcourt-")] = d.Spec.Template.Spec.Containers[0].Image
		}
		return out
	}
	for name, image := range images(render(t, h)) {
		assert.Equal(t, "pcourt/"+name+":dev", image)
	}
	for name, image := range images(render(t, h, "-f", production)) {
		assert.Regexp(t, `^registry\.example\.com/pcourt/`+name+`@sha256:[a-f0-9]{64}$`, image, "production pins every image")
	}

	digest := "sha256:" + strings.Repeat("ab", 32)
	got := images(render(t, h, "--set", "services.cases.image.digest="+digest, "--set-string", "services.webhooks.image.tag=1.2.3"))
	assert.Equal(t, "pcourt/cases@"+digest, got["cases"])
	assert.Equal(t, "pcourt/webhooks:1.2.3", got["webhooks"], "a service's tag replaces the global one for it alone")
	assert.Equal(t, "pcourt/filings:dev", got["filings"])

	refuse(t, h, "/image/tag", "--set", "image.tag="+digest)
	refuse(t, h, "/services/cases/image/tag", "--set", "services.cases.image.tag="+digest)
	refuse(t, h, "/services/cases/image/digest", "--set", "services.cases.image.digest=sha256:abc")
	refuse(t, h, "/services/cases/image/digest", "--set", "services.cases.image.digest="+strings.ToUpper(digest))
	refuse(t, h, "image.digest must pin the image", "--set", "image.requireDigest=true")
	refuse(t, h, "services.filings.image.digest must pin the image", "-f", production, "--set", "services.filings.image.digest=")
	// Past the schema (--skip-schema-validation), the template still
	// refuses a digest given as a tag.
	refuse(t, h, "is a digest: set services.", "--skip-schema-validation", "--set", "image.tag="+digest)
}

// GOMAXPROCS follows the CPU request, rounded up by the downward API
// (divisor 1), unless the values leave it to the runtime or set it.
func TestGOMAXPROCSFromTheCPURequest(t *testing.T) {
	h := helm(t)
	gomaxprocs := func(c corev1.Container) []corev1.EnvVar {
		var out []corev1.EnvVar
		for _, e := range c.Env {
			if e.Name == "GOMAXPROCS" {
				out = append(out, e)
			}
		}
		return out
	}
	for _, values := range [][]string{nil, {"-f", production}} {
		for _, d := range render(t, h, values...).Deployments {
			c := d.Spec.Template.Spec.Containers[0]
			got := gomaxprocs(c)
			require.Len(t, got, 1, d.Name)
			require.NotNil(t, got[0].ValueFrom, d.Name)
			ref := got[0].ValueFrom.ResourceFieldRef
			require.NotNil(t, ref, "%s: GOMAXPROCS from the downward API", d.Name)
			assert.Equal(t, c.Name, ref.ContainerName, d.Name)
			assert.Equal(t, "requests.cpu", ref.Resource, d.Name)
			assert.Equal(t, "1", ref.Divisor.String(), "%s: whole CPUs, rounded up", d.Name)
			assert.False(t, c.Resources.Requests.Cpu().IsZero(), "%s: a request to follow", d.Name)
		}
	}
	for _, d := range render(t, h, "--set", "defaults.gomaxprocsFromCPURequest=false").Deployments {
		assert.Empty(t, gomaxprocs(d.Spec.Template.Spec.Containers[0]), "%s: left to the runtime", d.Name)
	}
	for _, d := range render(t, h, "--set-string", "services.cases.env.GOMAXPROCS=3").Deployments {
		got := gomaxprocs(d.Spec.Template.Spec.Containers[0])
		require.Len(t, got, 1, d.Name)
		if d.Name == "pcourt-cases" {
			assert.Equal(t, "3", got[0].Value, "an explicit GOMAXPROCS wins")
		}
	}
}

// stopAfterDrain is what each service stops after its HTTP server, one
// component after the other (libs/lifecycle), and how long each may take.
var stopAfterDrain = map[string]time.Duration{
	"readiness": 0, // the outbox relay and the reconciler return at cancellation
	"filings":   0,
	"cases":     10 * time.Second, // the case-opened consumer's message in hand (libs/kafka DrainTimeout, 10 s)
	"webhooks":  20 * time.Second, // the consumer (10 s), then the sends in flight (WEBHOOK_ATTEMPT_TIMEOUT, 10 s)
	// the legacy-use recorder's last flush (5 s)
	"compat-edge": 5 * time.Second,
	"console":     0,
	"accounts":    0,
	"mcp":         0,
	// controller-runtime's manager lets its reconcilers finish (30 s)
	"compat-controller": 30 * time.Second,
}

// closing is the clients' close and the traces' flush after the last
// component.
const closing = 5 * time.Second

// The grace period covers the whole ordered shutdown: the preStop sleep,
// the HTTP drain, then the components after it; and it follows the
// values it is made of.
func TestGracePeriodCoversTheOrderedShutdown(t *testing.T) {
	h := helm(t)
	grace := func(m *helmcheck.Manifests) map[string]time.Duration {
		out := map[string]time.Duration{}
		for _, d := range m.Deployments {
			pod := d.Spec.Template.Spec
			c := pod.Containers[0]
			drain, err := time.ParseDuration(env(c)["HTTP_SHUTDOWN_TIMEOUT"])
			require.NoError(t, err)
			name := strings.TrimPrefix(d.Name, "pcourt-")
			after, ok := stopAfterDrain[name]
			require.True(t, ok, "%s: what it stops after the drain is known", name)
			need := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds)*time.Second + drain + after + closing
			got := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
			assert.GreaterOrEqual(t, got, need, "%s: the grace period covers preStop %ds + drain %s + %s + %s",
				name, c.Lifecycle.PreStop.Sleep.Seconds, drain, after, closing)
			out[name] = got
		}
		return out
	}
	base := grace(render(t, h, enableMCP...))
	assert.Equal(t, 30*time.Second, base["readiness"], "5 s preStop + 20 s drain + 5 s closing")
	assert.Equal(t, 50*time.Second, base["webhooks"])
	assert.Equal(t, 30*time.Second, base["mcp"], "nothing stops after its server")

	longer := grace(render(t, h, append([]string{"--set", "defaults.shutdownTimeout=45s", "--set", "services.webhooks.preStopSleepSeconds=10"}, enableMCP...)...))
	require.Len(t, longer, len(base))
	for name, g := range longer {
		want := base[name] + 25*time.Second
		if name == "webhooks" {
			want += 5 * time.Second
		}
		assert.Equal(t, want, g, "%s follows its drain and preStop values", name)
	}
	refuse(t, h, "/defaults/shutdownTimeout", "--set", "defaults.shutdownTimeout=1m")
	refuse(t, h, "/defaults", "--set", "defaults.terminationGracePeriodSeconds=10")
}

// Pods spread across nodes and zones, and a zone rule never leaves a pod
// pending where nodes carry no zone label: it is ScheduleAnyway unless
// the values say otherwise, and tainted nodes are no domains.
func TestZoneSpreadDegradesGracefully(t *testing.T) {
	h := helm(t)
	for _, values := range [][]string{nil, {"-f", production}} {
		for _, d := range render(t, h, values...).Deployments {
			for _, tsc := range d.Spec.Template.Spec.TopologySpreadConstraints {
				require.NotNil(t, tsc.NodeTaintsPolicy, d.Name)
				assert.Equal(t, corev1.NodeInclusionPolicyHonor, *tsc.NodeTaintsPolicy, d.Name)
				assert.Nil(t, tsc.MinDomains, "%s: minDomains would hold pods back until zones exist", d.Name)
				if tsc.TopologyKey == "topology.kubernetes.io/zone" {
					assert.Equal(t, corev1.ScheduleAnyway, tsc.WhenUnsatisfiable, d.Name)
				}
			}
		}
	}
	for _, d := range render(t, h, "--set", "defaults.topologySpread.zones=DoNotSchedule").Deployments {
		for _, tsc := range d.Spec.Template.Spec.TopologySpreadConstraints {
			if tsc.TopologyKey == "topology.kubernetes.io/zone" {
				assert.Equal(t, corev1.DoNotSchedule, tsc.WhenUnsatisfiable, "a hard zone rule where the operator asks for one")
			}
		}
	}
	refuse(t, h, "/defaults/topologySpread/zones", "--set", "defaults.topologySpread.zones=Sometimes")
	refuse(t, h, "/defaults/topologySpread", "--set", "defaults.topologySpread.whenUnsatisfiable=DoNotSchedule")
}

// values.schema.json refuses what would render a broken or surprising
// installation; each is a mistake an operator can make.
func TestSchemaRefusesBadValues(t *testing.T) {
	h := helm(t)
	for name, tc := range map[string]struct {
		set  []string
		want string
	}{
		"a misspelt Redis mode":           {[]string{"redis.mode=clustr"}, "/redis/mode"},
		"a negative replica count":        {[]string{"services.cases.replicas=-1"}, "/services/cases/replicas"},
		"a negative default replica":      {[]string{"defaults.replicas=-1"}, "/defaults/replicas"},
		"an unknown top-level key":        {[]string{"replicaCount=3"}, "replicaCount"},
		"an unknown key of a service":     {[]string{"services.cases.replica=2"}, "replica"},
		"an unknown service":              {[]string{"services.case.port=9000"}, "case"},
		"a port a non-root pod can't use": {[]string{"services.readiness.port=80"}, "/services/readiness/port"},
		"a broker without its port":       {[]string{"kafka.brokers={kafka}"}, "/kafka/brokers/0"},
		"no broker at all":                {[]string{"kafka.brokers=null"}, "brokers"},
		"a public URL without a scheme":   {[]string{"publicURL=pcourt.example"}, "/publicURL"},
		"a CPU target above 100%":         {[]string{"defaults.autoscaling.targetCPUUtilizationPercentage=150"}, "targetCPUUtilizationPercentage"},
		"a trusted proxy that is no CIDR": {[]string{"services.compat-edge.trustedProxies={ingress}"}, "/services/compat-edge/trustedProxies/0"},
		"an ipBlock that is no CIDR":      {[]string{"networkPolicy.ingressController.ipBlocks={everyone}"}, "/networkPolicy/ingressController/ipBlocks/0"},
		"a live payee that is no address": {[]string{"services.readiness.payTo=me"}, "/services/readiness/payTo"},
		"a log level nobody reads":        {[]string{"logLevel=verbose"}, "/logLevel"},
		"a date not YYYY-MM-DD":           {[]string{"services.compat-edge.compatibility.start=15/01/2026"}, "compatibility/start"},
		"a secret reference without key":  {[]string{"redis.passwordSecret.key="}, "/redis/passwordSecret/key"},
		"a durable-write mode unknown":    {[]string{"redis.durableWrites.mode=sometimes"}, "/redis/durableWrites/mode"},
		"a shard count past 1024":         {[]string{"services.cases.shards=4096"}, "/services/cases/shards"},
		"an archive period unparsed":      {[]string{"services.cases.archiveAfter=90 days"}, "/services/cases/archiveAfter"},
		"a SASL mechanism Kafka ill-uses": {[]string{"kafka.sasl.mechanism=PLAIN"}, "/kafka/sasl/mechanism"},
		"a topic with no partitions":      {[]string{"kafka.topics.items[0].partitions=0"}, "/kafka/topics/items/0/partitions"},
		"an SLO of 100%":                  {[]string{"metrics.slo.availability=1"}, "/metrics/slo/availability"},
	} {
		t.Run(name, func(t *testing.T) { refuse(t, h, tc.want, setArgs(tc.set)...) })
	}

	// helm lint refuses a bad values file as a whole.
	bad := filepath.Join(t.TempDir(), "values.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("redis:\n  mode: clustr\nservices:\n  cases:\n    replicas: -1\n"), 0o600))
	_, err := helmcheck.Helm(h, "lint", "--strict", "--kube-version", helmcheck.KubeVersion, chart, "-f", bad)
	require.Error(t, err)
	assert.ErrorContains(t, err, "/redis/mode")
	assert.ErrorContains(t, err, "/services/cases/replicas")
}

func setArgs(set []string) []string {
	var args []string
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return args
}

// Every key of values.yaml and values-production.yaml is declared by the
// schema: a value added without its schema fails here, even where the
// schema would let it through.
func TestSchemaDeclaresEveryValue(t *testing.T) {
	for _, values := range []string{filepath.Join(chart, "values.yaml"), production} {
		undeclared, err := helmcheck.UndeclaredKeys(schema, values)
		require.NoError(t, err)
		assert.Empty(t, undeclared, "%s: keys values.schema.json does not declare", filepath.Base(values))
	}
}

// UndeclaredKeys finds what the schema does not name, at any depth, and
// takes free keys where the schema says any are allowed.
func TestUndeclaredKeysFindsThem(t *testing.T) {
	values := filepath.Join(t.TempDir(), "values.yaml")
	require.NoError(t, os.WriteFile(values, []byte(`
redis:
  modee: cluster
  tls:
    enabled: true
    verify: false
services:
  cases:
    archive:
      bucket: x
    env:
      ANY_NAME: "1"
    tolerations:
      - key: dedicated
        operator: Exists
defaults:
  nodeSelector:
    pool: services
networkPolicy:
  monitoring:
    namespaceSelector:
      matchLabels:
        team: observability
monitoring:
  enabled: true
`), 0o600))
	undeclared, err := helmcheck.UndeclaredKeys(schema, values)
	require.NoError(t, err)
	assert.Equal(t, []string{"monitoring", "redis.modee", "redis.tls.verify", "services.cases.archive"}, undeclared)
}

// The schema parses, its $refs resolve, and every service of the chart
// has its block in it.
func TestSchemaNamesEveryService(t *testing.T) {
	values := filepath.Join(t.TempDir(), "values.yaml")
	var b strings.Builder
	b.WriteString("services:\n")
	for _, s := range withMCP {
		b.WriteString("  " + s + ":\n    port: " + strconv.Itoa(9000) + "\n")
	}
	require.NoError(t, os.WriteFile(values, []byte(b.String()), 0o600))
	undeclared, err := helmcheck.UndeclaredKeys(schema, values)
	require.NoError(t, err)
	assert.Empty(t, undeclared)
}
