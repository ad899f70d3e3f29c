package pipeline

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
