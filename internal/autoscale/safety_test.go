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
