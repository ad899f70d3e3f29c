package controllers

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/ssa"
)

// TierFinalizer is set on local tiers: when such a tier is deleted, the controller deletes its
// volumes that no claim uses, keeps (and reports) the others, and then lets the tier go. Volumes
// carry no owner reference, so that the garbage collector never deletes a Bound one.
const TierFinalizer = "strata.dev/local-volumes"

// TierReconciler keeps a StorageTier's StorageClass (and, for local tiers, its volumes) in step
// with the tier, and reports whether pipelines can use it.
type TierReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Applier is the server-side-apply path the controllers share; nil: one of its own.
	Applier *ssa.Applier
	// Recycling says how Released local volumes are wiped (see VolumeRecycling's defaults).
	Recycling VolumeRecycling
	// APIReader reads what the operator does not cache (claims); nil: the manager's.
	APIReader client.Reader

	// pods is the cache of cleanup pods, in Recycling.Namespace only.
	pods client.Reader
	// instruments are the tests' (WithInstruments); none in production.
	instruments Instruments
}

// +kubebuilder:rbac:groups=strata.dev,resources=storagetiers,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=strata.dev,resources=storagetiers/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=strata.dev,resources=storagetiers/finalizers,verbs=update
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumes,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;delete
// Cleanup pods run in the operator's namespace (a placeholder here, see cmd/manager).
// +kubebuilder:rbac:groups="",namespace=strata-system,resources=pods,verbs=get;list;watch;create;delete

// Reconcile reads like its steps: observe the tier's volumes, bring the StorageClass and the
// volumes in step (local tiers) or check the class (dynamic tiers), remove the volumes no longer
// wanted that no claim uses, and write the status once. Nothing is written when nothing changed.
func (r *TierReconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	t := &v1alpha1.StorageTier{}
	if err := r.Client.Get(ctx, req.NamespacedName, t); err != nil {
		if apierrors.IsNotFound(err) {
			r.Applier.ForgetScope(tierScope(req.Name))
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !t.DeletionTimestamp.IsZero() {
		r.Applier.ForgetScope(tierScope(t.Name))
		return ctrl.Result{}, r.finalize(ctx, t)
	}
	if t.Spec.Local != nil && !controllerutil.ContainsFinalizer(t, TierFinalizer) {
		// Before any volume exists, so that none outlives a deleted tier unnoticed.
		if err := r.setFinalizer(ctx, t, true); err != nil {
			return ctrl.Result{}, err
		}
	}
	before := t.DeepCopy()

	have, err := r.volumesOf(ctx, t)
	if err != nil {
		return ctrl.Result{}, err
	}
	var res tierResult
	if t.Spec.Local != nil {
		res, err = r.syncLocal(ctx, t, have)
	} else {
		res, err = r.syncDynamic(ctx, t, have)
	}
	if err != nil {
		return ctrl.Result{}, err
	}

	conds := conditions{list: &t.Status.Conditions, generation: t.Generation}
	conds.set(v1alpha1.ConditionReady, res.status, res.reason, res.message())
	switch {
	case t.Spec.Local == nil || res.reason == v1alpha1.ReasonInvalidSpec:
		meta.RemoveStatusCondition(&t.Status.Conditions, v1alpha1.ConditionVolumesLost)
	case len(res.lost.claims) > 0:
		conds.set(v1alpha1.ConditionVolumesLost, metav1.ConditionTrue, v1alpha1.ReasonNodeLost,
			"claims bound to volumes on a lost node: "+strings.Join(res.lost.detail, "; ")+lostAdvice(t))
	default:
		conds.set(v1alpha1.ConditionVolumesLost, metav1.ConditionFalse, v1alpha1.ReasonNoneLost, "no volume in use is on a lost node")
	}
	t.Status.LostClaims = res.lost.claims
	t.Status.ObservedGeneration = t.Generation
	t.Status.PersistentVolumes, t.Status.Capacity = volumeTotals(res.volumes)
	t.Status.RetainedPersistentVolumes = res.retainedNames()
	t.Status.ReleasedPersistentVolumes, t.Status.RecyclingPersistentVolumes = res.recycled.released, res.recycled.recycling

	if !conds.isTrue(v1alpha1.ConditionReady) {
		log.FromContext(ctx).V(1).Info("tier not ready", "reason", res.reason, "message", res.message())
	}
	r.announceRetained(ctx, t, before.Status.RetainedPersistentVolumes, res.retained)
	announceTransitions(r.Recorder, t, before.Status.Conditions, t.Status.Conditions)
	// The patch's base is the tier as it is now with the old status: a finalizer written
	// during this reconcile changed its metadata, which the status patch must not carry.
	base := t.DeepCopy()
	base.Status = before.Status
	after := res.recycled.after
	if a := res.lost.after; a > 0 && (after == 0 || a < after) {
		after = a
	}
	return ctrl.Result{RequeueAfter: after}, patchStatus(ctx, r.Client, t, base, before.Status, t.Status)
}

// syncDynamic checks that a dynamic tier's StorageClass exists. Volumes left from when the tier
// was local are removed like any volume no longer wanted, and then the finalizer.
func (r *TierReconciler) syncDynamic(ctx context.Context, t *v1alpha1.StorageTier, have map[string]*corev1.PersistentVolume) (tierResult, error) {
	var res tierResult
	retained, err := r.prune(ctx, t, have, nil, func(*corev1.PersistentVolume) string {
		return "the tier is no longer local (spec.local was removed)"
	})
	if err != nil {
		return res, err
	}
	res.retained = retained
	if controllerutil.ContainsFinalizer(t, TierFinalizer) {
		if err := r.setFinalizer(ctx, t, false); err != nil {
			return res, err
		}
	}

	sc := &storagev1.StorageClass{}
	err = r.Client.Get(ctx, client.ObjectKey{Name: t.Spec.StorageClassName}, sc)
	switch {
	case apierrors.IsNotFound(err):
		res.set(metav1.ConditionFalse, v1alpha1.ReasonStorageClassNotFound,
			"StorageClass %q not found: create it, or give the tier spec.local so that Strata manages it", t.Spec.StorageClassName)
	case err != nil:
		return res, err
	default:
		res.set(metav1.ConditionTrue, v1alpha1.ReasonAvailable, "StorageClass %q exists", sc.Name)
	}
	return res, nil
}

// setFinalizer adds or removes TierFinalizer. The patch carries the tier's resourceVersion, so
// that it never drops a finalizer another controller added meanwhile.
func (r *TierReconciler) setFinalizer(ctx context.Context, t *v1alpha1.StorageTier, present bool) error {
	patch := client.MergeFromWithOptions(t.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if present {
		controllerutil.AddFinalizer(t, TierFinalizer)
	} else {
		controllerutil.RemoveFinalizer(t, TierFinalizer)
	}
	return r.Client.Patch(ctx, t, patch)
}

// classIndex indexes tiers by their StorageClass, so a StorageClass event finds its tier.
const classIndex = "spec.storageClassName"

// SetupWithManager watches tiers, StorageClasses (a class created after its tier makes the tier
// Ready without waiting for a resync; a deleted Strata class is created again), nodes (added,
// removed or relabelled: local volumes follow; only their metadata is cached) and the tiers'
// volumes (a phase change updates the status).
func (r *TierReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.StorageTier{}, classIndex, func(o client.Object) []string {
		return []string{o.(*v1alpha1.StorageTier).Spec.StorageClassName}
	}); err != nil {
		return err
	}
	if r.Applier == nil {
		r.Applier = ssa.New(r.Client, FieldOwner, ssa.DefaultCacheSize)
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	r.Recycling = r.Recycling.withDefaults()
	// Cleanup pods are cached apart, in their one namespace and with their labels: the manager's
	// cache would watch every pod of the cluster, which the operator may not and need not read.
	pods, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{r.Recycling.Namespace: {}},
		ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: labels.SelectorFromSet(labels.Set{
			desired.LabelManagedBy: desired.ManagedBy, desired.LabelComponent: desired.ComponentVolumeCleanup})}},
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(pods); err != nil {
		return err
	}
	r.pods = pods
	return ctrl.NewControllerManagedBy(mgr).
		Named("storagetier").
		For(&v1alpha1.StorageTier{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&storagev1.StorageClass{}, handler.EnqueueRequestsFromMapFunc(r.tiersUsing)).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.localTiers),
			builder.OnlyMetadata, builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Watches(&corev1.PersistentVolume{}, handler.EnqueueRequestsFromMapFunc(r.tierOfVolume)).
		WatchesRawSource(source.Kind(pods, client.Object(&corev1.Pod{}), handler.EnqueueRequestsFromMapFunc(r.tierOfVolume))).
		Complete(r.instruments.reconciler("storagetier", r))
}

func (r *TierReconciler) tiersUsing(ctx context.Context, sc client.Object) []reconcile.Request {
	list := &v1alpha1.StorageTierList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{classIndex: sc.GetName()}); err != nil {
		log.FromContext(ctx).Error(err, "listing tiers for a StorageClass", "storageClass", sc.GetName())
		return nil
	}
	return tierRequests(list, func(*v1alpha1.StorageTier) bool { return true })
}

// localTiers maps a node to every local tier (and every tier that still has the finalizer,
// whose volumes may need removing): a tier's selector may have matched the node's old labels,
// and there are few tiers.
func (r *TierReconciler) localTiers(ctx context.Context, node client.Object) []reconcile.Request {
	list := &v1alpha1.StorageTierList{}
	if err := r.Client.List(ctx, list); err != nil {
		log.FromContext(ctx).Error(err, "listing tiers for a node", "node", node.GetName())
		return nil
	}
	return tierRequests(list, func(t *v1alpha1.StorageTier) bool {
		return t.Spec.Local != nil || controllerutil.ContainsFinalizer(t, TierFinalizer)
	})
}

// tierOfVolume maps a volume or a cleanup pod the operator made to its tier (named in full in
// an annotation: the label may be shortened).
func (r *TierReconciler) tierOfVolume(_ context.Context, pv client.Object) []reconcile.Request {
	if pv.GetLabels()[desired.LabelManagedBy] != desired.ManagedBy || pv.GetLabels()[desired.LabelTier] == "" {
		return nil
	}
	name := pv.GetAnnotations()[desired.AnnotationTier]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: name}}}
}

func tierRequests(list *v1alpha1.StorageTierList, keep func(*v1alpha1.StorageTier) bool) []reconcile.Request {
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		if keep(&list.Items[i]) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// tierResult is what a reconcile found: the Ready condition and the volumes to report.
type tierResult struct {
	status  metav1.ConditionStatus
	reason  string
	summary string
	// notes are appended to the condition's message (volumes kept as they are, retained ...).
	notes []string
	// volumes are the tier's wanted volumes that exist; retained its volumes no longer wanted
	// that a claim uses, which the controller keeps.
	volumes  []*corev1.PersistentVolume
	retained []retainedVolume
	// recycled is what recycling the Released volumes found; lost the volumes in use on lost nodes.
	recycled recycled
	lost     lostVolumes
}

// lostAdvice ends the VolumesLost message with what happens next.
func lostAdvice(t *v1alpha1.StorageTier) string {
	if nl := t.Spec.Local.NodeLoss; nl != nil && nl.DeleteClaims {
		return "; their claims are deleted (spec.local.nodeLoss.deleteClaims), so that their pods start on other nodes' volumes"
	}
	return "; their pods cannot start elsewhere: bring the node back, or delete the claims (spec.local.nodeLoss.deleteClaims does it)"
}

type retainedVolume struct {
	pv  *corev1.PersistentVolume
	why string
}

func (r *tierResult) set(status metav1.ConditionStatus, reason, format string, args ...any) {
	r.status, r.reason, r.summary = status, reason, fmt.Sprintf(format, args...)
}

func (r *tierResult) message() string {
	msg := r.summary
	for _, n := range r.notes {
		msg += "; " + n
	}
	if n := len(r.retained); n > 0 {
		msg += fmt.Sprintf("; %d PersistentVolume(s) no longer wanted are in use and kept: see status.retainedPersistentVolumes", n)
	}
	return msg
}

func (r *tierResult) retainedNames() []string {
	var names []string
	for _, v := range r.retained {
		names = append(names, v.pv.Name)
	}
	return names
}
