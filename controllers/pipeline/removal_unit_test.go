package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/ssa"
)

// A remove-brokers KafkaRebalance that Strimzi ended without moving the replicas is asked again
// a minute after it ended, and not before; one that runs, or is Ready, never.
func TestRefreshDue(t *testing.T) {
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	rb := func(state, at string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": state, "status": "True", "lastTransitionTime": at}}}}}
	}
	cases := []struct {
		name  string
		rb    *unstructured.Unstructured
		due   bool
		after time.Duration
	}{
		{"NotReady long ago", rb("NotReady", "2026-11-28T09:58:00Z"), true, 0},
		{"NotReady 10 s ago", rb("NotReady", "2026-11-28T09:59:50Z"), false, 50 * time.Second},
		{"Stopped a minute ago", rb("Stopped", "2026-11-28T09:59:00Z"), true, 0},
		{"NotReady at a time that is no time", rb("NotReady", "soon"), true, 0},
		{"Rebalancing", rb("Rebalancing", "2026-11-28T09:00:00Z"), false, 0},
		{"Ready", rb("Ready", "2026-11-28T09:00:00Z"), false, 0},
		{"no status yet", &unstructured.Unstructured{Object: map[string]any{}}, false, 0},
	}
	for _, c := range cases {
		due, after := refreshDue(c.rb, now)
		if due != c.due || after != c.after {
			t.Errorf("%s: due %v in %s, want %v in %s", c.name, due, after, c.due, c.after)
		}
	}
}

// PlanValid names the removal's state, and for one Strimzi ended, why.
func TestRebalanceState(t *testing.T) {
	rb := func(state, msg string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": state, "status": "True", "message": msg}}}}}
	}
	for _, c := range []struct {
		rb   *unstructured.Unstructured
		want string
	}{
		{rb("NotReady", "Kafka cluster is not Ready"), "NotReady: Kafka cluster is not Ready"},
		{rb("Stopped", ""), "Stopped"},
		{rb("Rebalancing", "moving"), "Rebalancing"},
		{&unstructured.Unstructured{Object: map[string]any{}}, ""},
	} {
		if got := rebalanceState(c.rb); got != c.want {
			t.Errorf("rebalanceState = %q, want %q", got, c.want)
		}
	}
}

// The pipeline's own removal holds brokers back while Cruise Control runs it, not before
// Strimzi reports it nor once it ended.
func TestRemovalUnderWay(t *testing.T) {
	rb := func(state string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": state, "status": "True"}}}}}
		u.SetName("solo-remove-brokers")
		return u
	}
	for _, c := range []struct {
		rb   *unstructured.Unstructured
		want string
	}{
		{rb("Rebalancing"), "KafkaRebalance solo-remove-brokers is Rebalancing"},
		{rb("PendingProposal"), "KafkaRebalance solo-remove-brokers is PendingProposal"},
		{rb("Ready"), ""},
		{rb("NotReady"), ""},
		{rb("Stopped"), ""},
		{nil, ""},
	} {
		if got := removalUnderWay(c.rb); got != c.want {
			t.Errorf("removalUnderWay = %q, want %q", got, c.want)
		}
	}
}

// The broker gate reads the pipeline's own removal from the reconcile's snapshot of its
// children, the object the plan's RemovalRunning reads: under way there, brokers are Leaving
// whatever the list says; and the listed copy (a KafkaRebalance of the cluster, as Strimzi's
// label makes it) never holds a scale-down back as another cluster rebalance would.
func TestBrokerSafetyReadsItsOwnRemovalFromTheSnapshot(t *testing.T) {
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "solo"}}
	rb := func(state string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(desired.KafkaRebalanceGVK)
		u.SetNamespace(p.Namespace)
		u.SetName(desired.BrokerRemovalName(p))
		u.SetLabels(map[string]string{desired.StrimziClusterLabel: desired.KafkaName(p)})
		u.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": state, "status": "True"}}}
		return u
	}
	served := []schema.GroupVersionKind{desired.KafkaRebalanceGVK}
	for _, c := range []struct {
		name         string
		listed, snap string // "" for absent
		leaving      int32
	}{
		{name: "running in both", listed: "Rebalancing", snap: "Rebalancing", leaving: 1},
		{name: "the list behind the snapshot", listed: "Ready", snap: "Rebalancing", leaving: 1},
		{name: "the snapshot says it ended", listed: "Rebalancing", snap: "Ready", leaving: 0},
		{name: "not made yet", leaving: 0},
	} {
		b := fake.NewClientBuilder()
		if c.listed != "" {
			b = b.WithObjects(rb(c.listed))
		}
		r := &Reconciler{Client: b.Build()}
		obs := observed{}
		if c.snap != "" {
			u := rb(c.snap)
			obs[ssa.Key{GVK: desired.KafkaRebalanceGVK, Namespace: p.Namespace, Name: u.GetName()}] = u
		}
		s := r.brokerSafety(context.Background(), p, obs, served)
		if s.Leaving != c.leaving {
			t.Errorf("%s: Leaving %d (%q), want %d", c.name, s.Leaving, s.LeavingWhy, c.leaving)
		}
		if s.Leaving > 0 && !strings.Contains(s.LeavingWhy, desired.BrokerRemovalName(p)) {
			t.Errorf("%s: LeavingWhy %q does not name the removal", c.name, s.LeavingWhy)
		}
		if s.Reason != "" {
			t.Errorf("%s: the pipeline's own removal holds scale-downs back: %s: %s", c.name, s.Reason, s.Message)
		}
	}
}
