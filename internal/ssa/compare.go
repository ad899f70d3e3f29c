package ssa

import (
	"bytes"
	"encoding/json"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// UpToDate says whether applying want to live as manager would change nothing (upToDate): for
// a caller that chooses between two versions of an object by whether the one it has would be
// written at all.
func UpToDate(live, want *unstructured.Unstructured, manager string) bool {
	return upToDate(live, want, manager)
}

// upToDate says, without a cached apply, whether applying want to live would change nothing:
// live holds every field of want with the same value, and want still has every field manager
// owns on live. The second half catches a field dropped from want, which an apply removes
// (server-side apply deletes the fields a manager stops sending, if no other manager owns
// them) and which a "live contains want" check alone never sees. An object manager has never
// applied is not up to date: the apply makes manager own its fields.
func upToDate(live, want *unstructured.Unstructured, manager string) bool {
	w := normalize(want.Object)
	if !contains(live.Object, w) {
		return false
	}
	owned, ok := ownedFields(live, manager)
	if !ok {
		return false
	}
	inWant := true
	owned.Iterate(func(p fieldpath.Path) {
		if inWant && !resolves(w, p) {
			inWant = false
		}
	})
	return inWant
}

// ownedFields is the set of fields manager owns on obj by apply (not by update, not on a
// subresource), as its managedFields entry records them.
func ownedFields(obj *unstructured.Unstructured, manager string) (*fieldpath.Set, bool) {
	for _, e := range ManagedFields(obj) {
		if e.Manager != manager || e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
			return nil, false
		}
		return set, true
	}
	return nil, false
}

// resolves says whether the path p selects something in obj (lookup).
func resolves(obj any, p fieldpath.Path) bool {
	_, ok := lookup(obj, p)
	return ok
}

func findElement(list any, match func(any) bool) (any, bool) {
	l, ok := list.([]any)
	if !ok {
		return nil, false
	}
	for _, e := range l {
		if match(e) {
			return e, true
		}
	}
	return nil, false
}

// contains reports whether live holds every field of want with an equal value. Lists must match
// element by element: server-side apply replaces atomic lists and merges keyed ones, and either
// way a list of another length is a change.
func contains(live, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			lv, ok := l[k]
			if !ok || !contains(lv, v) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(w) {
			return false
		}
		for i := range w {
			if !contains(l[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(live, want)
	}
}

// normalize gives a built object the types a decoded one has (int64 and float64 numbers,
// []any lists), by a JSON round trip, so that contains compares like with like.
func normalize(obj map[string]any) map[string]any {
	b, err := json.Marshal(obj)
	if err != nil {
		return obj
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(b); err != nil {
		return obj
	}
	return out.Object
}
