// Package helmcheck validates the Helm chart in deploy/helm/pcourt offline:
// it renders the chart with helm, decodes every manifest strictly into its
// Kubernetes API type (an unknown field or a wrong type fails), and checks
// what a decoder cannot: that selectors select, probes probe, ports exist
// and every workload runs unprivileged. Its test runs in `make test` and
// `make helm-lint`; it skips when no helm binary is found (`make helm`).
package helmcheck

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// KubeVersion is the Kubernetes version the chart is rendered for: a helm
// built from source assumes v1.20, below the chart's kubeVersion. It is
// the k8s.io/kubernetes release tools/kubeassets builds kube-apiserver of
// (TestKubeVersionIsTheAPIServersRelease).
const KubeVersion = "1.37.0"

// FindHelm returns $HELM, <repo>/bin/helm or helm on PATH, or "" when
// there is none.
func FindHelm(repo string) string {
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	if p := filepath.Join(repo, "bin", "helm"); isExecutable(p) {
		return p
	}
	if p, err := exec.LookPath("helm"); err == nil {
		return p
	}
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Helm runs the helm binary and returns its standard output; a failure
// carries its standard error.
func Helm(helm string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(helm, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("helm %s: %w\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes(), nil
}

// ServiceMonitor is the part of monitoring.coreos.com/v1 ServiceMonitor
// the chart writes; the Prometheus Operator's types are not worth their
// dependencies here, and strict decoding into this still refuses any
// field the chart should not write.
type ServiceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port        string `json:"port"`
			Path        string `json:"path"`
			Interval    string `json:"interval"`
			HonorLabels bool   `json:"honorLabels"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// KafkaTopic is the part of Strimzi's kafka.strimzi.io/v1beta2 KafkaTopic
// the chart writes, decoded strictly like the ServiceMonitor.
type KafkaTopic struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		TopicName  string            `json:"topicName"`
		Partitions int               `json:"partitions"`
		Replicas   int               `json:"replicas"`
		Config     map[string]string `json:"config"`
	} `json:"spec"`
}

// PrometheusRule is the part of monitoring.coreos.com/v1 PrometheusRule
// the chart writes, decoded strictly as ServiceMonitor is.
type PrometheusRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []Rule `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// Rule is one recording or alerting rule.
type Rule struct {
	Record      string            `json:"record,omitempty"`
	Alert       string            `json:"alert,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Manifests are the decoded objects of one rendering, by kind.
type Manifests struct {
	Deployments     []*appsv1.Deployment
	Services        []*corev1.Service
	ServiceAccounts []*corev1.ServiceAccount
	HPAs            []*autoscalingv2.HorizontalPodAutoscaler
	PDBs            []*policyv1.PodDisruptionBudget
	Ingresses       []*networkingv1.Ingress
	NetworkPolicies []*networkingv1.NetworkPolicy
	Roles           []*rbacv1.Role
	RoleBindings    []*rbacv1.RoleBinding
	ServiceMonitors []*ServiceMonitor
	PrometheusRules []*PrometheusRule
	ConfigMaps      []*corev1.ConfigMap
	CRDs            []*apiextensionsv1.CustomResourceDefinition
	KafkaTopics     []*KafkaTopic
}

// Count is the number of objects decoded.
func (m *Manifests) Count() int {
	return len(m.Deployments) + len(m.Services) + len(m.ServiceAccounts) + len(m.HPAs) + len(m.PDBs) +
		len(m.Ingresses) + len(m.NetworkPolicies) + len(m.Roles) + len(m.RoleBindings) + len(m.ServiceMonitors) + len(m.PrometheusRules) + len(m.ConfigMaps) + len(m.CRDs) + len(m.KafkaTopics)
}

// Decode splits a multi-document YAML stream and decodes each document
// strictly into the type its apiVersion and kind name. A kind the chart is
// not expected to render is an error.
func Decode(stream []byte) (*Manifests, error) {
	m := &Manifests{}
	var errs []error
	for i, doc := range splitDocuments(stream) {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			errs = append(errs, fmt.Errorf("document %d: %w", i, err))
			continue
		}
		if err := m.add(tm, doc); err != nil {
			errs = append(errs, fmt.Errorf("document %d (%s %s): %w", i, tm.APIVersion, tm.Kind, err))
		}
	}
	return m, errors.Join(errs...)
}

func (m *Manifests) add(tm metav1.TypeMeta, doc []byte) error {
	switch tm.APIVersion + " " + tm.Kind {
	case "apps/v1 Deployment":
		return decodeInto(doc, &m.Deployments)
	case "v1 Service":
		return decodeInto(doc, &m.Services)
	case "v1 ServiceAccount":
		return decodeInto(doc, &m.ServiceAccounts)
	case "autoscaling/v2 HorizontalPodAutoscaler":
		return decodeInto(doc, &m.HPAs)
	case "policy/v1 PodDisruptionBudget":
		return decodeInto(doc, &m.PDBs)
	case "networking.k8s.io/v1 Ingress":
		return decodeInto(doc, &m.Ingresses)
	case "networking.k8s.io/v1 NetworkPolicy":
		return decodeInto(doc, &m.NetworkPolicies)
	case "rbac.authorization.k8s.io/v1 Role":
		return decodeInto(doc, &m.Roles)
	case "rbac.authorization.k8s.io/v1 RoleBinding":
		return decodeInto(doc, &m.RoleBindings)
	case "monitoring.coreos.com/v1 ServiceMonitor":
		return decodeInto(doc, &m.ServiceMonitors)
	case "monitoring.coreos.com/v1 PrometheusRule":
		return decodeInto(doc, &m.PrometheusRules)
	case "v1 ConfigMap":
		return decodeInto(doc, &m.ConfigMaps)
	case "apiextensions.k8s.io/v1 CustomResourceDefinition":
		return decodeInto(doc, &m.CRDs)
	case "kafka.strimzi.io/v1beta2 KafkaTopic":
		return decodeInto(doc, &m.KafkaTopics)
	}
	return errors.New("a kind the chart is not expected to render")
}

// decodeInto decodes doc strictly (unknown fields, wrong types and
// duplicate keys fail) and appends it to list.
func decodeInto[T any](doc []byte, list *[]*T) error {
	v := new(T)
	if err := yaml.UnmarshalStrict(doc, v); err != nil {
		return err
	}
	*list = append(*list, v)
	return nil
}

// splitDocuments returns the non-empty documents of a YAML stream.
func splitDocuments(stream []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	flush := func() {
		if hasContent(cur.Bytes()) {
			docs = append(docs, append([]byte(nil), cur.Bytes()...))
		}
		cur.Reset()
	}
	for _, line := range bytes.SplitAfter(stream, []byte("\n")) {
		if t := bytes.TrimRight(line, " \r\n"); bytes.Equal(t, []byte("---")) {
			flush()
			continue
		}
		cur.Write(line)
	}
	flush()
	return docs
}

func hasContent(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if len(t) > 0 && t[0] != '#' {
			return true
		}
	}
	return false
}
