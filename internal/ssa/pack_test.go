package ssa

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/plan"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// children are the sample pipeline's children as the API server would send them to a watch:
// Strata's request decoded from JSON, with resourceVersion, a managedFields entry, and a status.
func children(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	tiers := []v1alpha1.StorageTier{gen.NVMeTier(), gen.HDDTier(gen.SetStorageClass("st1"))}
	p := gen.Pipeline(gen.SetName("ns", "sensors"))
	p.UID = types.UID("u1")
	pl, err := plan.Fresh(p, tiers)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, c := range desired.All(desired.Inputs{Pipeline: p, Plan: pl, Tiers: tiers}) {
		c.SetResourceVersion("42")
		fields, err := json.Marshal(map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{}}})
		if err != nil {
			t.Fatal(err)
		}
		live := map[string]any{}
		b, err := json.Marshal(c.Object)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &live); err != nil {
			t.Fatal(err)
		}
		meta := live["metadata"].(map[string]any)
		meta["managedFields"] = []any{map[string]any{"manager": "strata", "operation": "Apply",
			"fieldsType": "FieldsV1", "fieldsV1": json.RawMessage(fields)}}
		live["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}
		b, err = json.Marshal(live)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(b); err != nil { // how the informer decodes it
			t.Fatal(err)
		}
		out = append(out, u)
	}
	if len(out) < 10 {
		t.Fatalf("%d children built, want the sample's 14 or so", len(out))
	}
	return out
}

// TestPackReadsBackWhole: every child of the sample pipeline, compacted then packed as the
// cache stores it, reads back deep-equal to the compacted object; its metadata stays readable
// packed (labels, owner references), its spec does not stay decoded, and an object holding a
// float is stored as it is.
func TestPackReadsBackWhole(t *testing.T) {
	packedSome := false
	var packed, all, jsonBytes, blobBytes int
	for _, live := range children(t) {
		all++
		c, err := Compact(live)
		if err != nil {
			t.Fatal(err)
		}
		want := c.(*unstructured.Unstructured).DeepCopy()
		p, err := Pack(c)
		if err != nil {
			t.Fatal(err)
		}
		stored := p.(*unstructured.Unstructured)
		if holdsFloat(want.Object) {
			if !reflect.DeepEqual(stored.Object, want.Object) {
				t.Errorf("%s %s holds a float and was packed", want.GetKind(), want.GetName())
			}
			continue
		}
		packedSome = true
		packed++
		b, _ := json.Marshal(want.Object)
		jsonBytes += len(b)
		blobBytes += len(stored.Object[packedKey].(string))
		if _, ok := stored.Object["spec"]; ok {
			t.Errorf("%s %s: spec still decoded after Pack", want.GetKind(), want.GetName())
		}
		if !reflect.DeepEqual(stored.GetLabels(), want.GetLabels()) || !reflect.DeepEqual(stored.GetOwnerReferences(), want.GetOwnerReferences()) {
			t.Errorf("%s %s: labels or owner references not readable packed", want.GetKind(), want.GetName())
		}
		got := stored.DeepCopy() // what the cache hands a reader
		if err := Unpack(got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Object, want.Object) {
			t.Errorf("%s %s read back\n%v\nwant\n%v", want.GetKind(), want.GetName(), got.Object, want.Object)
		}
	}
	if !packedSome {
		t.Error("no child was packed")
	}
	t.Logf("%d of %d children packed: %d bytes of JSON, %d compressed (metadata aside)", packed, all, jsonBytes, blobBytes)
	float := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "X",
		"metadata": map[string]any{"name": "f"}, "spec": map[string]any{"ratio": 1.0}}}
	if p, _ := Pack(float.DeepCopy()); !reflect.DeepEqual(p.(*unstructured.Unstructured).Object, float.Object) {
		t.Errorf("an object holding 1.0 was packed: %v", p)
	}
}

// stored is a cache that holds one object, as the informer stored it (packed).
type stored struct {
	crcache.Cache
	obj *unstructured.Unstructured
}

func (s stored) Get(_ context.Context, _ client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if o := (&client.GetOptions{}).ApplyOptions(opts); o.UnsafeDisableDeepCopy != nil && *o.UnsafeDisableDeepCopy {
		obj.(*unstructured.Unstructured).Object = s.obj.Object // the cache's own object, as CacheReader gives it
		return nil
	}
	s.obj.DeepCopyInto(obj.(*unstructured.Unstructured))
	return nil
}

func (s stored) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	l := list.(*unstructured.UnstructuredList)
	l.Items = []unstructured.Unstructured{*s.obj.DeepCopy()}
	return nil
}

// TestPackedCacheUnpacks: Get and List through PackedCache give the object whole, and the
// stored object stays packed.
func TestPackedCacheUnpacks(t *testing.T) {
	live := children(t)[0]
	want := live.DeepCopy()
	p, err := Pack(live)
	if err != nil {
		t.Fatal(err)
	}
	s := stored{obj: p.(*unstructured.Unstructured)}
	c := PackedCache{Cache: s}
	got := &unstructured.Unstructured{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(want), got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Object, want.Object) {
		t.Errorf("Get gave %v, want %v", got.Object, want.Object)
	}
	list := &unstructured.UnstructuredList{}
	if err := c.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || !reflect.DeepEqual(list.Items[0].Object, want.Object) {
		t.Errorf("List gave %v, want the object whole", list.Items)
	}
	unsafe := &unstructured.Unstructured{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(want), unsafe, client.UnsafeDisableDeepCopy); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(unsafe.Object, want.Object) {
		t.Errorf("Get without a deep copy gave %v, want %v", unsafe.Object, want.Object)
	}
	if _, ok := s.obj.Object[packedKey]; !ok {
		t.Error("reading unpacked the stored object itself")
	}
}

// BenchmarkPackUnpack is one child packed as the cache does on a watch event and unpacked as
// a reconcile reads it: the CPU it costs against the memory it saves (packed-B/child). The
// children are close to those the dictionary is made of; controllers' BenchmarkCachedChild
// weighs others.
func BenchmarkPackUnpack(b *testing.B) {
	cs := children(b)
	var packed float64
	for b.Loop() {
		packed = 0
		for _, c := range cs {
			u := c.DeepCopy()
			if _, err := Pack(u); err != nil {
				b.Fatal(err)
			}
			packed += float64(len(u.Object[packedKey].(string)))
			if err := Unpack(u); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(packed/float64(len(cs)), "packed-B/child")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(cs)), "µs/child")
}
