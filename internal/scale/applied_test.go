package scale

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// watchApplied starts, before the pipelines are created, a watch on ns's pipelines and one on
// its SparkApplications, and returns what waits until n pipelines are planned (a plan in the
// status for their generation) and n SparkApplications exist: the child applied last. It once
// listed both kinds every two seconds instead, 1,000 pipelines with their plans and 1,000
// SparkApplications each time: about thirty lists of megabytes that the API server encoded and
// this process decoded on the two cores the operator and its API server were being measured
// on. A watch sends each change once.
func watchApplied(t testing.TB, cfg *rest.Config, ns string, n int) (wait func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	planned, apps := map[string]bool{}, map[string]bool{}
	changed := make(chan struct{}, 1)
	follow := func(gvr schema.GroupVersionResource, into map[string]bool, counts func(*unstructured.Unstructured) bool) {
		r := dc.Resource(gvr).Namespace(ns)
		list, err := r.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// A RetryWatcher watches again from the last version it saw when a watch ends.
		w, err := watchtools.NewRetryWatcherWithContext(ctx, list.GetResourceVersion(), &cache.ListWatch{
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return r.Watch(ctx, o) },
		})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
					continue
				}
				mu.Lock()
				into[u.GetName()] = counts(u)
				mu.Unlock()
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		}()
	}
	follow(v1alpha1.GroupVersion.WithResource("analyticspipelines"), planned, func(u *unstructured.Unstructured) bool {
		_, hasPlan, _ := unstructured.NestedMap(u.Object, "status", "plan")
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		return hasPlan && observed == u.GetGeneration()
	})
	follow(desired.SparkApplicationGVK.GroupVersion().WithResource("sparkapplications"), apps,
		func(*unstructured.Unstructured) bool { return true })

	count := func(m map[string]bool) (k int) {
		for _, ok := range m {
			if ok {
				k++
			}
		}
		return k
	}
	return func() {
		t.Helper()
		defer cancel()
		deadline := time.After(30 * time.Minute)
		for {
			mu.Lock()
			p, a := count(planned), count(apps)
			mu.Unlock()
			if p >= n && a >= n {
				return
			}
			select {
			case <-changed:
			case <-deadline:
				t.Fatalf("after 30 minutes: %d of %d pipelines planned, %d SparkApplications", p, n, a)
			}
		}
	}
}
