package ssa

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestContains(t *testing.T) {
	live := map[string]any{
		"metadata": map[string]any{"name": "a", "resourceVersion": "7", "labels": map[string]any{"x": "1", "y": "2"}},
		"spec":     map[string]any{"replicas": int64(3), "list": []any{map[string]any{"a": "b", "extra": true}}, "f": 0.5},
		"status":   map[string]any{"ready": true},
	}
	for _, tc := range []struct {
		name string
		want map[string]any
		ok   bool
	}{
		{"subset", map[string]any{"metadata": map[string]any{"labels": map[string]any{"x": "1"}}, "spec": map[string]any{"replicas": int64(3)}}, true},
		{"list elements are subsets", map[string]any{"spec": map[string]any{"list": []any{map[string]any{"a": "b"}}}}, true},
		{"changed scalar", map[string]any{"spec": map[string]any{"replicas": int64(4)}}, false},
		{"missing field", map[string]any{"spec": map[string]any{"partitions": int64(4)}}, false},
		{"list of another length", map[string]any{"spec": map[string]any{"list": []any{map[string]any{"a": "b"}, map[string]any{"a": "c"}}}}, false},
		{"type differs", map[string]any{"spec": map[string]any{"replicas": "3"}}, false},
		{"float", map[string]any{"spec": map[string]any{"f": 0.5}}, true},
	} {
		if got := contains(live, tc.want); got != tc.ok {
			t.Errorf("%s: contains = %v, want %v", tc.name, got, tc.ok)
		}
	}
}

func TestNormalize(t *testing.T) {
	built := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "spec": map[string]any{"n": 3, "l": []string{"a"}}}
	got := normalize(built)
	spec := got["spec"].(map[string]any)
	if _, ok := spec["n"].(int64); !ok {
		t.Errorf("n is %T, want int64 as decoded objects have", spec["n"])
	}
	if _, ok := spec["l"].([]any); !ok {
		t.Errorf("l is %T, want []any", spec["l"])
	}
}

// TestUpToDate: without a cached apply, an object is up to date when it holds the desired
// fields and the manager owns no field the desired object dropped.
func TestUpToDate(t *testing.T) {
	// What the API server records after "strata" applied a ConfigMap with data a and b, a label,
	// and a keyed list element (the shape of ownerReferences).
	owned := `{"f:data":{".":{},"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:x":{}},` +
		`"f:ownerReferences":{"k:{\"uid\":\"u1\"}":{}}},"f:spec":{"f:set":{"v:\"p\"":{}},"f:idx":{"i:0":{}}}}`
	live := func(manager string, op metav1.ManagedFieldsOperationType) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "labels": map[string]any{"x": "1", "other": "2"},
				"ownerReferences": []any{map[string]any{"uid": "u1", "name": "p"}}},
			"data": map[string]any{"a": "1", "b": "2"},
			"spec": map[string]any{"set": []any{"p"}, "idx": []any{"q"}},
		}}
		u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: manager, Operation: op, FieldsV1: &metav1.FieldsV1{Raw: []byte(owned)}}})
		return u
	}
	want := func(data map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "labels": map[string]string{"x": "1"},
				"ownerReferences": []any{map[string]any{"uid": "u1", "name": "p"}}},
			"data": data,
			"spec": map[string]any{"set": []string{"p"}, "idx": []string{"q"}},
		}}
	}
	both := map[string]any{"a": "1", "b": "2"}
	for _, tc := range []struct {
		name       string
		live, want *unstructured.Unstructured
		ok         bool
	}{
		{"same fields", live("strata", metav1.ManagedFieldsOperationApply), want(both), true},
		{"a field dropped from desired", live("strata", metav1.ManagedFieldsOperationApply), want(map[string]any{"a": "1"}), false},
		{"a value changed", live("strata", metav1.ManagedFieldsOperationApply), want(map[string]any{"a": "1", "b": "3"}), false},
		{"never applied by strata", live("kubectl", metav1.ManagedFieldsOperationApply), want(both), false},
		{"strata wrote by update, not apply", live("strata", metav1.ManagedFieldsOperationUpdate), want(both), false},
	} {
		if got := upToDate(tc.live, tc.want, "strata"); got != tc.ok {
			t.Errorf("%s: upToDate = %v, want %v", tc.name, got, tc.ok)
		}
	}
}
