package controllers

import (
	"context"
	"fmt"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// TierReconciler keeps a StorageTier's StorageClass (and, for local tiers, its volumes) in step
// with the tier, and reports whether pipelines can use it.
type TierReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// +kubebuilder:rbac:groups=strata.dev,resources=storagetiers,verbs=get;list;watch
// +kubebuilder:rbac:groups=strata.dev,resources=storagetiers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list;watch

// Reconcile checks the tier's StorageClass and writes the tier's status once.
func (r *TierReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	t := &v1alpha1.StorageTier{}
	if err := r.Client.Get(ctx, req.NamespacedName, t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := t.DeepCopy()
	conds := conditions{list: &t.Status.Conditions, generation: t.Generation}

	sc := &storagev1.StorageClass{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: t.Spec.StorageClassName}, sc)
	switch {
	case apierrors.IsNotFound(err):
		conds.set(v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonStorageClassNotFound,
			fmt.Sprintf("StorageClass %q not found: create it, or give the tier spec.local so that Strata manages it", t.Spec.StorageClassName))
	case err != nil:
		return ctrl.Result{}, err
	default:
		conds.set(v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonAvailable,
			fmt.Sprintf("StorageClass %q exists", sc.Name))
	}
	t.Status.ObservedGeneration = t.Generation

	if !conds.isTrue(v1alpha1.ConditionReady) {
		log.FromContext(ctx).V(1).Info("tier not ready", "storageClass", t.Spec.StorageClassName)
	}
	announceTransitions(r.Recorder, t, before.Status.Conditions, t.Status.Conditions)
	return ctrl.Result{}, patchStatus(ctx, r.Client, t, before, before.Status, t.Status)
}

// classIndex indexes tiers by their StorageClass, so a StorageClass event finds its tier.
const classIndex = "spec.storageClassName"

// SetupWithManager watches tiers and StorageClasses: a class created after its tier makes the
// tier Ready without waiting for a resync.
func (r *TierReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.StorageTier{}, classIndex, func(o client.Object) []string {
		return []string{o.(*v1alpha1.StorageTier).Spec.StorageClassName}
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("storagetier").
		For(&v1alpha1.StorageTier{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&storagev1.StorageClass{}, handler.EnqueueRequestsFromMapFunc(r.tiersUsing)).
		Complete(r)
}

func (r *TierReconciler) tiersUsing(ctx context.Context, sc client.Object) []reconcile.Request {
	list := &v1alpha1.StorageTierList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{classIndex: sc.GetName()}); err != nil {
		log.FromContext(ctx).Error(err, "listing tiers for a StorageClass", "storageClass", sc.GetName())
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}
