package chaos

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestOwned(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "c", "labels": map[string]any{"a": "1", "b": "2"}},
		"spec": map[string]any{
			"volumeName": "pv-1", // the controller-manager's
			"resources":  map[string]any{"requests": map[string]any{"storage": "1Gi"}},
			"nodeSets": []any{
				map[string]any{"name": "master", "count": int64(3), "defaulted": true},
				map[string]any{"name": "data", "count": int64(4)},
			},
			"roles": []any{"x", "y"},
		},
	}}
	raw := `{"f:metadata":{"f:labels":{"f:a":{}}},"f:spec":{"f:resources":{"f:requests":{"f:storage":{}}},
		"f:nodeSets":{"k:{\"name\":\"master\"}":{".":{},"f:name":{},"f:count":{}}},"f:roles":{"v:\"y\"":{}}}}`
	u.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:volumeName":{}}}`)}},
		{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(raw)}},
	})
	fields, err := ownedFields(u)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(decided(u, fields))
	want := `{"metadata":{"labels":{"a":"1"}},"spec":{"nodeSets":[{"count":3,"name":"master"}],"resources":{"requests":{"storage":"1Gi"}},"roles":["y"]}}`
	if string(b) != want {
		t.Errorf("owned:\n got %s\nwant %s", b, want)
	}
	none := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x"}}}
	if got, err := ownedFields(none); err != nil || got != nil {
		t.Errorf("an object Strata owns nothing of: %v, %v", got, err)
	}
}

func TestContainsJSON(t *testing.T) {
	cases := []struct {
		sup, sub string
		want     bool
	}{
		{`{"a":[{"x":1,"status":{}}],"b":2}`, `{"a":[{"x":1}]}`, true},
		{`{"a":[{"x":1}]}`, `{"a":[{"x":2}]}`, false},
		{`{"a":[{"x":1}]}`, `{"a":[{"x":1},{"x":2}]}`, false},
		{`{"a":null}`, `{"a":[]}`, false},
		{`{"a":"v"}`, `{}`, true},
	}
	for _, c := range cases {
		if got := containsJSON(c.sup, c.sub); got != c.want {
			t.Errorf("containsJSON(%s, %s) = %v", c.sup, c.sub, got)
		}
	}
}
