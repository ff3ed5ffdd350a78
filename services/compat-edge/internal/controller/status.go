package controller

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/pcourt/pcourt/services/compat-edge/api/v1alpha1"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
)

// maxRequeue bounds how long a resource waits before its next milestone is
// recomputed, so a clock jump never leaves a status stale for long.
const maxRequeue = 12 * time.Hour

// StatusReconciler validates each CompatibilityFamily and writes its
// status: the base window's end, the next milestone and the Ready and
// Invalid conditions. Reconciling twice without a change writes nothing.
// It runs on the elected replica only.
type StatusReconciler struct {
	Client client.Client
	Now    func() time.Time
}

// +kubebuilder:rbac:groups=compat.pcourt.dev,resources=compatibilityfamilies,verbs=get;list;watch
// +kubebuilder:rbac:groups=compat.pcourt.dev,resources=compatibilityfamilies/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete

// Reconcile brings one resource's status up to date.
func (r *StatusReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cf v1alpha1.CompatibilityFamily
	if err := r.Client.Get(ctx, req.NamespacedName, &cf); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var all v1alpha1.CompatibilityFamilyList
	if err := r.Client.List(ctx, &all, client.InNamespace(req.Namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing compatibility families: %w", err)
	}
	now := r.Now()
	status, requeue := computeStatus(&cf, all.Items, now)
	if equality.Semantic.DeepEqual(status, cf.Status) {
		return ctrl.Result{RequeueAfter: requeue}, nil
	}
	cf.Status = status
	if err := r.Client.Status().Update(ctx, &cf); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: time.Second}, nil // a newer version is on its way
		}
		return ctrl.Result{}, fmt.Errorf("updating status of %s: %w", req.NamespacedName, err)
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// computeStatus is the status the resource should have at now, and when to
// look again (0: only on change).
func computeStatus(cf *v1alpha1.CompatibilityFamily, all []v1alpha1.CompatibilityFamily, now time.Time) (v1alpha1.CompatibilityFamilyStatus, time.Duration) {
	st := *cf.Status.DeepCopy()
	st.ObservedGeneration = cf.Generation
	st.WindowEnd, st.NextMilestone = "", nil
	family, settings, err := ToSettings(cf)
	reason, message := ReasonValid, "the edge serves this family's policy from this resource"
	if err != nil {
		reason, message = ReasonInvalidSpec, clip(err.Error())
	} else if w := Winners(all)[family]; w != nil && (w.Namespace != cf.Namespace || w.Name != cf.Name) {
		reason, message = ReasonDuplicate, fmt.Sprintf("%s already governs family %s; this resource is ignored", Source(w), family)
	}
	invalid := reason != ReasonValid
	setCondition(&st, ConditionInvalid, invalid, reason, message, cf.Generation)
	setCondition(&st, ConditionReady, !invalid, reason, message, cf.Generation)
	if invalid || settings.GA.IsZero() {
		return st, 0
	}
	// The same rules the edge serves by: the resource's settings as the
	// only layer, the base window (no integration's extension).
	w := policy.Resolve(policy.Env{CanonicalRoutes: "true"}, map[inventory.Family]policy.Settings{family: settings}).Window(family)
	st.WindowEnd = w.End(nil).Format(time.DateOnly)
	next, ok := w.NextMilestone(nil, nil, now)
	if !ok {
		return st, 0
	}
	st.NextMilestone = &v1alpha1.Milestone{Name: string(next.Milestone), At: metav1.NewTime(next.At)}
	return st, min(max(next.At.Sub(now), time.Second), maxRequeue)
}

// setCondition sets a condition to true or false; meta keeps the transition time while the status
// stays the same, so an unchanged resource gets an unchanged status.
func setCondition(st *v1alpha1.CompatibilityFamilyStatus, typ string, isTrue bool, reason, message string, gen int64) {
	s := metav1.ConditionFalse
	if isTrue {
		s = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: typ, Status: s, Reason: reason, Message: message, ObservedGeneration: gen,
	})
}

func clip(s string) string {
	const max = 1024
	if len(s) > max {
		return s[:max]
	}
	return s
}
