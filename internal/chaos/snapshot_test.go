package chaos

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// elasticsearch is an Elasticsearch child in namespace ns with count data nodes, whose
// spec.nodeSets is Strata's (strataOwnsNodeSets) or ECK's: ECK's typed Update takes the whole
// atomic list whenever it writes.
func elasticsearch(ns string, count int64, strataOwnsNodeSets bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "elasticsearch.k8s.elastic.co/v1", "kind": "Elasticsearch",
		"metadata": map[string]any{"name": "sensors", "namespace": ns},
		"spec": map[string]any{
			"version": "8.19.0",
			"nodeSets": []any{map[string]any{"name": "data", "count": count,
				"volumeClaimTemplates": []any{map[string]any{"metadata": map[string]any{"name": "elasticsearch-data"}, "status": map[string]any{}}}}},
		},
	}}
	strata, eck := `{"f:spec":{"f:version":{}}}`, `{"f:spec":{"f:nodeSets":{}}}`
	if strataOwnsNodeSets {
		strata, eck = `{"f:spec":{"f:version":{},"f:nodeSets":{}}}`, `{"f:metadata":{"f:annotations":{}}}`
	}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "elastic-operator", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(eck)}},
		{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(strata)}},
	})
	return u
}

// reference is what Take keeps of u.
func reference(t *testing.T, u *unstructured.Unstructured) Decided {
	t.Helper()
	fields, err := ownedFields(u)
	if err != nil {
		t.Fatal(err)
	}
	v, err := value(u, fields, u.GetNamespace())
	if err != nil {
		t.Fatal(err)
	}
	return Decided{fields, v, u.DeepCopy()}
}

// TestDiffersWhoeverWroteLast: which of Strata and ECK wrote an atomic list last is timing, not a
// decision; a value that differs is one.
func TestDiffersWhoeverWroteLast(t *testing.T) {
	cases := []struct {
		name     string
		ref      *unstructured.Unstructured
		live     *unstructured.Unstructured
		noObject bool // a reference without the whole object: only what its Strata applied
		want     string
	}{
		{name: "ECK wrote last in the reference, Strata in this run", ref: elasticsearch("run-a", 3, false), live: elasticsearch("run-b", 3, true)},
		{name: "Strata wrote last in the reference, ECK in this run", ref: elasticsearch("run-a", 3, true), live: elasticsearch("run-b", 3, false)},
		{name: "both Strata's", ref: elasticsearch("run-a", 3, true), live: elasticsearch("run-b", 3, true)},
		{name: "another count in this run", ref: elasticsearch("run-a", 3, false), live: elasticsearch("run-b", 4, true),
			want: `this run's Strata applied {"spec":{"nodeSets":[{"count":4,`},
		{name: "another count in the reference's", ref: elasticsearch("run-a", 4, true), live: elasticsearch("run-b", 3, true),
			want: `want {"spec":{"nodeSets":[{"count":4,`},
		{name: "a reference without its object reads only its Strata's fields", ref: elasticsearch("run-a", 3, false),
			live: elasticsearch("run-b", 3, true), noObject: true, want: `this run's Strata applied`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := reference(t, c.ref)
			if c.noObject {
				w.Object = nil
			}
			got, err := differs(c.live, w, c.live.GetNamespace())
			if err != nil {
				t.Fatal(err)
			}
			if (got == "") != (c.want == "") || !strings.Contains(got, c.want) {
				t.Errorf("differs = %q, want %q", got, c.want)
			}
		})
	}
}
