package envtestutil

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// BrokerReplicas is the spec.replicas of the pipeline's broker pool (0 when absent).
func BrokerReplicas(t *testing.T, c client.Client, p *v1alpha1.AnalyticsPipeline) int64 {
	t.Helper()
	return PoolReplicas(t, c, p, desired.BrokerPoolName(p))
}

// UpdateSpec changes the pipeline's spec on its latest version, again on a conflict with the
// Operator's status writes.
func UpdateSpec(t *testing.T, c client.Client, p *v1alpha1.AnalyticsPipeline, change func()) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		change()
		return c.Update(context.Background(), p)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// PoolReplicas is the spec.replicas of the pipeline's KafkaNodePool name (0 when absent).
func PoolReplicas(t *testing.T, c client.Client, p *v1alpha1.AnalyticsPipeline, name string) int64 {
	t.Helper()
	pool := Child(t, c, desired.KafkaNodePoolGVK, p.Namespace, name)
	if pool == nil {
		return 0
	}
	return NestedInt(pool, "spec", "replicas")
}

// WaitPlanned waits until the pipeline's status describes its current generation.
func WaitPlanned(t *testing.T, c client.Client, p *v1alpha1.AnalyticsPipeline, check func() error) {
	t.Helper()
	WaitFor(t, c, p, func() error {
		if p.Status.ObservedGeneration != p.Generation || p.Status.Plan == nil {
			return fmt.Errorf("generation %d not planned yet", p.Generation)
		}
		return check()
	})
}

// NestedInt is the integer at path in u (0 when absent).
func NestedInt(u *unstructured.Unstructured, path ...string) int64 {
	n, _, _ := unstructured.NestedInt64(u.Object, path...)
	return n
}

// Child reads one child object of the pipeline (nil when absent).
func Child(t *testing.T, c client.Client, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return nil
	}
	return u
}

// SliceHas says whether s holds v.
func SliceHas(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
