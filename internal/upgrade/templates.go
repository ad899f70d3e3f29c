package upgrade

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// RollingKinds are the children whose spec shapes pods an upstream operator makes, and what of
// their spec does not: a change anywhere else rolls pods, or for the SparkApplication submits
// the job again.
//   - Kafka: Strimzi rolls the brokers and controllers for their template, configuration,
//     resources and version (spec.kafka), and redeploys Cruise Control, the entity operator and
//     the exporter for theirs;
//   - KafkaNodePool: the pool's template, resources, JVM options and storage shape its pods;
//     replicas only adds or removes some;
//   - Elasticsearch: ECK rolls a node set for its podTemplate and config (the config's hash is
//     in the pods' template), every node set for the version; count only scales;
//   - SparkApplication: the Spark operator submits the application again on any change of its
//     spec but suspend and timeToLiveSeconds (kubeflow/spark-operator v2.5.2,
//     internal/controller/sparkapplication/event_filter.go, the update filter: a spec that
//     differs sets the state Invalidating, which kills the run and submits it again).
//
// What is left out is what an upgrade may change without rolling anything: replicas and counts,
// which the plan and the autoscaler move in normal operation.
var RollingKinds = map[string][][]string{
	"Kafka":            nil,
	"KafkaNodePool":    {{"replicas"}},
	"Elasticsearch":    {{"nodeSets", "*", "count"}},
	"SparkApplication": nil,
}

// PodSpec is the part of a child's spec whose change rolls pods (RollingKinds), nil for other
// kinds.
func PodSpec(u *unstructured.Unstructured) map[string]any {
	skip, ok := RollingKinds[u.GetKind()]
	if !ok {
		return nil
	}
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	for _, p := range skip {
		drop(spec, p)
	}
	return spec
}

func drop(v any, path []string) {
	if len(path) == 0 {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		if len(path) == 1 {
			delete(x, path[0])
			return
		}
		drop(x[path[0]], path[1:])
	case []any:
		if path[0] == "*" {
			for _, e := range x {
				drop(e, path[1:])
			}
		}
	}
}

// Diff lists the leaves (scalars) that differ between before and after, by path (an empty map
// or list is the same as none): map keys after a dot, or in brackets when they are not identifiers (label keys), list
// items as [*] (a list whose length changed is one change, the list's own path). A leaf present
// on one side only is a change too: a map added whole lists each of its leaves.
func Diff(before, after any) []string {
	seen := map[string]bool{}
	diff("", before, after, seen)
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func key(path, k string) string {
	if identifier.MatchString(k) {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	return path + "[" + k + "]"
}

// empty: nil, an empty map or list. The upstream operators read their specs into Go types,
// where an absent field and an empty one (with omitempty) are the same, and they write them back
// either way: ECK's full Update of its typed Elasticsearch adds `http.service: {metadata: {},
// spec: {}}` and the like to a spec that had none. Neither rolls anything.
func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

func diff(path string, a, b any, out map[string]bool) {
	if empty(a) && empty(b) {
		return
	}
	am, aMap := a.(map[string]any)
	bm, bMap := b.(map[string]any)
	al, aList := a.([]any)
	bl, bList := b.([]any)
	switch {
	case aMap && bMap && (len(am) > 0 || len(bm) > 0):
		for k, v := range am {
			diff(key(path, k), v, bm[k], out)
		}
		for k, v := range bm {
			if _, ok := am[k]; !ok {
				diff(key(path, k), nil, v, out)
			}
		}
	case aMap && b == nil && len(am) > 0:
		for k, v := range am {
			diff(key(path, k), v, nil, out)
		}
	case bMap && a == nil && len(bm) > 0:
		for k, v := range bm {
			diff(key(path, k), nil, v, out)
		}
	case aList && bList && len(al) == len(bl):
		for i := range al {
			diff(path+"[*]", al[i], bl[i], out)
		}
	case aList && b == nil:
		for _, v := range al {
			diff(path+"[*]", v, nil, out)
		}
	case bList && a == nil:
		for _, v := range bl {
			diff(path+"[*]", nil, v, out)
		}
	default:
		if !reflect.DeepEqual(a, b) {
			out[path] = true
		}
	}
}

// Change is a pod template change as the release notes list it: "Kind path".
func Change(kind, path string) string { return fmt.Sprintf("%s %s", kind, path) }
