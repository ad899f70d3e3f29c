package ssa

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestChanges(t *testing.T) {
	want := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Thing",
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"app.kubernetes.io/component": "kafka", "keep": "x"}},
		"spec":     map[string]any{"replicas": 3, "sets": []any{map[string]any{"name": "data", "count": 4}}, "image": "i:1"},
	}}
	live := &unstructured.Unstructured{Object: normalize(want.Object)}
	_ = unstructured.SetNestedField(live.Object, int64(5), "spec", "replicas")
	_ = unstructured.SetNestedField(live.Object, "edited", "metadata", "labels", "app.kubernetes.io/component")
	// ECK-like: a full update of an atomic list with the same value and an empty status added.
	_ = unstructured.SetNestedSlice(live.Object, []any{map[string]any{"name": "data", "count": int64(4), "status": map[string]any{}}}, "spec", "sets")
	live.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "strata", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:keep":{}}},"f:spec":{"f:image":{}}}`)}},
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:app.kubernetes.io/component":{}}},"f:spec":{"f:replicas":{}}}`)}},
		{Manager: "elastic-operator", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:sets":{}}}`)}},
		{Manager: "someone", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)}},
	})
	got := Changes(live, want, "strata")
	var paths []string
	for _, c := range got {
		if c.Manager != "kubectl-edit" || c.Operation != metav1.ManagedFieldsOperationUpdate {
			t.Errorf("change %s by %s (%s): want only kubectl-edit's updates", c.Path, c.Manager, c.Operation)
		}
		paths = append(paths, c.Path.String())
	}
	if len(paths) != 2 || paths[0] != ".metadata.labels.app.kubernetes.io/component" || paths[1] != ".spec.replicas" {
		t.Errorf("changes %q, want the component label and .spec.replicas", paths)
	}
	if n, ok := FieldNames(got[0].Path); !ok || len(n) != 3 || n[2] != "app.kubernetes.io/component" {
		t.Errorf("FieldNames(%s) = %q, %v", got[0].Path, n, ok)
	}
	// Strata's own fields, and an object no one else wrote, are no change.
	if c := Changes(want, want, "strata"); len(c) != 0 {
		t.Errorf("an object without managed fields: %v", c)
	}
}

// TestHeldByOthers: only another manager's fields outside subresources count, whether the
// entry carries its field set as the API server sends it or compacted (Compact).
func TestHeldByOthers(t *testing.T) {
	fields := &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)}
	with := func(entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Thing"}}
		u.SetName("a")
		u.SetManagedFields(entries)
		return u
	}
	compacted, err := Compact(with(metav1.ManagedFieldsEntry{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		live *unstructured.Unstructured
		want bool
	}{
		{"no object", nil, false},
		{"no managedFields", with(), false},
		{"only self", with(metav1.ManagedFieldsEntry{Manager: "strata", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: fields}), false},
		{"another on status only", with(
			metav1.ManagedFieldsEntry{Manager: "strata", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: fields},
			metav1.ManagedFieldsEntry{Manager: "strimzi", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsV1: fields}), false},
		{"another without fields", with(metav1.ManagedFieldsEntry{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate}), false},
		{"another on the object", with(metav1.ManagedFieldsEntry{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields}), true},
		{"another on the object, compacted", compacted.(*unstructured.Unstructured), true},
	} {
		if got := HeldByOthers(c.live, "strata"); got != c.want {
			t.Errorf("%s: HeldByOthers = %v, want %v", c.name, got, c.want)
		}
	}
}
