package tier

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	"github.com/strata-dev/strata/controllers/internal/setup"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/ssa"
)

// TierFinalizer is set on local tiers: when such a tier is deleted, the controller deletes its
// volumes that no claim uses, keeps (and reports) the others, and then lets the tier go. Volumes
// carry no owner reference, so that the garbage collector never deletes a Bound one.
const TierFinalizer = "strata.dev/local-volumes"

// Reconciler keeps a StorageTier's StorageClass (and, for local tiers, its volumes) in step
// with the tier, and reports whether pipelines can use it.
type Reconciler struct {
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
	// Instruments are the tests' (WithInstruments); none in production.
	Instruments setup.Instruments
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

// Reconcile is a table of contents, in the pipeline reconciler's shape: load the tier and its
// scope (a tier gone or being deleted is finalized there and stops), run the steps in order,
// each reading or filling in the scope, and write the status on every exit, once, only when
// it changed. A step that fails ends the reconcile with its error; the status is then
// unchanged, so nothing is written.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (res ctrl.Result, err error) {
	s, err := r.load(ctx, req)
	if s == nil {
		return ctrl.Result{}, err
	}
	defer func() {
		err = errors.Join(err, r.writeStatus(ctx, s))
	}()
	for _, step := range []func(context.Context, *scope) error{
		r.observeVolumes, // the tier's volumes as the cache has them
		r.syncStep,       // local: the StorageClass and the volumes in step, Released ones wiped; dynamic: the class checked
		r.reportStatus,   // Ready, VolumesLost and the volume counts, from what the sync found
	} {
		if err := step(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	return s.result(), nil
}

// syncDynamic checks that a dynamic tier's StorageClass exists. Volumes left from when the tier
// was local are removed like any volume no longer wanted, and then the finalizer.
func (r *Reconciler) syncDynamic(ctx context.Context, t *v1alpha1.StorageTier, have map[string]*corev1.PersistentVolume) (tierResult, error) {
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
func (r *Reconciler) setFinalizer(ctx context.Context, t *v1alpha1.StorageTier, present bool) error {
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
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &v1alpha1.StorageTier{}, classIndex, func(o client.Object) []string {
		return []string{o.(*v1alpha1.StorageTier).Spec.StorageClassName}
	}); err != nil {
		return err
	}
	if r.Applier == nil {
		r.Applier = ssa.New(r.Client, setup.FieldOwner, ssa.DefaultCacheSize)
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
		Complete(r.Instruments.Wrap("storagetier", r))
}

func (r *Reconciler) tiersUsing(ctx context.Context, sc client.Object) []reconcile.Request {
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
func (r *Reconciler) localTiers(ctx context.Context, node client.Object) []reconcile.Request {
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
func (r *Reconciler) tierOfVolume(_ context.Context, pv client.Object) []reconcile.Request {
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
