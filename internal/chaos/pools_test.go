package chaos

import (
	"context"
	"sort"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/upstream"
)

// Brokers leave one at a time, each only once Strimzi reports the previous one gone
// (plan.Compute's broker step: a pool whose status.nodeIds outnumber its spec.replicas holds
// the next step back). No Strimzi runs in this test (CI has no build of it), so playPools plays the part
// of it those steps wait on, the same in both runs: a KafkaNodePool's status.nodeIds follow its
// spec.replicas one node a tick, as Strimzi adds or removes one pod after another, keeping the
// lowest IDs (Strimzi 1.2.0 removes the highest node IDs first and gives new brokers the lowest
// free ones: cluster-operator .../model/nodepools/NodeIdAssignor.java). A kill then lands while
// the pool is between steps, and the manager started after it must take the next step from what
// the API server holds alone.

// poolTick is how often playPools moves a pool's nodes one step towards its replicas.
const poolTick = 500 * time.Millisecond

// poolErrorEvery is how often playPools logs that it could not step a namespace's pools.
const poolErrorEvery = 10 * time.Second

// playPools runs until the test ends, in the given namespaces.
func playPools(ctx context.Context, t *testing.T, h *upstream.Cluster, namespaces ...string) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(poolTick)
		defer tick.Stop()
		// An API server restarted by TestAPIServerFaults refuses every tick for up to a
		// minute: one line per namespace every poolErrorEvery says so.
		logged := map[string]time.Time{}
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for _, ns := range namespaces {
				if err := stepPools(ctx, h.Client, ns); err != nil && ctx.Err() == nil && time.Since(logged[ns]) >= poolErrorEvery {
					logged[ns] = time.Now()
					t.Logf("playing Strimzi's node pools in %s: %v", ns, err)
				}
			}
		}
	}()
}

// stepPools moves every pool of the namespace one node towards its spec.replicas. Each pool has
// its own range of IDs (a pool's base is 100 times its rank in name order), so that no two pools
// of one cluster share an ID, as in Strimzi.
func stepPools(ctx context.Context, c client.Client, ns string) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(desired.KafkaNodePoolGVK.GroupVersion().WithKind("KafkaNodePoolList"))
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].GetName() < list.Items[j].GetName() })
	for i := range list.Items {
		pool := &list.Items[i]
		want, _, _ := unstructured.NestedInt64(pool.Object, "spec", "replicas")
		raw, _, _ := unstructured.NestedSlice(pool.Object, "status", "nodeIds")
		ids := make([]int64, 0, len(raw))
		for _, id := range raw {
			if n, ok := id.(int64); ok {
				ids = append(ids, n)
			}
		}
		sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
		switch {
		case int64(len(ids)) > want:
			ids = ids[:len(ids)-1] // the highest leaves
		case int64(len(ids)) < want:
			ids = append(ids, lowestFree(ids, int64(100*i)))
		default:
			continue
		}
		out := make([]any, len(ids))
		for k, id := range ids {
			out[k] = id
		}
		if err := unstructured.SetNestedSlice(pool.Object, out, "status", "nodeIds"); err != nil {
			return err
		}
		if err := unstructured.SetNestedField(pool.Object, int64(len(ids)), "status", "replicas"); err != nil {
			return err
		}
		if err := unstructured.SetNestedField(pool.Object, pool.GetGeneration(), "status", "observedGeneration"); err != nil {
			return err
		}
		// A conflict (the operator applied the pool meanwhile) waits for the next tick.
		if err := c.Status().Update(ctx, pool); err != nil && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

// lowestFree is the lowest ID from base up that ids (sorted) does not hold.
func lowestFree(ids []int64, base int64) int64 {
	next := base
	for _, id := range ids {
		if id == next {
			next++
		}
	}
	return next
}
