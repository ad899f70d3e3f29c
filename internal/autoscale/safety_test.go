package autoscale

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: fields}
	u.SetName(name)
	return u
}

func TestStrimziSafety(t *testing.T) {
	idle := obj("sensors", map[string]any{"status": map[string]any{"autoRebalance": map[string]any{"state": "Idle"}}})
	pool := obj("sensors-broker", map[string]any{"spec": map[string]any{"replicas": int64(3)},
		"status": map[string]any{"nodeIds": []any{int64(0), int64(1), int64(2)}}})
	template := obj("sensors-rebalance-template", map[string]any{})
	template.SetAnnotations(map[string]string{"strimzi.io/rebalance-template": "true"})
	rebalance := func(state string) *unstructured.Unstructured {
		return obj("sensors-auto-rebalancing-remove-brokers", map[string]any{"status": map[string]any{
			"conditions": []any{map[string]any{"type": state, "status": "True"}}}})
	}
	cases := []struct {
		name       string
		kafka      *unstructured.Unstructured
		pool       *unstructured.Unstructured
		rebalances []*unstructured.Unstructured
		want       string
	}{
		{"nothing reconciled yet", nil, nil, nil, ""},
		{"idle, pool settled, only the template", idle, pool, []*unstructured.Unstructured{template}, ""},
		{"auto-rebalance on scale-down", obj("sensors", map[string]any{"status": map[string]any{
			"autoRebalance": map[string]any{"state": "RebalanceOnScaleDown"}}}), pool, nil, "RebalanceRunning"},
		{"scale-down prevented", obj("sensors", map[string]any{"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Warning", "status": "True", "reason": "ScaleDownPreventionCheck",
				"message": "Reverting scale-down of KafkaNodePool sensors-broker by changing number of replicas to 4"}}}}),
			pool, nil, "ScaleDownBlocked"},
		{"pool still shrinking", idle, obj("sensors-broker", map[string]any{"spec": map[string]any{"replicas": int64(2)},
			"status": map[string]any{"nodeIds": []any{int64(0), int64(1), int64(2)}}}), nil, "ScaleDownInProgress"},
		{"a rebalance running", idle, pool, []*unstructured.Unstructured{template, rebalance("Rebalancing")}, "RebalanceRunning"},
		{"a rebalance failed", idle, pool, []*unstructured.Unstructured{rebalance("NotReady")}, "RebalanceNotReady"},
		{"a rebalance done", idle, pool, []*unstructured.Unstructured{rebalance("Ready")}, ""},
	}
	for _, tc := range cases {
		if got := StrimziSafety(tc.kafka, tc.pool, tc.rebalances); got.Reason != tc.want {
			t.Errorf("%s: %+v, want reason %q", tc.name, got, tc.want)
		}
	}
}

// Brokers Strimzi removes now: those of its remove-brokers auto-rebalance, or those a shrinking
// pool still runs; none while it adds brokers or is idle.
func TestStrimziSafetyLeaving(t *testing.T) {
	kafka := func(state string, modes ...any) *unstructured.Unstructured {
		return obj("sensors", map[string]any{"status": map[string]any{"autoRebalance": map[string]any{"state": state, "modes": modes}}})
	}
	mode := func(m string, ids ...any) map[string]any { return map[string]any{"mode": m, "brokers": ids} }
	pool := func(replicas int64, ids ...any) *unstructured.Unstructured {
		return obj("sensors-broker", map[string]any{"spec": map[string]any{"replicas": replicas}, "status": map[string]any{"nodeIds": ids}})
	}
	for _, tc := range []struct {
		name          string
		kafka, pool   *unstructured.Unstructured
		leaving, join int32
	}{
		{"removing one", kafka("RebalanceOnScaleDown", mode("remove-brokers", int64(3))), pool(3, int64(0), int64(1), int64(2), int64(3)), 1, 0},
		{"removing two, two queued to join", kafka("RebalanceOnScaleDown", mode("remove-brokers", int64(4), int64(5)),
			mode("add-brokers", int64(6), int64(7))), nil, 2, 0},
		{"removing, modes not written yet", kafka("RebalanceOnScaleDown"), nil, 1, 0},
		{"adding two", kafka("RebalanceOnScaleUp", mode("add-brokers", int64(3), int64(4))), nil, 0, 2},
		{"pool still shrinking", kafka("Idle"), pool(2, int64(0), int64(1), int64(2)), 1, 0},
		{"idle", kafka("Idle"), pool(3, int64(0), int64(1), int64(2)), 0, 0},
	} {
		got := StrimziSafety(tc.kafka, tc.pool, nil)
		if got.Leaving != tc.leaving || got.Joining != tc.join {
			t.Errorf("%s: leaving %d, joining %d; want %d, %d (%+v)", tc.name, got.Leaving, got.Joining, tc.leaving, tc.join, got)
		}
	}
}
