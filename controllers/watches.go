package controllers

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/ssa"
)

// childWatches starts a watch on each child kind the first time the API server serves it. A
// watch on a kind whose CRD is missing would fail the manager at start; watching lazily lets the
// operator start without Strimzi, the Spark operator or ECK and pick their kinds up when their
// CRDs are installed.
type childWatches struct {
	controller controller.Controller
	cache      cache.Cache
	scheme     *runtime.Scheme
	mapper     meta.RESTMapper

	mu      sync.Mutex
	watched map[schema.GroupVersionKind]bool
	// byController holds the kinds whose caches have controllerIndex (a cache's index cannot
	// be added twice).
	byController map[schema.GroupVersionKind]bool
}

// controllerIndex indexes the children caches by the UID of the pipeline that controls each
// object. Without it, reading one pipeline's children of a kind scanned every object of that
// kind in the namespace, decoding each one's labels: with 1,000 pipelines in a namespace a
// reconcile cost 14 scans of 1,000 objects, and creating them all grew as the square of their
// number (docs/performance.md).
const controllerIndex = "strata.dev/controller-uid"

// controllerUID is the index's value: the UID of obj's controller when that is a pipeline.
func controllerUID(obj client.Object) []string {
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "AnalyticsPipeline" || ref.APIVersion != v1alpha1.GroupVersion.String() {
		return nil
	}
	return []string{string(ref.UID)}
}

// indexed says whether gvk's cache has controllerIndex (its watch started).
func (w *childWatches) indexed(gvk schema.GroupVersionKind) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.byController[gvk]
}

// ensure watches every kind given that is not watched yet, with its cache indexed by
// controller. Events on a child enqueue the pipeline that controls it.
func (w *childWatches) ensure(gvks []schema.GroupVersionKind) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, gvk := range gvks {
		if w.watched[gvk] {
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		// An index may be added to an informer that already runs: client-go's
		// sharedIndexInformer.AddIndexers indexes what its store holds (tools/cache/shared_informer.go).
		if !w.byController[gvk] {
			if err := w.cache.IndexField(context.Background(), u, controllerIndex, controllerUID); err != nil {
				return err
			}
			if w.byController == nil {
				w.byController = map[schema.GroupVersionKind]bool{}
			}
			w.byController[gvk] = true
		}
		h := handler.TypedEnqueueRequestForOwner[*unstructured.Unstructured](w.scheme, w.mapper,
			&v1alpha1.AnalyticsPipeline{}, handler.OnlyControllerOwner())
		if err := w.controller.Watch(source.Kind(w.cache, u, h)); err != nil {
			return err
		}
		w.watched[gvk] = true
	}
	return nil
}

// ManagerOptions adds what Strata's controllers need to a manager's options: children are read
// from the cache as unstructured objects (they are third-party kinds), and the ConfigMap and
// PersistentVolume caches hold only Strata's own objects (the setting is per kind, for typed and
// unstructured reads): a large cluster's volumes and ConfigMaps are none of the operator's
// business, and so are its ServiceAccounts, RoleBindings and Secrets (the operator keeps no other
// Secret in memory). Local volume names carry a hash of tier, node and path, so a volume of someone
// else's with the same name is not a practical concern.
func ManagerOptions(o ctrl.Options) ctrl.Options {
	o.Client.Cache = &client.CacheOptions{Unstructured: true}
	managed := labels.SelectorFromSet(labels.Set{desired.LabelManagedBy: desired.ManagedBy})
	if o.Cache.ByObject == nil {
		o.Cache.ByObject = map[client.Object]cache.ByObject{}
	}
	o.Cache.ByObject[&corev1.ConfigMap{}] = cache.ByObject{Label: managed}
	o.Cache.ByObject[&corev1.PersistentVolume{}] = cache.ByObject{Label: managed}
	o.Cache.ByObject[&corev1.ServiceAccount{}] = cache.ByObject{Label: managed}
	o.Cache.ByObject[&rbacv1.RoleBinding{}] = cache.ByObject{Label: managed}
	o.Cache.ByObject[&corev1.Secret{}] = cache.ByObject{Label: managed}
	o.Cache.ByObject[&corev1.Pod{}] = podCache()
	// Children are cached as unstructured objects, whose managedFields decode into trees of
	// maps: more than half of what the informers held at 1,000 pipelines. Compact keeps them as
	// the JSON text upToDate and Changes read (internal/ssa/compact.go); it leaves typed objects
	// as they are, and runs after a transform set before.
	o.Cache.DefaultTransform = chainTransforms(o.Cache.DefaultTransform, ssa.Compact)
	return o
}

// chainTransforms runs first (when set), then then.
func chainTransforms(first, then toolscache.TransformFunc) toolscache.TransformFunc {
	if first == nil {
		return then
	}
	return func(obj any) (any, error) {
		out, err := first(obj)
		if err != nil {
			return nil, err
		}
		return then(out)
	}
}
