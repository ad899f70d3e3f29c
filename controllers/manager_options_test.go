package controllers

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/ssa"
)

func managedFields() []metav1.ManagedFieldsEntry {
	return []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:zone":{}}}}`)}}}
}

// TestCacheTransformDropsUnreadManagedFields: the manager's cache keeps no managedFields of
// pipelines and of metadata-only objects (Nodes, CRDs), and keeps a child's, which the applier
// reads (ssa.ManagedFields), with their field sets.
func TestCacheTransformDropsUnreadManagedFields(t *testing.T) {
	transform := ManagerOptions(ctrl.Options{}).Cache.DefaultTransform

	node := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "n1",
		Labels: map[string]string{"zone": "a"}, ManagedFields: managedFields()}}
	node.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
	p := &v1alpha1.AnalyticsPipeline{ObjectMeta: metav1.ObjectMeta{Name: "sensors", Namespace: "ns",
		Finalizers: []string{"strata.dev/children"}, ManagedFields: managedFields()}}
	for _, obj := range []metav1.Object{node, p} {
		out, err := transform(obj)
		if err != nil {
			t.Fatal(err)
		}
		got := out.(metav1.Object)
		if got.GetManagedFields() != nil {
			t.Errorf("%s keeps managedFields %v", got.GetName(), got.GetManagedFields())
		}
	}
	if node.Labels["zone"] != "a" || len(p.Finalizers) != 1 {
		t.Errorf("the transform changed more than managedFields: %v %v", node.Labels, p.Finalizers)
	}

	child := &unstructured.Unstructured{}
	child.SetAPIVersion("v1")
	child.SetKind("ConfigMap")
	child.SetName("sensors-metrics")
	child.SetManagedFields(managedFields())
	out, err := transform(child)
	if err != nil {
		t.Fatal(err)
	}
	stored := out.(*unstructured.Unstructured)
	if stored.GetName() != "sensors-metrics" {
		t.Errorf("the stored child's name is %q: metadata is kept decoded", stored.GetName())
	}
	if err := ssa.Unpack(stored); err != nil {
		t.Fatal(err)
	}
	entries := ssa.ManagedFields(stored)
	if len(entries) != 1 || entries[0].FieldsV1 == nil || entries[0].Manager != "kubelet" {
		t.Errorf("a child's managedFields after the transform: %+v, want the kubelet's entry with its fields", entries)
	}
}

// BenchmarkCachedChild is what the manager's cache keeps of a child: the golden children
// decoded as from a watch, then through the cache's transforms (ManagerOptions), their live
// heap per object. docs/performance.md has the figures.
func BenchmarkCachedChild(b *testing.B) {
	all, err := filepath.Glob("../internal/desired/testdata/*.golden.yaml")
	if err != nil || len(all) == 0 {
		b.Fatalf("no golden children: %v", err)
	}
	// Not split-tiers' children: internal/ssa's compression dictionary is made of them.
	var files []string
	for _, f := range all {
		if !strings.HasPrefix(filepath.Base(f), "split-tiers.") {
			files = append(files, f)
		}
	}
	const n = 4000
	var raw [][]byte
	for i := range n {
		y, err := os.ReadFile(files[i%len(files)])
		if err != nil {
			b.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(y, &u.Object); err != nil {
			b.Fatal(err)
		}
		// What the API server adds: identity, a version, a creation time, the apply's entry.
		u.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i)))
		u.SetResourceVersion(fmt.Sprint(100000 + i))
		u.SetCreationTimestamp(metav1.Now())
		fields, err := fieldpath.SetFromValue(value.NewValueInterface(u.Object)).ToJSON()
		if err != nil {
			b.Fatal(err)
		}
		u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "strata", Operation: metav1.ManagedFieldsOperationApply,
			APIVersion: u.GetAPIVersion(), FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: fields}, Time: ptr.To(metav1.Now())}})
		j, err := u.MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		raw = append(raw, j)
	}
	transform := ManagerOptions(ctrl.Options{}).Cache.DefaultTransform
	var perObject float64
	for b.Loop() {
		keep := make([]any, n)
		before := liveHeap()
		for i, j := range raw {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(j); err != nil {
				b.Fatal(err)
			}
			if keep[i], err = transform(u); err != nil {
				b.Fatal(err)
			}
		}
		perObject = float64(liveHeap()-before) / n
		runtime.KeepAlive(keep)
	}
	b.ReportMetric(perObject, "live-B/object")
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
