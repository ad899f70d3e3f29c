package chaos

import (
	"encoding/json"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FieldManager is the field manager Strata applies every child as.
const FieldManager = "strata"

// owned is the part of u that FieldManager's server-side apply owns (its managedFields entry):
// what Strata decided, without what the API server, ECK or the controller-manager added
// (defaults, a claim's volumeName). nil when Strata owns nothing of u.
func owned(u *unstructured.Unstructured) (map[string]any, error) {
	for _, mf := range u.GetManagedFields() {
		if mf.Manager != FieldManager || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(mf.FieldsV1.Raw, &fields); err != nil {
			return nil, err
		}
		out, _ := pick(u.Object, fields).(map[string]any)
		if meta, ok := out["metadata"].(map[string]any); ok {
			delete(meta, "managedFields")
			// The owner's UID is the pipeline's, different in every run of the same life.
			refs, _ := meta["ownerReferences"].([]any)
			for _, r := range refs {
				if m, ok := r.(map[string]any); ok {
					delete(m, "uid")
				}
			}
		}
		return out, nil
	}
	return nil, nil
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
