package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// `SERVICE_API_CANONICAL_ROUTES=true SERVICE_API_V2_CASES_GA=2026-01-15
// make run` hands those settings to the edge and to the compat-controller,
// whose notices follow the same policy; the controller runs without
// Kubernetes.
func TestTheEdgeGetsTheCallersCompatibilitySettings(t *testing.T) {
	compat := compatEnv([]string{"HOME=/root", "SERVICE_API_V2_CASES_GA=2026-01-15", "SERVICE_API_CANONICAL_ROUTES=true", "XSERVICE_API_Y=1"})
	require.Equal(t, []string{"SERVICE_API_CANONICAL_ROUTES=true", "SERVICE_API_V2_CASES_GA=2026-01-15"}, compat)

	services := stackServices(config{EdgePort: 18080, Compat: compat}, &devRedis{addrs: []string{"127.0.0.1:6390"}, mode: "standalone"}, []string{"127.0.0.1:9092"}, "http://127.0.0.1:18085")
	edge := services[len(services)-1]
	require.Equal(t, "compat-edge", edge.name)
	require.Subset(t, edge.env, compat)
	var controller *service
	for _, s := range services[:len(services)-1] {
		if s.name == "compat-controller" {
			controller = s
			continue
		}
		for _, kv := range compat {
			require.NotContains(t, s.env, kv, "%s does not read them", s.name)
		}
	}
	require.NotNil(t, controller, "make run starts the compat-controller")
	require.Subset(t, controller.env, compat)
	require.Contains(t, controller.env, "EDGE_KUBERNETES=off")
}
