package ssa

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// An unstructured object decoded from the API server holds its managedFields' field sets as
// trees of maps: for Strata's children that was more than half of what the informers held (a
// SparkApplication's 8.9 kB of JSON carries a 6.4 kB field set; decoded, the sets of one
// pipeline's 14 children took 143 kB of 253 kB; docs/performance.md). Compact, a cache
// transform, keeps each set as its JSON text instead, which is how it is read anyway
// (fieldpath.Set.FromJSON), and ManagedFields gives the entries back with it.

// compactFieldsKey holds an entry's field set as JSON text in a compacted object. It is not a
// field of ManagedFieldsEntry: metav1's decoding ignores it, and the objects the cache holds are
// never sent back whole (children are written by apply, merge patches and deletes only).
const compactFieldsKey = "strata.dev/fieldsV1"

// lastApplied is kubectl's client-side apply record: a copy of the object, read by nothing here.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Compact is a cache transform (cache.Options.DefaultTransform) for unstructured objects: each
// managedFields entry's field set becomes JSON text, the entries of subresources (status, read
// by neither upToDate nor Changes) are dropped, and so is kubectl's last-applied annotation.
// Typed objects hold their field sets as bytes already and pass unchanged. What the controllers
// read of a child (metadata, spec, status) is otherwise left as it was.
func Compact(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	meta, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return obj, nil
	}
	if ann, ok := meta["annotations"].(map[string]any); ok {
		if _, ok := ann[lastApplied]; ok {
			delete(ann, lastApplied)
			if len(ann) == 0 {
				delete(meta, "annotations")
			}
		}
	}
	entries, ok := meta["managedFields"].([]any)
	if !ok {
		return obj, nil
	}
	kept := entries[:0]
	for _, e := range entries {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		if sub, _ := m["subresource"].(string); sub != "" {
			continue
		}
		if fields, ok := m["fieldsV1"]; ok {
			b, err := json.Marshal(fields)
			if err != nil {
				return nil, err
			}
			delete(m, "fieldsV1")
			m[compactFieldsKey] = string(b)
		}
		kept = append(kept, m)
	}
	if len(kept) == 0 {
		delete(meta, "managedFields")
	} else {
		meta["managedFields"] = kept
	}
	return u, nil
}

// ManagedFields is obj's managedFields, compacted by Compact or not, with every entry's field
// set in FieldsV1.
func ManagedFields(obj *unstructured.Unstructured) []metav1.ManagedFieldsEntry {
	entries := obj.GetManagedFields()
	raw, _, _ := unstructured.NestedSlice(obj.Object, "metadata", "managedFields")
	if len(raw) != len(entries) {
		return entries
	}
	for i := range entries {
		m, _ := raw[i].(map[string]any)
		if s, ok := m[compactFieldsKey].(string); ok && entries[i].FieldsV1 == nil {
			entries[i].FieldsV1 = &metav1.FieldsV1{Raw: []byte(s)}
		}
	}
	return entries
}
