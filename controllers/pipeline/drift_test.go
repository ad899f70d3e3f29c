package pipeline_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/internal/envtestutil"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
)

// TestChildrenModifiedByAnotherManager: a human edits two fields of children with kubectl (an
// Update under its own field manager, which takes the fields from Strata): the broker pool's
// replicas, which Strata must own, and a descriptive label, which it may leave. Strata applies
// the replicas back, keeps the label as the human set it, and says both
// (ChildrenAsApplied False, TakenBack), with an event for the transition; the condition stays
// until the spec changes, then says the children hold Strata's values, the label still left to
// the human (True, LeftToManager).
func TestChildrenModifiedByAnotherManager(t *testing.T) {
	o := envtestutil.StartOperator(t)
	ctx := context.Background()
	ns, _ := o.CreateSamples(t)
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sensors"}}
	eventually(t, "the pipeline applied, its children as applied", func() error {
		if err := o.C.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		if p.Status.ObservedGeneration != p.Generation || p.Status.Plan == nil {
			return fmt.Errorf("generation %d observed %d", p.Generation, p.Status.ObservedGeneration)
		}
		return envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionChildrenAsApplied, metav1.ConditionTrue, v1alpha1.ReasonAsApplied)
	})
	brokers := p.Status.Plan.Brokers
	pool := desired.BrokerPoolName(p)
	edit := func(gvk schema.GroupVersionKind, name, patch string) {
		t.Helper()
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace(ns)
		u.SetName(name)
		if err := o.C.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("kubectl-edit")); err != nil {
			t.Fatal(err)
		}
	}
	edit(desired.KafkaNodePoolGVK, pool, fmt.Sprintf(`{"spec":{"replicas":%d}}`, brokers+5))
	edit(desired.ElasticsearchGVK, desired.ElasticsearchName(p),
		`{"metadata":{"labels":{"app.kubernetes.io/component":"search-by-hand"}}}`)

	eventually(t, "the replicas taken back, the label left, both reported", func() error {
		np := childObject(ctx, o.C, desired.KafkaNodePoolGVK, ns, pool)
		es := childObject(ctx, o.C, desired.ElasticsearchGVK, ns, desired.ElasticsearchName(p))
		if np == nil || es == nil {
			return fmt.Errorf("children missing")
		}
		if r, _, _ := unstructured.NestedInt64(np.Object, "spec", "replicas"); r != int64(brokers) {
			return fmt.Errorf("the pool's replicas %d, want Strata's %d back", r, brokers)
		}
		if l := es.GetLabels()[desired.LabelComponent]; l != "search-by-hand" {
			return fmt.Errorf("the Elasticsearch's component label %q: the human's value should stay", l)
		}
		if err := o.C.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		if err := envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionChildrenAsApplied, metav1.ConditionFalse, v1alpha1.ReasonTakenBack); err != nil {
			return err
		}
		msg := envtestutil.Meta(p, v1alpha1.ConditionChildrenAsApplied).Message
		// The label is named once the condition is recomputed (below): the replicas' reconcile
		// may come before the label's edit, and TakenBack is kept as it was said.
		if want := "KafkaNodePool " + pool + " .spec.replicas (by kubectl-edit)"; !strings.Contains(msg, want) {
			return fmt.Errorf("ChildrenAsApplied %q does not say %q", msg, want)
		}
		return nil
	})
	eventually(t, "an event for the transition", func() error {
		list := &eventsv1.EventList{}
		if err := o.C.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		n := 0
		for _, e := range list.Items {
			if e.Regarding.Name == p.Name && e.Reason == v1alpha1.ReasonTakenBack {
				n++
			}
		}
		// One per transition; a reconcile that reads the pipeline before the cache holds the
		// previous status write sees the transition again (as for every condition).
		if n == 0 {
			return fmt.Errorf("no TakenBack event")
		}
		return nil
	})

	// A new spec: the condition says what holds now, the label still the human's.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"workload":{"messagesPerSecond":12000}}}`))
	if err := o.C.Patch(ctx, &v1alpha1.AnalyticsPipeline{ObjectMeta: p.ObjectMeta}, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ChildrenAsApplied after the spec changed", func() error {
		if err := o.C.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		if p.Status.ObservedGeneration != p.Generation {
			return fmt.Errorf("generation %d observed %d", p.Generation, p.Status.ObservedGeneration)
		}
		if err := envtestutil.Condition(p.Status.Conditions, v1alpha1.ConditionChildrenAsApplied, metav1.ConditionTrue, v1alpha1.ReasonLeftToManager); err != nil {
			return err
		}
		msg := envtestutil.Meta(p, v1alpha1.ConditionChildrenAsApplied).Message
		if want := "Elasticsearch " + desired.ElasticsearchName(p) + " .metadata.labels.app.kubernetes.io/component (by kubectl-edit)"; !strings.Contains(msg, want) {
			return fmt.Errorf("ChildrenAsApplied %q does not say %q", msg, want)
		}
		return nil
	})
	es := childObject(ctx, o.C, desired.ElasticsearchGVK, ns, desired.ElasticsearchName(p))
	if es == nil || es.GetLabels()[desired.LabelComponent] != "search-by-hand" {
		t.Errorf("after the spec changed, the component label is not the human's any more: %v", es.GetLabels())
	}
}

func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	testutil.Eventually(t, 5*time.Minute, what, check)
}

// childObject is the child as the API server has it, nil when it does not exist.
func childObject(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return nil
	}
	return u
}
