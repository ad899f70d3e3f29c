package controllers

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/pipeline"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/intern"
	"github.com/strata-dev/strata/internal/ssa"
)

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
	// A kind's own transform replaces the default one (controller-runtime's cache.Options):
	// the pipelines' pods, slimmed, share their strings too.
	pods := pipeline.PodCache()
	pods.Transform = chainTransforms(pods.Transform, intern.Metadata)
	o.Cache.ByObject[&corev1.Pod{}] = pods
	// Children are cached as unstructured objects, whose managedFields decode into trees of
	// maps: more than half of what the informers held at 1,000 pipelines. Compact keeps them as
	// the JSON text upToDate and Changes read (internal/ssa/compact.go); Pack then keeps each
	// child's spec, status and managedFields as one compressed JSON text beside its decoded
	// metadata, and the PackedCache gives them back on every Get and List (internal/ssa/pack.go).
	// Both leave typed objects as they are, and run after a transform set before. Last, what
	// is left decoded (every object's metadata) holds one shared copy of each string that
	// repeats from object to object (internal/intern).
	o.Cache.DefaultTransform = chainTransforms(o.Cache.DefaultTransform,
		ssa.Compact, ssa.Pack, dropUnreadManagedFields, intern.Metadata)
	o.NewCache = ssa.NewPackedCache(o.NewCache)
	return o
}

// dropUnreadManagedFields is a cache transform that drops the managedFields of the cached
// objects whose managedFields nothing reads: the pipelines (AnalyticsPipeline: the operator
// writes them by merge patches of finalizers and status, never compares their field owners)
// and the objects cached as metadata only (*metav1.PartialObjectMetadata: the Nodes the tier
// controller selects by label, the CustomResourceDefinitions the pipeline controller watches
// for a late install). The applier reads the managedFields of children (internal/ssa
// compare.go and drift.go, on unstructured objects), which this leaves to Compact.
//
// An object read from the cache and sent back by Update or Patch without managedFields keeps
// them on the server: the field is omitted (omitempty), and the API server then takes the live
// object's entries (k8s.io/apimachinery pkg/util/managedfields/internal/fieldmanager.go
// decodeLiveOrNew: "prevent clients who don't understand managedFields from deleting it").
// controller-runtime's own TransformStripManagedFields (pkg/cache/cache.go) does the same for
// every kind; this one leaves children and other typed objects as they were.
func dropUnreadManagedFields(obj any) (any, error) {
	switch o := obj.(type) {
	case *v1alpha1.AnalyticsPipeline:
		o.ManagedFields = nil
	case *metav1.PartialObjectMetadata:
		o.ManagedFields = nil
	}
	return obj, nil
}

// chainTransforms runs each transform in turn on what the one before gave, skipping the unset
// ones (a transform set before ManagerOptions may be nil).
func chainTransforms(fns ...toolscache.TransformFunc) toolscache.TransformFunc {
	fns = slices.DeleteFunc(fns, func(f toolscache.TransformFunc) bool { return f == nil })
	return func(obj any) (any, error) {
		for _, f := range fns {
			var err error
			if obj, err = f(obj); err != nil {
				return nil, err
			}
		}
		return obj, nil
	}
}
