package helmcheck_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// metricName finds the series names a PromQL expression reads: ours
// (pcourt_), go-redis's (db_client_) and the chart's recording rules
// (pcourt:).
var metricName = regexp.MustCompile(`\b(pcourt_[a-z0-9_]+|db_client_[a-z0-9_]+|pcourt:[a-z0-9_:]+)`)

// documentedMetrics are the names in the first column of
// docs/observability.md's metrics table. Each is scraped, by that name, in
// the test of the package that produces it (libs/httpserver, libs/outbox,
// libs/kafka, libs/redisclient, webhooks' dispatch, cases' caseflow), but
// pcourt_kafka_dead_letters_total, which libs/kafka's dead-letter counter
// produces.
func documentedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "docs", "observability.md"))
	require.NoError(t, err)
	out := map[string]bool{}
	row := regexp.MustCompile("(?m)^\\| `([a-z_:0-9]+)` \\|")
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = true
	}
	require.NotEmpty(t, out)
	return out
}

// TestMonitoringReadsOnlyMetricsTheServicesExport renders the production
// values: one PrometheusRule and the dashboard's ConfigMap, labelled for
// Grafana's sidecar; every ServiceMonitor keeps the pods' service label;
// and every series an alert, recording rule or panel reads is a recording
// rule of the chart or a metric docs/observability.md documents (with its
// histogram suffixes), so no alert waits on a name nothing exports. The
// expressions' brackets balance. The default values render neither.
func TestMonitoringReadsOnlyMetricsTheServicesExport(t *testing.T) {
	h := helm(t)
	require.Empty(t, render(t, h).PrometheusRules, "off by default")
	m := render(t, h, "-f", production)
	require.Len(t, m.PrometheusRules, 1)
	for _, sm := range m.ServiceMonitors {
		for _, ep := range sm.Spec.Endpoints {
			require.True(t, ep.HonorLabels, "ServiceMonitor %s keeps the service label", sm.Name)
		}
	}
	var dashboard string
	for _, cm := range m.ConfigMaps {
		if cm.Labels["grafana_dashboard"] == "1" {
			dashboard = cm.Data["pcourt.json"]
		}
	}
	require.NotEmpty(t, dashboard, "a ConfigMap labelled grafana_dashboard: \"1\" carries the dashboard")

	var exprs []string
	recorded := map[string]bool{}
	alerts := map[string]bool{}
	for _, g := range m.PrometheusRules[0].Spec.Groups {
		for _, r := range g.Rules {
			require.NotEmpty(t, r.Expr)
			exprs = append(exprs, r.Expr)
			if r.Record != "" {
				recorded[r.Record] = true
			}
			if r.Alert != "" {
				alerts[r.Alert] = true
				require.Contains(t, []string{"critical", "warning"}, r.Labels["severity"], r.Alert)
				require.NotEmpty(t, r.Annotations["summary"], r.Alert)
			}
		}
	}
	for _, a := range []string{"PcourtPartnerAPIErrorBudgetBurnFast", "PcourtPartnerAPIErrorBudgetBurnSlow", "PcourtOutboxBacklog",
		"PcourtConsumerLag", "PcourtDeadLetters", "PcourtWebhookDueQueue", "PcourtDeadlineSchedulerStopped"} {
		require.True(t, alerts[a], "alert %s", a)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal([]byte(dashboard), &d))
	require.NotEmpty(t, d.Panels)
	for _, p := range d.Panels {
		require.NotEmpty(t, p.Targets, p.Title)
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}

	documented := documentedMetrics(t)
	for _, e := range exprs {
		require.True(t, balanced(e), "unbalanced brackets: %s", e)
		names := metricName.FindAllString(e, -1)
		require.NotEmpty(t, names, "reads no metric of ours: %s", e)
		for _, n := range names {
			if recorded[n] {
				continue
			}
			base := n
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				base = strings.TrimSuffix(base, suffix)
			}
			require.True(t, documented[n] || documented[base], "%s reads %s, which docs/observability.md does not list", e, n)
		}
	}
}

func balanced(s string) bool {
	var stack []rune
	pairs := map[rune]rune{')': '(', ']': '[', '}': '{'}
	for _, c := range s {
		switch c {
		case '(', '[', '{':
			stack = append(stack, c)
		case ')', ']', '}':
			if len(stack) == 0 || stack[len(stack)-1] != pairs[c] {
				return false
			}
			stack = stack[:len(stack)-1]
		}
	}
	return len(stack) == 0
}
