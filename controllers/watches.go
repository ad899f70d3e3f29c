package controllers

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
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
}

// ensure watches every kind given that is not watched yet. Events on a child enqueue the
// pipeline that controls it.
func (w *childWatches) ensure(gvks []schema.GroupVersionKind) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, gvk := range gvks {
		if w.watched[gvk] {
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
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
	return o
}
