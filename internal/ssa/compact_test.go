package ssa

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// liveJSON is a child as the API server sends it to a watch: Strata's apply entry, another
// manager's edit of a field Strata set, a status entry, and kubectl's last-applied record.
const liveJSON = `{"apiVersion":"kafka.strimzi.io/v1","kind":"KafkaNodePool",
 "metadata":{"name":"p-broker","namespace":"n","resourceVersion":"9",
  "labels":{"app":"kafka"},
  "annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"big\":\"copy\"}","keep":"me"},
  "ownerReferences":[{"apiVersion":"strata.dev/v1alpha1","kind":"AnalyticsPipeline","name":"p","uid":"u1","controller":true}],
  "managedFields":[
   {"manager":"strata","operation":"Apply","apiVersion":"kafka.strimzi.io/v1","fieldsType":"FieldsV1",
    "fieldsV1":{"f:metadata":{"f:labels":{"f:app":{}},"f:ownerReferences":{"k:{\"uid\":\"u1\"}":{}}},"f:spec":{"f:roles":{},"f:storage":{"f:size":{}}}}},
   {"manager":"kubectl-edit","operation":"Update","apiVersion":"kafka.strimzi.io/v1","fieldsType":"FieldsV1",
    "fieldsV1":{"f:spec":{"f:replicas":{}}}},
   {"manager":"strimzi","operation":"Update","apiVersion":"kafka.strimzi.io/v1","subresource":"status","fieldsType":"FieldsV1",
    "fieldsV1":{"f:status":{"f:replicas":{}}}}]},
 "spec":{"replicas":5,"roles":["broker"],"storage":{"size":"10Gi"}},
 "status":{"replicas":5}}`

func decoded(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(liveJSON)); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestCompactKeepsWhatIsRead: upToDate and Changes answer the same on a compacted object as on
// the object decoded whole, for an apply that changes nothing, one that changes a field and
// one that drops a field; the spec, status, labels and other annotations are untouched.
func TestCompactKeepsWhatIsRead(t *testing.T) {
	same := map[string]any{"apiVersion": "kafka.strimzi.io/v1", "kind": "KafkaNodePool",
		"metadata": map[string]any{"name": "p-broker", "namespace": "n", "labels": map[string]any{"app": "kafka"},
			"ownerReferences": []any{map[string]any{"apiVersion": "strata.dev/v1alpha1", "kind": "AnalyticsPipeline", "name": "p", "uid": "u1", "controller": true}}},
		"spec": map[string]any{"replicas": int64(3), "roles": []any{"broker"}, "storage": map[string]any{"size": "10Gi"}}}
	wants := map[string]*unstructured.Unstructured{}
	for name, edit := range map[string]func(spec map[string]any){
		"replicas taken back": func(map[string]any) {},
		"size changed":        func(s map[string]any) { s["storage"] = map[string]any{"size": "20Gi"} },
		"storage dropped":     func(s map[string]any) { delete(s, "storage") },
		"replicas as live":    func(s map[string]any) { s["replicas"] = int64(5) },
	} {
		w := (&unstructured.Unstructured{Object: same}).DeepCopy()
		edit(w.Object["spec"].(map[string]any))
		wants[name] = w
	}
	whole := decoded(t)
	c, err := Compact(decoded(t))
	if err != nil {
		t.Fatal(err)
	}
	compact := c.(*unstructured.Unstructured)
	for name, w := range wants {
		if a, b := upToDate(whole, w, "strata"), upToDate(compact, w, "strata"); a != b {
			t.Errorf("%s: upToDate %v on the whole object, %v compacted", name, a, b)
		}
		if a, b := Changes(whole, w, "strata"), Changes(compact, w, "strata"); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: Changes %v on the whole object, %v compacted", name, a, b)
		}
	}
	if !upToDate(compact, wants["replicas as live"], "strata") {
		t.Error("an apply of what the object holds is not up to date on the compacted object")
	}
	if got := Changes(compact, wants["replicas taken back"], "strata"); len(got) != 1 || got[0].Manager != "kubectl-edit" {
		t.Errorf("Changes on the compacted object = %v, want kubectl-edit's spec.replicas", got)
	}
	if !reflect.DeepEqual(compact.Object["spec"], whole.Object["spec"]) || !reflect.DeepEqual(compact.Object["status"], whole.Object["status"]) ||
		!reflect.DeepEqual(compact.GetLabels(), whole.GetLabels()) || !reflect.DeepEqual(compact.GetOwnerReferences(), whole.GetOwnerReferences()) {
		t.Error("Compact changed the spec, status, labels or owner references")
	}
	if got := compact.GetAnnotations(); len(got) != 1 || got["keep"] != "me" {
		t.Errorf("annotations %v, want only keep=me (kubectl's last-applied dropped)", got)
	}
	entries := ManagedFields(compact)
	if len(entries) != 2 {
		t.Fatalf("%d managedFields entries, want 2 (the status entry dropped)", len(entries))
	}
	for _, e := range entries {
		if e.FieldsV1 == nil || !strings.HasPrefix(string(e.FieldsV1.Raw), `{"f:`) {
			t.Errorf("%s's field set not given back: %v", e.Manager, e.FieldsV1)
		}
	}
	raw, _, _ := unstructured.NestedSlice(compact.Object, "metadata", "managedFields")
	for _, e := range raw {
		if _, isTree := e.(map[string]any)["fieldsV1"]; isTree {
			t.Error("a field set is still held as a tree of maps")
		}
	}
	if _, err := Compact(compact.DeepCopy()); err != nil {
		t.Errorf("compacting twice: %v", err)
	}
}
