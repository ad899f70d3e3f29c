package chaos

import (
	"context"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/strata-dev/strata/controllers/pipeline"
	"github.com/strata-dev/strata/internal/desired"
)

// Recorder keeps every change the API server reports of volumes, claims, cleanup pods, Kafka
// clusters and their node pools, for Replay. Its informers run from before the first manager starts until the
// test ends, across every kill: they are the test's, not the manager's.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

// Record starts the informers and waits for their first lists.
func Record(t testing.TB, cfg *rest.Config) *Recorder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &Recorder{}
	core := informers.NewSharedInformerFactory(cs, 0)
	pods := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = desired.LabelComponent + "=" + desired.ComponentVolumeCleanup
	}))
	kafkas := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	handlers := map[toolscache.SharedIndexInformer]func(obj any, deleted bool) (Event, bool){
		core.Core().V1().PersistentVolumes().Informer():                                                       volumeEvent,
		core.Core().V1().PersistentVolumeClaims().Informer():                                                  claimEvent,
		pods.Core().V1().Pods().Informer():                                                                    podEvent,
		kafkas.ForResource(desired.KafkaGVK.GroupVersion().WithResource("kafkas")).Informer():                 kafkaEvent,
		kafkas.ForResource(desired.KafkaNodePoolGVK.GroupVersion().WithResource("kafkanodepools")).Informer(): poolEvent,
	}
	for inf, f := range handlers {
		if _, err := inf.AddEventHandler(r.handler(f)); err != nil {
			t.Fatal(err)
		}
	}
	core.Start(ctx.Done())
	pods.Start(ctx.Done())
	kafkas.Start(ctx.Done())
	for inf := range handlers {
		if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			t.Fatal("the recorder's informers did not sync")
		}
	}
	return r
}

func (r *Recorder) handler(f func(obj any, deleted bool) (Event, bool)) toolscache.ResourceEventHandler {
	add := func(obj any, deleted bool) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj // a deletion missed while relisting: its last known state
		}
		if e, ok := f(obj, deleted); ok {
			r.mu.Lock()
			r.events = append(r.events, e)
			r.mu.Unlock()
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { add(obj, false) },
		UpdateFunc: func(_, obj any) { add(obj, false) },
		DeleteFunc: func(obj any) { add(obj, true) },
	}
}

// Events is a copy of what was recorded so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Count is how many events of kind were recorded whose name passes keep.
func (r *Recorder) Count(kind Kind, keep func(Event) bool) int {
	n := 0
	for _, e := range r.Events() {
		if e.Kind == kind && keep(e) {
			n++
		}
	}
	return n
}

func rv(obj metav1.Object) uint64 {
	n, _ := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	return n
}

func key(obj metav1.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

func volumeEvent(obj any, deleted bool) (Event, bool) {
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok {
		return Event{}, false
	}
	e := Event{RV: rv(pv), Kind: KindVolume, Name: pv.Name, Deleted: deleted, Phase: string(pv.Status.Phase)}
	if pv.Spec.ClaimRef != nil {
		e.ClaimUID = string(pv.Spec.ClaimRef.UID)
	}
	return e, true
}

func claimEvent(obj any, deleted bool) (Event, bool) {
	pvc, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return Event{}, false
	}
	return Event{RV: rv(pvc), Kind: KindClaim, Name: key(pvc), Deleted: deleted, UID: string(pvc.UID),
		ClusterID: pvc.Annotations[pipeline.AnnotationKafkaClusterID], Cluster: pvc.Labels[desired.StrimziClusterLabel]}, true
}

func podEvent(obj any, deleted bool) (Event, bool) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return Event{}, false
	}
	return Event{RV: rv(pod), Kind: KindCleanupPod, Name: key(pod), Deleted: deleted, Phase: string(pod.Status.Phase),
		Volume: pod.Annotations[desired.AnnotationVolume], ClaimUID: pod.Annotations[desired.AnnotationClaimUID]}, true
}

func kafkaEvent(obj any, deleted bool) (Event, bool) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return Event{}, false
	}
	id, _, _ := unstructured.NestedString(u.Object, "status", "clusterId")
	return Event{RV: rv(u), Kind: KindKafka, Name: key(u), Deleted: deleted, Cluster: u.GetName(), ClusterID: id,
		Paused: u.GetAnnotations()["strimzi.io/pause-reconciliation"] == "true"}, true
}

func poolEvent(obj any, deleted bool) (Event, bool) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return Event{}, false
	}
	replicas, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	ids, _, _ := unstructured.NestedSlice(u.Object, "status", "nodeIds")
	return Event{RV: rv(u), Kind: KindNodePool, Name: key(u), Deleted: deleted, Replicas: replicas, Nodes: int64(len(ids))}, true
}
