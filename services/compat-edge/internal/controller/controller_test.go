package controller_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/compat-edge/api/v1alpha1"
	"github.com/pcourt/pcourt/services/compat-edge/internal/controller"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

const ns = "pcourt"

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func family(name, fam string, created time.Time, mutate func(*v1alpha1.CompatibilityFamilySpec)) *v1alpha1.CompatibilityFamily {
	cf := &v1alpha1.CompatibilityFamily{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Generation: 1, CreationTimestamp: metav1.NewTime(created)},
		Spec:       v1alpha1.CompatibilityFamilySpec{Family: fam, GeneralAvailabilityDate: "2026-01-15", Stage: "warn"},
	}
	if mutate != nil {
		mutate(&cf.Spec)
	}
	return cf
}

func date(t testing.TB, s string) policy.Date {
	t.Helper()
	d, err := policy.ParseDate(s)
	require.NoError(t, err)
	return d
}

func newClient(t testing.TB, objs ...client.Object) client.Client {
	t.Helper()
	scheme, err := controller.Scheme()
	require.NoError(t, err)
	return fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&v1alpha1.CompatibilityFamily{}).WithObjects(objs...).Build()
}

func get(t testing.TB, c client.Client, name string) *v1alpha1.CompatibilityFamily {
	t.Helper()
	var cf v1alpha1.CompatibilityFamily
	require.NoError(t, c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &cf))
	return &cf
}

func TestStatusReconciler(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) // between 90 and 30 days left
	tests := []struct {
		name          string
		objs          []client.Object
		target        string
		wantReady     metav1.ConditionStatus
		wantReason    string
		wantWindowEnd string
		wantNext      *v1alpha1.Milestone
		wantRequeue   time.Duration
	}{
		{"a valid family", []client.Object{family("cases", "v2-cases", t0, nil)}, "cases",
			metav1.ConditionTrue, controller.ReasonValid, "2026-07-14",
			&v1alpha1.Milestone{Name: "30-days-left", At: metav1.NewTime(time.Date(2026, 6, 14, 0, 0, 0, 0, time.UTC))},
			12 * time.Hour},
		{"an impossible date", []client.Object{family("cases", "v2-cases", t0, func(s *v1alpha1.CompatibilityFamilySpec) {
			s.GeneralAvailabilityDate = "2026-02-30"
		})}, "cases", metav1.ConditionFalse, controller.ReasonInvalidSpec, "", nil, 0},
		{"an unknown family", []client.Object{family("x", "v3-cases", t0, nil)}, "x", metav1.ConditionFalse, controller.ReasonInvalidSpec, "", nil, 0},
		{"an unknown stage", []client.Object{family("cases", "v2-cases", t0, func(s *v1alpha1.CompatibilityFamilySpec) { s.Stage = "paused" })},
			"cases", metav1.ConditionFalse, controller.ReasonInvalidSpec, "", nil, 0},
		{"a brownout longer than a day", []client.Object{family("cases", "v2-cases", t0, func(s *v1alpha1.CompatibilityFamilySpec) {
			s.Brownouts = []v1alpha1.Brownout{{Start: metav1.NewTime(now), End: metav1.NewTime(now.Add(25 * time.Hour))}}
		})}, "cases", metav1.ConditionFalse, controller.ReasonInvalidSpec, "", nil, 0},
		{"an extension without approver", []client.Object{family("cases", "v2-cases", t0, func(s *v1alpha1.CompatibilityFamilySpec) {
			s.Extensions = []v1alpha1.Extension{{Integration: "cred_a", Sunset: "2026-10-01"}}
		})}, "cases", metav1.ConditionFalse, controller.ReasonInvalidSpec, "", nil, 0},
		{"a younger duplicate", []client.Object{family("cases", "v2-cases", t0, nil), family("cases-2", "v2-cases", t0.Add(time.Hour), nil)},
			"cases-2", metav1.ConditionFalse, controller.ReasonDuplicate, "", nil, 0},
		{"the older of two governs", []client.Object{family("cases", "v2-cases", t0, nil), family("cases-2", "v2-cases", t0.Add(time.Hour), nil)},
			"cases", metav1.ConditionTrue, controller.ReasonValid, "2026-07-14",
			&v1alpha1.Milestone{Name: "30-days-left", At: metav1.NewTime(time.Date(2026, 6, 14, 0, 0, 0, 0, time.UTC))}, 12 * time.Hour},
		{"no date: ready, the date comes from the environment", []client.Object{family("web", "website-cases", t0, func(s *v1alpha1.CompatibilityFamilySpec) {
			s.GeneralAvailabilityDate = ""
		})}, "web", metav1.ConditionTrue, controller.ReasonValid, "", nil, 0},
		{"retired: the retirement is next", []client.Object{family("cases", "v2-cases", t0, func(s *v1alpha1.CompatibilityFamilySpec) {
			s.GeneralAvailabilityDate, s.Stage = "2025-11-04", "retired" // ends 2026-05-03
		})}, "cases", metav1.ConditionTrue, controller.ReasonValid, "2026-05-03",
			&v1alpha1.Milestone{Name: "retired", At: metav1.NewTime(time.Date(2026, 5, 3, 0, 0, 0, 0, time.UTC))}, 12 * time.Hour},
		{"nothing left to come", []client.Object{family("cases", "v2-cases", t0, func(s *v1alpha1.CompatibilityFamilySpec) {
			s.GeneralAvailabilityDate = "2025-06-01"
		})}, "cases", metav1.ConditionTrue, controller.ReasonValid, "2025-11-28", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.objs...)
			r := &controller.StatusReconciler{Client: c, Now: func() time.Time { return now }}
			res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: tc.target}})
			require.NoError(t, err)
			require.Equal(t, tc.wantRequeue, res.RequeueAfter)
			cf := get(t, c, tc.target)
			ready := meta.FindStatusCondition(cf.Status.Conditions, controller.ConditionReady)
			invalid := meta.FindStatusCondition(cf.Status.Conditions, controller.ConditionInvalid)
			require.NotNil(t, ready)
			require.NotNil(t, invalid)
			require.Equal(t, tc.wantReady, ready.Status)
			require.Equal(t, tc.wantReason, ready.Reason)
			require.Equal(t, tc.wantReason, invalid.Reason)
			require.NotEqual(t, ready.Status, invalid.Status, "Ready and Invalid never agree")
			require.Equal(t, tc.wantWindowEnd, cf.Status.WindowEnd)
			if tc.wantNext == nil {
				require.Nil(t, cf.Status.NextMilestone)
			} else {
				require.NotNil(t, cf.Status.NextMilestone)
				require.Equal(t, tc.wantNext.Name, cf.Status.NextMilestone.Name)
				require.True(t, tc.wantNext.At.Equal(&cf.Status.NextMilestone.At), "next at %s", cf.Status.NextMilestone.At)
			}
			require.Equal(t, int64(1), cf.Status.ObservedGeneration)
			for _, o := range tc.objs {
				if o.GetName() == tc.target {
					require.True(t, equality.Semantic.DeepEqual(o.(*v1alpha1.CompatibilityFamily).Spec, cf.Spec), "the spec is never written")
				}
			}
		})
	}
}

// Reconciling an unchanged resource writes nothing, and keeps the
// conditions' transition times; a change of spec moves them.
func TestStatusReconcilerIsIdempotent(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0.Add(30 * 24 * time.Hour)
	c := newClient(t, family("cases", "v2-cases", t0, nil))
	clock := now
	r := &controller.StatusReconciler{Client: c, Now: func() time.Time { return clock }}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "cases"}}
	_, err := r.Reconcile(context.Background(), req)
	require.NoError(t, err)
	first := get(t, c, "cases")

	clock = now.Add(time.Hour)
	_, err = r.Reconcile(context.Background(), req)
	require.NoError(t, err)
	second := get(t, c, "cases")
	require.Equal(t, first.ResourceVersion, second.ResourceVersion, "nothing written the second time")

	second.Spec.GeneralAvailabilityDate = "2026-13-01"
	second.Generation = 2
	require.NoError(t, c.Update(context.Background(), second))
	_, err = r.Reconcile(context.Background(), req)
	require.NoError(t, err)
	third := get(t, c, "cases")
	ready := meta.FindStatusCondition(third.Status.Conditions, controller.ConditionReady)
	require.Equal(t, metav1.ConditionFalse, ready.Status)
	require.Contains(t, ready.Message, "2026-13-01")
	require.Empty(t, third.Status.WindowEnd, "an invalid resource computes no window")

	_, err = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "gone"}})
	require.NoError(t, err, "a deleted resource is nothing to do")
}

// The layer writer saves the governing, valid resources into the edge's
// durable store, and an edge's policy, refreshed from that store, serves
// them over the admin API's settings; an invalid or duplicate resource
// changes nothing, a deletion removes its family, and reconciling an
// unchanged set writes nothing.
func TestLayerWriterFeedsTheEdgesPolicyThroughTheStore(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	approved := metav1.NewTime(t0)
	cases := family("cases", "v2-cases", t0, func(s *v1alpha1.CompatibilityFamilySpec) {
		s.Stage = "retired"
		s.Extensions = []v1alpha1.Extension{{Integration: "cred_a", Sunset: "2026-09-30", ApprovedBy: "ops@pcourt.dev", ApprovedAt: approved}}
	})
	dup := family("cases-2", "v2-cases", t0.Add(time.Hour), func(s *v1alpha1.CompatibilityFamilySpec) { s.GeneralAvailabilityDate = "2026-06-01" })
	broken := family("filings", "v2-filings", t0, func(s *v1alpha1.CompatibilityFamilySpec) { s.GeneralAvailabilityDate = "2026-02-30" })
	c := newClient(t, cases, dup, broken)

	st := store.New(redistest.NewClient(t))
	require.NoError(t, st.Save(ctx, inventory.V2Cases, policy.Settings{GA: date(t, "2026-02-01"), Stage: policy.Warn}))
	edge := policy.NewCurrent(policy.Env{CanonicalRoutes: "true", CompatibilityStart: "2026-03-01"}, st.LoadLayers, time.Hour, quiet)
	saved := 0
	writer := &controller.LayerWriter{Reader: c, Namespace: ns, Save: st.SaveResources, Saved: func(context.Context) { saved++ }, Logger: quiet}
	reconcile := func() {
		t.Helper()
		_, err := writer.Reconcile(ctx, ctrl.Request{})
		require.NoError(t, err)
		require.NoError(t, edge.Refresh(ctx))
	}
	reconcile()
	require.Equal(t, 1, saved)

	w := edge.Policy().Window(inventory.V2Cases)
	require.Equal(t, "2026-01-15", w.GA.String(), "the oldest resource governs, over the admin API's date")
	require.Equal(t, "CompatibilityFamily pcourt/cases", w.Source)
	require.Equal(t, policy.Retired, w.Stage)
	require.Equal(t, "2026-09-30", w.Extensions["cred_a"].String())
	f := edge.Policy().Window(inventory.V2Filings)
	require.Equal(t, "2026-03-01", f.GA.String(), "an invalid resource: the environment")
	require.Equal(t, policy.EnvCompatibilityStart, f.Source)

	reconcile()
	require.Equal(t, 1, saved, "an unchanged set of resources writes nothing")

	require.NoError(t, c.Delete(ctx, cases))
	reconcile()
	require.Equal(t, 2, saved)
	require.Equal(t, "2026-06-01", edge.Policy().Window(inventory.V2Cases).GA.String(), "the remaining resource governs now")
	require.NoError(t, c.Delete(ctx, dup))
	reconcile()
	require.Equal(t, "2026-02-01", edge.Policy().Window(inventory.V2Cases).GA.String(), "no resource left: the admin API's date")
}

// A store that cannot be written fails the reconcile, so the manager
// retries it; nothing is reported saved.
func TestLayerWriterReportsAFailedSave(t *testing.T) {
	c := newClient(t, family("cases", "v2-cases", time.Now(), nil))
	writer := &controller.LayerWriter{Reader: c, Namespace: ns, Logger: quiet,
		Save: func(context.Context, map[inventory.Family]policy.Settings) (bool, error) {
			return false, errors.New("redis down")
		},
		Saved: func(context.Context) { t.Fatal("reported saved") }}
	_, err := writer.Reconcile(context.Background(), ctrl.Request{})
	require.ErrorContains(t, err, "redis down")
}

func TestDeepCopyIsDeep(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC))
	in := family("cases", "v2-cases", at.Time, func(s *v1alpha1.CompatibilityFamilySpec) {
		s.Extensions = []v1alpha1.Extension{{Integration: "cred_a", Sunset: "2026-09-30", ApprovedBy: "ops", ApprovedAt: at}}
		s.Brownouts = []v1alpha1.Brownout{{Start: at, End: at}}
	})
	in.Status = v1alpha1.CompatibilityFamilyStatus{WindowEnd: "2026-07-14", NextMilestone: &v1alpha1.Milestone{Name: "7-days-left", At: at},
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}}
	in.Labels = map[string]string{"a": "b"}
	out := in.DeepCopyObject().(*v1alpha1.CompatibilityFamily)
	require.Equal(t, in, out)
	out.Spec.Extensions[0].Integration = "changed"
	out.Spec.Brownouts[0].Start = metav1.Now()
	out.Status.NextMilestone.Name = "changed"
	out.Status.Conditions[0].Reason = "changed"
	out.Labels["a"] = "changed"
	require.Equal(t, "cred_a", in.Spec.Extensions[0].Integration)
	require.True(t, in.Spec.Brownouts[0].Start.Equal(&at))
	require.Equal(t, "7-days-left", in.Status.NextMilestone.Name)
	require.Empty(t, in.Status.Conditions[0].Reason)
	require.Equal(t, "b", in.Labels["a"])
	list := &v1alpha1.CompatibilityFamilyList{Items: []v1alpha1.CompatibilityFamily{*in}}
	lc := list.DeepCopyObject().(*v1alpha1.CompatibilityFamilyList)
	lc.Items[0].Spec.Family = "changed"
	require.Equal(t, "v2-cases", list.Items[0].Spec.Family)
}
