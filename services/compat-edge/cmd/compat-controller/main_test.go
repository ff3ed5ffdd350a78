package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/compat-edge/api/v1alpha1"
	"github.com/pcourt/pcourt/services/compat-edge/internal/controller"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

// syncBuffer is the process's stdout, read while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The whole binary against a real API server and a real Redis: it takes
// the lease it is configured with, marks a resource Ready, and saves its
// settings where the edge reads them; deleting the resource removes them.
func TestTheControllerFeedsTheEdgesStoreFromAnAPIServer(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set: run `make kube-assets` (make sets it then); the binary is not run against an API server")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	restCfg, err := env.Start()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, env.Stop()) })
	user, err := env.AddUser(envtest.User{Name: "compat-controller", Groups: []string{"system:masters"}}, nil)
	require.NoError(t, err)
	kubeconfig, err := user.KubeConfig()
	require.NoError(t, err)
	kubeconfigPath := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfigPath, kubeconfig, 0o600))

	scheme, err := controller.Scheme()
	require.NoError(t, err)
	k8s, err := client.New(restCfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "pcourt"}}))

	redisServer := redistest.Start(t)
	st := store.New(redisServer.Client(t))
	vars := map[string]string{
		"REDIS_ADDRS": redisServer.Addr, "HTTP_ADDR": "127.0.0.1:0",
		"KUBECONFIG": kubeconfigPath, "EDGE_KUBERNETES": "on", "EDGE_KUBERNETES_NAMESPACE": "pcourt",
		"EDGE_KUBERNETES_LEASE": "compat-controller-test",
	}
	runCtx, stop := context.WithCancel(ctx)
	var logs syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(runCtx, func(k string) string { return vars[k] }, &logs) }()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Error("compat-controller did not stop")
		}
	})

	require.NoError(t, k8s.Create(ctx, &v1alpha1.CompatibilityFamily{
		ObjectMeta: metav1.ObjectMeta{Name: "cases", Namespace: "pcourt"},
		Spec:       v1alpha1.CompatibilityFamilySpec{Family: "v2-cases", GeneralAvailabilityDate: "2026-01-15", Stage: "warn"},
	}))
	require.Eventually(t, func() bool {
		layer, err := st.Resources(ctx)
		return err == nil && layer[inventory.V2Cases].GA.String() == "2026-01-15"
	}, 30*time.Second, 50*time.Millisecond, "the resource's settings reach the edge's store; logs:\n%s", &logs)
	layer, err := st.Resources(ctx)
	require.NoError(t, err)
	require.Equal(t, "CompatibilityFamily pcourt/cases", layer[inventory.V2Cases].Source)

	require.Eventually(t, func() bool {
		var cf v1alpha1.CompatibilityFamily
		if err := k8s.Get(ctx, types.NamespacedName{Namespace: "pcourt", Name: "cases"}, &cf); err != nil {
			return false
		}
		return meta.IsStatusConditionTrue(cf.Status.Conditions, controller.ConditionReady)
	}, 30*time.Second, 50*time.Millisecond, "the status says Ready")

	var lease coordinationv1.Lease
	require.NoError(t, k8s.Get(ctx, types.NamespacedName{Namespace: "pcourt", Name: "compat-controller-test"}, &lease))
	require.NotNil(t, lease.Spec.HolderIdentity)
	require.NotEmpty(t, *lease.Spec.HolderIdentity, "the controller holds the lease it is configured with")

	require.NoError(t, k8s.Delete(ctx, &v1alpha1.CompatibilityFamily{ObjectMeta: metav1.ObjectMeta{Name: "cases", Namespace: "pcourt"}}))
	require.Eventually(t, func() bool {
		layer, err := st.Resources(ctx)
		_, still := layer[inventory.V2Cases]
		return err == nil && !still
	}, 30*time.Second, 50*time.Millisecond, "a deleted resource leaves the layer")
	require.True(t, strings.Contains(logs.String(), "watching CompatibilityFamily resources"), "it says what it watches")
}
