package controller_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/compat-edge/api/v1alpha1"
	"github.com/pcourt/pcourt/services/compat-edge/internal/controller"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

// apiServerClient starts etcd and kube-apiserver from $KUBEBUILDER_ASSETS
// (`make kube-assets`; make sets it once they are built) with the
// CompatibilityFamily CRD installed, and returns a client with the
// manager's scheme and the namespace created.
func apiServerClient(t *testing.T) client.Client {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set: run `make kube-assets` (make sets it then); the reconcilers are tested on the fake client only")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, env.Stop()) })
	scheme, err := controller.Scheme()
	require.NoError(t, err)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	require.NoError(t, c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	return c
}

func create(t *testing.T, c client.Client, name, fam string, mutate func(*v1alpha1.CompatibilityFamilySpec)) {
	t.Helper()
	cf := family(name, fam, time.Time{}, mutate)
	cf.Generation, cf.CreationTimestamp = 0, metav1.Time{} // the API server sets both
	require.NoError(t, c.Create(context.Background(), cf))
}

// The reconcilers against a real API server: the status goes through the
// status subresource, the server's resourceVersion shows what was written,
// the CRD's schema refuses what it can before any reconciler sees it, and
// the layer writer saves what the server lists.
func TestReconcilersAgainstAnAPIServer(t *testing.T) {
	c := apiServerClient(t)
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	r := &controller.StatusReconciler{Client: c, Now: func() time.Time { return now }}
	reconcile := func(name string) {
		t.Helper()
		_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
		require.NoError(t, err)
	}
	ready := func(cf *v1alpha1.CompatibilityFamily) *metav1.Condition {
		t.Helper()
		cond := meta.FindStatusCondition(cf.Status.Conditions, controller.ConditionReady)
		require.NotNil(t, cond)
		return cond
	}

	create(t, c, "cases", "v2-cases", nil)
	reconcile("cases")
	cases := get(t, c, "cases")
	require.Equal(t, metav1.ConditionTrue, ready(cases).Status)
	require.Equal(t, "2026-07-14", cases.Status.WindowEnd)
	require.Equal(t, int64(1), cases.Status.ObservedGeneration)
	reconcile("cases")
	require.Equal(t, cases.ResourceVersion, get(t, c, "cases").ResourceVersion, "an unchanged resource is not written again")

	// Created within the same second as "cases" or later: the name breaks a tie.
	create(t, c, "cases-2", "v2-cases", func(s *v1alpha1.CompatibilityFamilySpec) { s.GeneralAvailabilityDate = "2026-06-01" })
	reconcile("cases-2")
	require.Equal(t, controller.ReasonDuplicate, ready(get(t, c, "cases-2")).Reason)

	// The schema's pattern lets an impossible date through; the reconciler
	// refuses it.
	create(t, c, "filings", "v2-filings", func(s *v1alpha1.CompatibilityFamilySpec) { s.GeneralAvailabilityDate = "2026-02-30" })
	reconcile("filings")
	filings := get(t, c, "filings")
	require.Equal(t, controller.ReasonInvalidSpec, ready(filings).Reason)
	require.Contains(t, ready(filings).Message, "2026-02-30")

	// What the schema refuses never reaches the reconciler.
	for name, mutate := range map[string]func(*v1alpha1.CompatibilityFamilySpec){
		"stage":  func(s *v1alpha1.CompatibilityFamilySpec) { s.Stage = "paused" },
		"date":   func(s *v1alpha1.CompatibilityFamilySpec) { s.GeneralAvailabilityDate = "15.01.2026" },
		"family": nil,
	} {
		fam := "v2-cases"
		if name == "family" {
			fam = "v3-cases"
		}
		cf := family("refused-"+name, fam, time.Time{}, mutate)
		cf.Generation, cf.CreationTimestamp = 0, metav1.Time{}
		err := c.Create(ctx, cf)
		require.True(t, apierrors.IsInvalid(err), "%s: %v", name, err)
	}

	st := store.New(redistest.NewClient(t))
	edge := policy.NewCurrent(policy.Env{CanonicalRoutes: "true", CompatibilityStart: "2026-03-01"}, st.LoadLayers, time.Hour, quiet)
	writer := &controller.LayerWriter{Reader: c, Namespace: ns, Save: st.SaveResources, Logger: quiet}
	_, err := writer.Reconcile(ctx, ctrl.Request{})
	require.NoError(t, err)
	require.NoError(t, edge.Refresh(ctx))
	require.Equal(t, "2026-01-15", edge.Policy().Window(inventory.V2Cases).GA.String(), "the oldest resource governs")
	require.Equal(t, "2026-03-01", edge.Policy().Window(inventory.V2Filings).GA.String(), "an invalid resource: the environment")

	require.NoError(t, c.Delete(ctx, cases))
	_, err = writer.Reconcile(ctx, ctrl.Request{})
	require.NoError(t, err)
	require.NoError(t, edge.Refresh(ctx))
	require.Equal(t, "2026-06-01", edge.Policy().Window(inventory.V2Cases).GA.String(), "the remaining resource governs now")
}
