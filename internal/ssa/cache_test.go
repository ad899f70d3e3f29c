package ssa

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestCacheBoundedAndForgotten: the cache holds at most its size, the least recently used
// entries go first, and forgetting a scope drops its entries only, evicted ones included.
func TestCacheBoundedAndForgotten(t *testing.T) {
	c := newCache(4)
	key := func(i int) Key { return Key{Namespace: "ns", Name: fmt.Sprint(i)} }
	for i := range 6 {
		c.add(key(i), applied{scope: fmt.Sprint("pipeline ", i%2), resourceVersion: fmt.Sprint(i)})
	}
	if n := c.len(); n != 4 {
		t.Fatalf("cache holds %d entries, want its size 4", n)
	}
	if _, ok := c.get(key(0)); ok {
		t.Error("the least recently used entry should have been evicted")
	}
	c.removeScope("pipeline 0")
	if n := c.len(); n != 2 {
		t.Errorf("after forgetting pipeline 0: %d entries, want 2 (pipeline 1's)", n)
	}
	for _, i := range []int{3, 5} {
		if _, ok := c.get(key(i)); !ok {
			t.Errorf("entry %d of pipeline 1 was dropped with pipeline 0", i)
		}
	}
	c.removeScope("pipeline 1")
	if n, idx := c.len(), len(c.byScope); n != 0 || idx != 0 {
		t.Errorf("after forgetting both: %d entries, %d scopes indexed, want none", n, idx)
	}
	// An object applied again for another owner moves to that owner's scope.
	c.add(key(9), applied{scope: "a"})
	c.add(key(9), applied{scope: "b"})
	c.removeScope("a")
	if _, ok := c.get(key(9)); !ok {
		t.Error("forgetting the old scope dropped an object now applied for another")
	}
}

// TestAppliedReadsBackWhatWasApplied: the applier keeps what it applied compressed, reads it back
// whole (deep-equal to the request), and an apply of the same request against the same
// resourceVersion sends nothing and keeps it readable.
func TestAppliedReadsBackWhatWasApplied(t *testing.T) {
	data := map[string]any{}
	for i := range 40 {
		data[fmt.Sprintf("key-%02d", i)] = strings.Repeat("value ", 8)
	}
	want := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "ns", "labels": map[string]any{"x": "1"}},
		"data":     data,
	}}
	live := want.DeepCopy()
	live.SetResourceVersion("7")
	fields := map[string]any{}
	for k := range data {
		fields["f:"+k] = map[string]any{}
	}
	b, err := json.Marshal(map[string]any{"f:data": fields, "f:metadata": map[string]any{"f:labels": map[string]any{"f:x": map[string]any{}}}})
	if err != nil {
		t.Fatal(err)
	}
	live.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "strata", Operation: metav1.ManagedFieldsOperationApply,
		FieldsV1: &metav1.FieldsV1{Raw: b}}})

	a := New(nil, "strata", 8) // no client: an apply that sent a request would panic
	for range 2 {
		if _, err := a.Apply(context.Background(), "p", want, live); err != nil {
			t.Fatal(err)
		}
		got, ok := a.Applied(KeyOf(want))
		if !ok {
			t.Fatal("the applier does not remember what it found applied")
		}
		if !reflect.DeepEqual(got.Object, normalize(want.Object)) {
			t.Errorf("read back %v\nwant %v", got.Object, want.Object)
		}
	}
	request, err := json.Marshal(want.Object)
	if err != nil {
		t.Fatal(err)
	}
	if kept, _ := a.cache.get(KeyOf(want)); len(kept.raw) >= len(request) {
		t.Errorf("kept %d bytes of a %d-byte request: not compressed", len(kept.raw), len(request))
	}
}
