package helmcheck

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Check reports what a decoder misses: every problem, not the first.
func Check(m *Manifests) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	deployments := map[string]*appsv1.Deployment{}
	for _, d := range m.Deployments {
		deployments[d.Name] = d
		checkDeployment(d, m, fail)
	}
	hpaTargets := map[string]bool{}
	for _, h := range m.HPAs {
		ref := h.Spec.ScaleTargetRef
		d, ok := deployments[ref.Name]
		if ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || !ok {
			fail("HPA %s targets %s %s %q, which is not a Deployment of the chart", h.Name, ref.APIVersion, ref.Kind, ref.Name)
			continue
		}
		hpaTargets[ref.Name] = true
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 1 || h.Spec.MaxReplicas < *h.Spec.MinReplicas {
			fail("HPA %s: minReplicas must be set, at least 1 and at most maxReplicas", h.Name)
		}
		if len(h.Spec.Metrics) == 0 {
			fail("HPA %s has no metric", h.Name)
		}
		if d.Spec.Replicas != nil {
			fail("Deployment %s sets replicas although HPA %s scales it: every upgrade would reset the scale", d.Name, h.Name)
		}
	}
	for _, p := range m.PDBs {
		if (p.Spec.MinAvailable == nil) == (p.Spec.MaxUnavailable == nil) {
			fail("PDB %s must set exactly one of minAvailable and maxUnavailable", p.Name)
		}
		if n := selected(p.Spec.Selector, m.Deployments, fail, "PDB "+p.Name); n != 1 {
			fail("PDB %s selects the pods of %d Deployments, want exactly 1", p.Name, n)
		}
	}
	services := map[string]*corev1.Service{}
	for _, s := range m.Services {
		services[s.Name] = s
		checkService(s, m.Deployments, fail)
	}
	for _, ing := range m.Ingresses {
		for _, rule := range ing.Spec.Rules {
			if rule.HTTP == nil {
				continue
			}
			for _, path := range rule.HTTP.Paths {
				b := path.Backend.Service
				if b == nil {
					fail("Ingress %s: path %s has no service backend", ing.Name, path.Path)
					continue
				}
				s, ok := services[b.Name]
				if !ok {
					fail("Ingress %s routes to Service %q, which the chart does not render", ing.Name, b.Name)
					continue
				}
				if !slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool {
					return (b.Port.Name != "" && p.Name == b.Port.Name) || (b.Port.Number != 0 && p.Port == b.Port.Number)
				}) {
					fail("Ingress %s routes to a port of Service %s that it does not have", ing.Name, s.Name)
				}
				if b.Port.Name == "admin" {
					fail("Ingress %s exposes the admin port of %s", ing.Name, s.Name)
				}
			}
		}
	}
	for _, sm := range m.ServiceMonitors {
		if n := selectedServices(&sm.Spec.Selector, m.Services, fail, "ServiceMonitor "+sm.Name); len(n) != 1 {
			fail("ServiceMonitor %s selects %d Services, want exactly 1", sm.Name, len(n))
		} else {
			for _, ep := range sm.Spec.Endpoints {
				if !slices.ContainsFunc(n[0].Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == ep.Port }) {
					fail("ServiceMonitor %s scrapes port %q, which Service %s does not have", sm.Name, ep.Port, n[0].Name)
				}
			}
		}
	}
	checkNetworkPolicies(m, fail)
	roles := map[string]bool{}
	for _, r := range m.Roles {
		roles[r.Name] = true
	}
	accounts := map[string]bool{}
	for _, sa := range m.ServiceAccounts {
		accounts[sa.Name] = true
	}
	for _, rb := range m.RoleBindings {
		if rb.RoleRef.Kind != "Role" || !roles[rb.RoleRef.Name] {
			fail("RoleBinding %s refers to %s %q, which the chart does not render", rb.Name, rb.RoleRef.Kind, rb.RoleRef.Name)
		}
		for _, s := range rb.Subjects {
			if s.Kind != "ServiceAccount" || !accounts[s.Name] {
				fail("RoleBinding %s binds %s %q, which the chart does not render", rb.Name, s.Kind, s.Name)
			}
		}
	}
	for _, d := range m.Deployments {
		if sa := d.Spec.Template.Spec.ServiceAccountName; sa == "" || !accounts[sa] {
			fail("Deployment %s runs as ServiceAccount %q, which the chart does not render", d.Name, sa)
		}
	}
	return errors.Join(errs...)
}

func checkDeployment(d *appsv1.Deployment, m *Manifests, fail func(string, ...any)) {
	pod := d.Spec.Template
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
		fail("Deployment %s: its selector does not select its own pods", d.Name)
	}
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || d.Spec.Strategy.RollingUpdate == nil ||
		d.Spec.Strategy.RollingUpdate.MaxUnavailable == nil || d.Spec.Strategy.RollingUpdate.MaxUnavailable.IntValue() != 0 {
		fail("Deployment %s: rolling updates must have maxUnavailable 0", d.Name)
	}
	ps := pod.Spec
	psc := ps.SecurityContext
	if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		fail("Deployment %s: the pod's seccomp profile must be RuntimeDefault", d.Name)
	}
	keys := map[string]bool{}
	for _, c := range ps.TopologySpreadConstraints {
		keys[c.TopologyKey] = true
		if s, err := metav1.LabelSelectorAsSelector(c.LabelSelector); err != nil || !s.Matches(labels.Set(pod.Labels)) {
			fail("Deployment %s: a topology spread constraint does not select its pods", d.Name)
		}
	}
	if !keys["kubernetes.io/hostname"] || !keys["topology.kubernetes.io/zone"] {
		fail("Deployment %s: pods must spread across nodes and zones", d.Name)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range ps.Volumes {
		volumes[v.Name] = v
	}
	if len(ps.Containers) == 0 {
		fail("Deployment %s has no container", d.Name)
	}
	for _, c := range ps.Containers {
		where := fmt.Sprintf("Deployment %s, container %s", d.Name, c.Name)
		checkProbe(where, "liveness", c.LivenessProbe, "/livez", c, fail)
		checkProbe(where, "readiness", c.ReadinessProbe, "/readyz", c, fail)
		req, lim := c.Resources.Requests, c.Resources.Limits
		if req.Cpu().IsZero() || req.Memory().IsZero() || lim.Memory().IsZero() {
			fail("%s: resources must request cpu and memory and limit memory", where)
		}
		sc := c.SecurityContext
		nonRoot := (sc != nil && sc.RunAsNonRoot != nil && *sc.RunAsNonRoot) || (psc != nil && psc.RunAsNonRoot != nil && *psc.RunAsNonRoot)
		if !nonRoot {
			fail("%s: must run as non-root", where)
		}
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			fail("%s: the root file system must be read-only", where)
		}
		if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			fail("%s: privilege escalation must be off", where)
		}
		if sc == nil || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
			fail("%s: must drop ALL capabilities and add none", where)
		}
		if sc != nil && sc.Privileged != nil && *sc.Privileged {
			fail("%s: must not be privileged", where)
		}
		if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
			fail("%s: needs a preStop sleep, so endpoints drop the pod before it drains", where)
		}
		seen := map[string]bool{}
		values := map[string]string{}
		for _, e := range c.Env {
			if seen[e.Name] {
				fail("%s: env %s is set twice", where, e.Name)
			}
			seen[e.Name] = true
			values[e.Name] = e.Value
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && (e.ValueFrom.SecretKeyRef.Name == "" || e.ValueFrom.SecretKeyRef.Key == "") {
				fail("%s: env %s refers to a Secret without a name or key", where, e.Name)
			}
		}
		// The kubelet kills the pod when the grace period ends, whatever it
		// is doing: the preStop sleep and the HTTP drain come first, and
		// what stops after the drain (consumers, relay) needs time beyond.
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
			drain, err := time.ParseDuration(values["HTTP_SHUTDOWN_TIMEOUT"])
			if err != nil {
				fail("%s: HTTP_SHUTDOWN_TIMEOUT %q is not a duration", where, values["HTTP_SHUTDOWN_TIMEOUT"])
			} else if grace := ps.TerminationGracePeriodSeconds; grace == nil ||
				time.Duration(*grace)*time.Second <= time.Duration(c.Lifecycle.PreStop.Sleep.Seconds)*time.Second+drain {
				fail("%s: the grace period must outlast the preStop sleep and the HTTP drain (HTTP_SHUTDOWN_TIMEOUT)", where)
			}
		}
		// Hops are counted only behind the proxies named beside them; the
		// service refuses to start without them.
		if hops := values["HTTP_TRUSTED_HOPS"]; hops != "" && hops != "0" && values["HTTP_TRUSTED_PROXIES"] == "" {
			fail("%s: HTTP_TRUSTED_HOPS=%s without HTTP_TRUSTED_PROXIES, the proxies it counts hops behind", where, hops)
		}
		for _, vm := range c.VolumeMounts {
			v, ok := volumes[vm.Name]
			if !ok {
				fail("%s mounts volume %q, which the pod does not have", where, vm.Name)
				continue
			}
			// Only scratch space is writable: an emptyDir with a size
			// limit, so a runaway writer has its pod evicted instead of
			// filling the node's disk. Secrets and configuration never.
			if !vm.ReadOnly && (v.EmptyDir == nil || v.EmptyDir.SizeLimit == nil || v.EmptyDir.SizeLimit.IsZero()) {
				fail("%s mounts %s writable: only an emptyDir with a sizeLimit may be", where, vm.Name)
			}
		}
	}
}

func checkProbe(where, kind string, p *corev1.Probe, path string, c corev1.Container, fail func(string, ...any)) {
	if p == nil || p.HTTPGet == nil {
		fail("%s: no HTTP %s probe", where, kind)
		return
	}
	if p.HTTPGet.Path != path {
		fail("%s: the %s probe asks %s, want %s", where, kind, p.HTTPGet.Path, path)
	}
	if !hasPort(c, p.HTTPGet.Port) {
		fail("%s: the %s probe's port %s is not a container port", where, kind, p.HTTPGet.Port.String())
	}
}

func hasPort(c corev1.Container, port intstr.IntOrString) bool {
	return slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool {
		if port.Type == intstr.String {
			return p.Name == port.StrVal
		}
		return p.ContainerPort == port.IntVal
	})
}

func checkService(s *corev1.Service, deployments []*appsv1.Deployment, fail func(string, ...any)) {
	if len(s.Spec.Selector) == 0 {
		fail("Service %s has no selector", s.Name)
		return
	}
	sel := labels.SelectorFromSet(s.Spec.Selector)
	var pods []*appsv1.Deployment
	for _, d := range deployments {
		if sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			pods = append(pods, d)
		}
	}
	if len(pods) != 1 {
		fail("Service %s selects the pods of %d Deployments, want exactly 1", s.Name, len(pods))
		return
	}
	for _, p := range s.Spec.Ports {
		target := p.TargetPort
		if target.Type == intstr.Int && target.IntVal == 0 {
			target = intstr.FromInt32(p.Port)
		}
		if !slices.ContainsFunc(pods[0].Spec.Template.Spec.Containers, func(c corev1.Container) bool { return hasPort(c, target) }) {
			fail("Service %s: port %s targets %s, which no container of %s has", s.Name, p.Name, target.String(), pods[0].Name)
		}
	}
}

// selected counts the Deployments whose pods sel selects.
func selected(sel *metav1.LabelSelector, deployments []*appsv1.Deployment, fail func(string, ...any), what string) int {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || s.Empty() {
		fail("%s: an empty or invalid selector", what)
		return 0
	}
	n := 0
	for _, d := range deployments {
		if s.Matches(labels.Set(d.Spec.Template.Labels)) {
			n++
		}
	}
	return n
}

func selectedServices(sel *metav1.LabelSelector, services []*corev1.Service, fail func(string, ...any), what string) []*corev1.Service {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || s.Empty() {
		fail("%s: an empty or invalid selector", what)
		return nil
	}
	var out []*corev1.Service
	for _, svc := range services {
		if s.Matches(labels.Set(svc.Labels)) {
			out = append(out, svc)
		}
	}
	return out
}

// checkNetworkPolicies holds the policies to what makes them protect: once
// the chart renders any, every Deployment's pods are selected by exactly
// one (a pod no policy selects admits everyone), every rule names who it
// admits (a rule without from admits every source), on ports the pods
// have, and no peer is the whole cluster or the whole internet.
func checkNetworkPolicies(m *Manifests, fail func(string, ...any)) {
	if len(m.NetworkPolicies) == 0 {
		return
	}
	covered := map[string]int{}
	for _, p := range m.NetworkPolicies {
		sel, err := metav1.LabelSelectorAsSelector(&p.Spec.PodSelector)
		if err != nil || sel.Empty() {
			fail("NetworkPolicy %s: an empty or invalid pod selector (it would isolate every pod of the namespace)", p.Name)
			continue
		}
		var pods []*appsv1.Deployment
		for _, d := range m.Deployments {
			if sel.Matches(labels.Set(d.Spec.Template.Labels)) {
				pods = append(pods, d)
				covered[d.Name]++
			}
		}
		if len(pods) != 1 {
			fail("NetworkPolicy %s selects the pods of %d Deployments, want exactly 1", p.Name, len(pods))
			continue
		}
		if !slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
			fail("NetworkPolicy %s does not restrict ingress", p.Name)
		}
		for i, rule := range p.Spec.Ingress {
			if len(rule.From) == 0 {
				fail("NetworkPolicy %s: ingress rule %d names no peer, so it admits every source", p.Name, i)
			}
			if len(rule.Ports) == 0 {
				fail("NetworkPolicy %s: ingress rule %d names no port, so it admits every port", p.Name, i)
			}
			for _, port := range rule.Ports {
				if port.Port == nil || !slices.ContainsFunc(pods[0].Spec.Template.Spec.Containers, func(c corev1.Container) bool { return hasPort(c, *port.Port) }) {
					fail("NetworkPolicy %s: ingress rule %d admits a port the pods of %s do not have", p.Name, i, pods[0].Name)
				}
			}
			for _, peer := range rule.From {
				if peer.NamespaceSelector != nil && len(peer.NamespaceSelector.MatchLabels) == 0 && len(peer.NamespaceSelector.MatchExpressions) == 0 {
					fail("NetworkPolicy %s: ingress rule %d admits every namespace", p.Name, i)
				}
				if peer.IPBlock != nil && strings.HasSuffix(peer.IPBlock.CIDR, "/0") {
					fail("NetworkPolicy %s: ingress rule %d admits every address (%s)", p.Name, i, peer.IPBlock.CIDR)
				}
			}
		}
	}
	for _, d := range m.Deployments {
		if covered[d.Name] != 1 {
			fail("Deployment %s: its pods are selected by %d NetworkPolicies, want exactly 1", d.Name, covered[d.Name])
		}
	}
}
