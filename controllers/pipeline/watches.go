package pipeline

import (
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	// byController holds the kinds whose caches have controllerIndex (a cache's index cannot
	// be added twice); byCluster those that have clusterIndex.
	byController map[schema.GroupVersionKind]bool
	byCluster    map[schema.GroupVersionKind]bool
}

// clusterIndex indexes the KafkaRebalance cache by the Strimzi cluster each names (its
// strimzi.io/cluster label): the pipeline reads its cluster's KafkaRebalances on every
// reconcile, Strimzi's auto-rebalancing ones included, which no pipeline controls. A label
// selector alone scans every KafkaRebalance of the namespace, copying each one's labels: two
// per pipeline, so with 1,000 pipelines in a namespace a reconcile read 2,000 objects and
// creating them all grew as the square of their number, as controllerIndex's kinds did.
const clusterIndex = "strata.dev/strimzi-cluster"

// clusterIndexed kinds: the ones read by their Strimzi cluster.
var clusterIndexed = []schema.GroupVersionKind{desired.KafkaRebalanceGVK}

// strimziCluster is clusterIndex's value: the cluster obj's strimzi.io/cluster label names.
func strimziCluster(obj client.Object) []string {
	if c := obj.GetLabels()[desired.StrimziClusterLabel]; c != "" {
		return []string{c}
	}
	return nil
}

// clusterIndexedKind says whether gvk's cache has clusterIndex (its watch started).
func (w *childWatches) clusterIndexedKind(gvk schema.GroupVersionKind) bool {
	return w.has(func() bool { return w.byCluster[gvk] })
}

// has reads one of the index sets under the lock; a nil childWatches (no manager) has none.
func (w *childWatches) has(in func() bool) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return in()
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
	return w.has(func() bool { return w.byController[gvk] })
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
		if slices.Contains(clusterIndexed, gvk) && !w.byCluster[gvk] {
			if err := w.cache.IndexField(context.Background(), u, clusterIndex, strimziCluster); err != nil {
				return err
			}
			if w.byCluster == nil {
				w.byCluster = map[schema.GroupVersionKind]bool{}
			}
			w.byCluster[gvk] = true
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
