package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The edge faces the internet and runs without a ServiceAccount token: its
// binary links no Kubernetes client (the compat-controller, a binary of its
// own, is the one that talks to the API server).
func TestTheEdgeLinksNoKubernetesClient(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/pcourt/pcourt/services/compat-edge/internal/policy", "the list is the edge's")
	for _, dep := range deps {
		for _, forbidden := range []string{"k8s.io/client-go", "sigs.k8s.io/controller-runtime", "services/compat-edge/internal/controller"} {
			require.NotContains(t, dep, forbidden, "the edge links a Kubernetes client")
		}
	}
}
