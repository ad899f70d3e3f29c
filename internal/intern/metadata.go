package intern

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// unique are the metadata fields whose values no two objects share: sharing them would only
// churn the table. They are the object's own; an owner reference's uid is shared (the
// pipeline's, on each of its children), a managedFields entry's time is not.
var (
	unique       = map[string]bool{"uid": true, "resourceVersion": true, "creationTimestamp": true, "deletionTimestamp": true}
	uniqueNested = map[string]bool{"time": true}
)

// Metadata is a cache transform (cache.Options.DefaultTransform) that makes an object's
// metadata hold shared strings: for an unstructured object its apiVersion, kind and every key
// and string value under metadata (not its spec or status, which internal/ssa's Pack keeps as
// one text); for a typed one its namespace, labels, annotations, owner references and field
// managers, and a ConfigMap's data too. It changes no value, only which copy of it the object holds, and passes anything
// else (the informers' tombstones) as it is.
func Metadata(obj any) (any, error) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		unstructuredMeta(o.Object)
	case *corev1.ConfigMap:
		typedMeta(o)
		// Its documents: a pipeline's ConfigMap (the Kafka metrics exporter's rules, 3 kB) is the
		// same in every pipeline. A Secret's data is not shared: its bytes could be written to.
		for k, v := range o.Data {
			o.Data[String(k)] = Text(v)
		}
	case metav1.Object:
		typedMeta(o)
	}
	return obj, nil
}

func unstructuredMeta(obj map[string]any) {
	for k, v := range obj {
		switch k {
		case "apiVersion", "kind":
			v = Value(v)
		case "metadata":
			if m, ok := v.(map[string]any); ok {
				tree(m, unique)
			}
		}
		obj[String(k)] = v
	}
}

// tree shares the keys of m and, through share, its values, but for the values of the keys
// in skip. Assigning to a key already in a map stores the key given (Go's maps update a string
// key in place, since equal strings may differ in their bytes), so the loop adds no entry.
func tree(m map[string]any, skip map[string]bool) {
	for k, v := range m {
		m[String(k)] = share(v, skip[k])
	}
}

// share is v holding shared strings: a string itself (unless own, a value no other object
// holds), or every string in a map or list, in place, but for the keys in uniqueNested.
func share(v any, own bool) any {
	switch x := v.(type) {
	case map[string]any:
		tree(x, uniqueNested)
	case []any:
		for i, e := range x {
			x[i] = share(e, false)
		}
	case string:
		if !own {
			return Value(x)
		}
	}
	return v
}

func typedMeta(o metav1.Object) {
	o.SetNamespace(String(o.GetNamespace()))
	shareMap(o.GetLabels())
	shareMap(o.GetAnnotations())
	refs := o.GetOwnerReferences()
	for i := range refs {
		r := &refs[i]
		r.APIVersion, r.Kind, r.Name, r.UID = String(r.APIVersion), String(r.Kind), String(r.Name), uid(r.UID)
	}
	entries := o.GetManagedFields()
	for i := range entries {
		e := &entries[i]
		e.Manager, e.APIVersion, e.FieldsType, e.Subresource = String(e.Manager), String(e.APIVersion), String(e.FieldsType), String(e.Subresource)
		e.Operation = metav1.ManagedFieldsOperationType(String(string(e.Operation)))
	}
}

// shareMap shares the keys and values of a typed object's labels or annotations, in place.
func shareMap(m map[string]string) {
	for k, v := range m {
		m[String(k)] = String(v)
	}
}

// uid shares an owner reference's uid: the owner's, on each of the objects it owns.
func uid(u types.UID) types.UID { return types.UID(String(string(u))) }
