package ssa

import (
	"bytes"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Change is a field of an object that another field manager holds with a value other than the
// one self applies: someone (a human with kubectl, another controller) changed a field self
// set, and the API server moved it to them.
type Change struct {
	// Path is the field, as server-side apply names it (".spec.replicas",
	// `.metadata.labels[app.kubernetes.io/component]` is `.metadata.labels.app.kubernetes.io/component`).
	Path fieldpath.Path
	// Manager is the field manager that holds it now, and Operation how it wrote it (Update:
	// kubectl edit, patch, a typed client's update; Apply: kubectl apply --server-side
	// --force-conflicts).
	Manager   string
	Operation metav1.ManagedFieldsOperationType
}

// Changes lists the fields of want (what self applies) that live holds with another value and
// that another manager owns on live, by manager then path. A field another manager took over
// with the same value (ECK's full Update of its Elasticsearch owns an atomic list unchanged) is
// no change; a field no manager lists (removed by someone) is not reported: there is no one to
// name. Fields only on subresources (status) are not self's.
func Changes(live, want *unstructured.Unstructured, self string) []Change {
	if !HeldByOthers(live, self) {
		return nil // the common case, answered without normalizing want
	}
	w := normalize(want.Object)
	var out []Change
	for _, e := range ManagedFields(live) {
		if e.Manager == self || e.Subresource != "" || e.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
			continue
		}
		set.Iterate(func(p fieldpath.Path) {
			wv, ok := lookup(w, p)
			if !ok {
				return
			}
			if _, isMap := wv.(map[string]any); isMap {
				return // a map or a list element: its own fields are compared one by one
			}
			if lv, ok := lookup(live.Object, p); ok && !contains(lv, wv) {
				out = append(out, Change{Path: p.Copy(), Manager: e.Manager, Operation: e.Operation})
			}
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Manager != out[j].Manager {
			return out[i].Manager < out[j].Manager
		}
		return out[i].Path.String() < out[j].Path.String()
	})
	return out
}

// HeldByOthers says whether a field manager other than self holds fields of live outside its
// subresources: only then can Changes find anything. It reads live's managedFields as they are,
// without converting them (ManagedFields), as every reconcile asks it of every child.
func HeldByOthers(live *unstructured.Unstructured, self string) bool {
	if live == nil {
		return false
	}
	raw, ok, _ := unstructured.NestedFieldNoCopy(live.Object, "metadata", "managedFields")
	if !ok {
		return false
	}
	entries, _ := raw.([]any)
	for _, e := range entries {
		m, _ := e.(map[string]any)
		manager, _ := m["manager"].(string)
		sub, _ := m["subresource"].(string)
		_, fields := m["fieldsV1"]
		_, compact := m[compactFieldsKey]
		if manager != self && sub == "" && (fields || compact) {
			return true
		}
	}
	return false
}

// lookup returns what the path p selects in obj: a field of a map (f:), the element of an
// associative list with the given keys (k:), the element of a set (v:), or an index (i:).
func lookup(obj any, p fieldpath.Path) (any, bool) {
	cur := obj
	for _, pe := range p {
		var ok bool
		switch {
		case pe.FieldName != nil:
			var m map[string]any
			if m, ok = cur.(map[string]any); ok {
				cur, ok = m[*pe.FieldName]
			}
		case pe.Key != nil:
			cur, ok = findElement(cur, func(e any) bool {
				m, isMap := e.(map[string]any)
				if !isMap {
					return false
				}
				for _, f := range *pe.Key {
					v, has := m[f.Name]
					if !has || !value.Equals(value.NewValueInterface(v), f.Value) {
						return false
					}
				}
				return true
			})
		case pe.Value != nil:
			cur, ok = findElement(cur, func(e any) bool { return value.Equals(value.NewValueInterface(e), *pe.Value) })
		case pe.Index != nil:
			var l []any
			if l, ok = cur.([]any); ok && *pe.Index < len(l) {
				cur = l[*pe.Index]
			} else {
				ok = false
			}
		}
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

// FieldNames returns the names of a path made of map fields only (".metadata.labels.x" is
// metadata, labels, x), and false for a path through a list.
func FieldNames(p fieldpath.Path) ([]string, bool) {
	out := make([]string, 0, len(p))
	for _, pe := range p {
		if pe.FieldName == nil {
			return nil, false
		}
		out = append(out, *pe.FieldName)
	}
	return out, true
}
