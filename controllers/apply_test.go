package controllers

import "testing"

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
