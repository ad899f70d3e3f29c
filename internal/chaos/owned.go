package chaos

import (
	"encoding/json"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// FieldManager is the field manager Strata applies every child as.
const FieldManager = "strata"

// ownedFields is FieldManager's field set on u: its apply's managedFields entry (nil when
// Strata applied nothing of u).
func ownedFields(u *unstructured.Unstructured) (map[string]any, error) {
	for _, mf := range u.GetManagedFields() {
		if mf.Manager != FieldManager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(mf.FieldsV1.Raw, &fields); err != nil {
			return nil, err
		}
		return fields, nil
	}
	return nil, nil
}

// decided is the part of u that fields names (what Strata applied, the API server's defaults,
// ECK's or the controller-manager's additions left out), without what differs between two runs
// of one life by nature: the owner's UID, a Secret's values (a password is generated once per
// pipeline).
func decided(u *unstructured.Unstructured, fields map[string]any) map[string]any {
	out, _ := pick(u.Object, fields).(map[string]any)
	if meta, ok := out["metadata"].(map[string]any); ok {
		delete(meta, "managedFields")
		// Owner references are a list keyed by UID, the pipeline's, which differs between runs:
		// the field set of one run names none of another's, so the live list is taken whole.
		if _, set := meta["ownerReferences"]; set {
			meta["ownerReferences"] = runtime.DeepCopyJSONValue(u.Object["metadata"].(map[string]any)["ownerReferences"])
		}
		refs, _ := meta["ownerReferences"].([]any)
		for _, r := range refs {
			if m, ok := r.(map[string]any); ok {
				delete(m, "uid")
			}
		}
	}
	if u.GetKind() == "Secret" && out != nil {
		out["data"] = keys(out["data"])
	}
	return out
}

// pick walks a fieldsV1 set (structured-merge-diff's format: "f:<field>" for a map's field,
// "k:<json keys>" for a list item by its keys, "v:<json>" for a set's value, "." for the node
// itself) over v and keeps what it names; a field whose set is empty is owned whole.
func pick(v any, fields map[string]any) any {
	if len(fields) == 0 {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, sub := range fields {
			name, ok := strings.CutPrefix(k, "f:")
			if !ok {
				continue
			}
			if val, present := x[name]; present {
				subFields, _ := sub.(map[string]any)
				out[name] = pick(val, subFields)
			}
		}
		return out
	case []any:
		var out []any
		for _, item := range x {
			for k, sub := range fields {
				if matches(item, k) {
					subFields, _ := sub.(map[string]any)
					out = append(out, pick(item, subFields))
					break
				}
			}
		}
		return out
	}
	return v
}

// matches says whether a list item is the one a "k:" or "v:" path element names.
func matches(item any, element string) bool {
	switch {
	case strings.HasPrefix(element, "k:"):
		var keys map[string]any
		if json.Unmarshal([]byte(element[2:]), &keys) != nil {
			return false
		}
		m, ok := item.(map[string]any)
		if !ok {
			return false
		}
		for k, want := range keys {
			if !equalJSON(m[k], want) {
				return false
			}
		}
		return true
	case strings.HasPrefix(element, "v:"):
		var want any
		if json.Unmarshal([]byte(element[2:]), &want) != nil {
			return false
		}
		return equalJSON(item, want)
	}
	return false
}

// equalJSON compares two values as JSON does (an int64 and a float64 of one number are equal).
func equalJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return reflect.DeepEqual(a, b)
	}
	var na, nb any
	_ = json.Unmarshal(ja, &na)
	_ = json.Unmarshal(jb, &nb)
	return reflect.DeepEqual(na, nb)
}
