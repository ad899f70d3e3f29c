package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers/pipeline"
	"github.com/strata-dev/strata/internal/desired"
)

// Snapshot is what a pipeline's children are at one moment, by kind/name: the fields Strata
// applied in each (its server-side apply's field set, kept to read the same fields of another
// run's objects) and their values, with the namespace's name replaced, so that two runs of one
// life in two namespaces compare.
type Snapshot map[string]Decided

// Decided is one child's fields as Strata applied them, and their values; and the whole object,
// to read another run's owned fields in.
type Decided struct {
	Fields map[string]any
	Value  string
	Object *unstructured.Unstructured
}

// Take lists every child kind Strata writes in p's namespace by p's selector labels and keeps
// what Strata applied of each. Objects Strata applied nothing of (an upstream controller's, with
// labels it copied) and objects being deleted are left out.
func Take(ctx context.Context, c client.Client, p *v1alpha1.AnalyticsPipeline) (Snapshot, error) {
	live, err := children(ctx, c, p, false)
	if err != nil {
		return nil, err
	}
	out := Snapshot{}
	for k, u := range live {
		fields, err := ownedFields(u)
		if err != nil {
			return nil, err
		}
		if fields == nil {
			continue
		}
		v, err := value(u, fields, p.Namespace)
		if err != nil {
			return nil, err
		}
		out[k] = Decided{fields, v, u.DeepCopy()}
	}
	return out, nil
}

// Differs says how p's children differ from want, a snapshot of another run ("" when they do
// not): for each of want's objects, the same fields read in the live one, whoever owns them
// now (another field manager may take a field over with the same value, which changes nothing
// of what runs); an object missing; an object of p's Strata applied something of that want does
// not hold.
func Differs(ctx context.Context, c client.Client, p *v1alpha1.AnalyticsPipeline, want Snapshot) (string, error) {
	live, err := children(ctx, c, p, false)
	if err != nil {
		return "", err
	}
	var out []string
	for k, w := range want {
		u, ok := live[k]
		if !ok {
			out = append(out, k+" missing")
			continue
		}
		d, err := differs(u, w, p.Namespace)
		if err != nil {
			return "", err
		}
		if d != "" {
			out = append(out, k+" differs:\n"+d)
		}
	}
	for k, u := range live {
		if _, ok := want[k]; ok {
			continue
		}
		if fields, err := ownedFields(u); err != nil {
			return "", err
		} else if fields != nil {
			out = append(out, k+" is extra")
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n  "), nil
}

// differs compares one live child u (in namespace) with another run's w, both ways: the other
// run's decisions are all here (what another manager added inside a list Strata applied whole,
// such as the empty status ECK's typed Update writes into claim templates, is no decision of
// Strata's), and what this run's Strata applied has the same values in the other run's object.
// Those values are read in the whole object, not only in what the other run's Strata applied:
// which manager holds a field last is a matter of timing, not a decision. ECK's Elasticsearch
// declares spec.nodeSets an atomic list (no x-kubernetes-list-type in its v3.5.0 CRD), so ECK's
// typed Update takes the whole list whenever it writes, and Strata's next apply takes it back;
// a run whose Strata applied the list after ECK's last write owns it, a run where ECK wrote last
// does not, and both run the same nodes.
func differs(u *unstructured.Unstructured, w Decided, namespace string) (string, error) {
	got, err := value(u, w.Fields, namespace)
	if err != nil {
		return "", err
	}
	mine, err := ownedFields(u)
	if err != nil {
		return "", err
	}
	own, err := value(u, mine, namespace)
	if err != nil {
		return "", err
	}
	same := containsJSON(got, w.Value)
	if same && mine != nil && !containsJSON(w.Value, own) {
		// Not among the fields the other run's Strata held: read in its whole object, if kept.
		same = false
		if w.Object != nil {
			theirs, err := value(w.Object, mine, w.Object.GetNamespace())
			if err != nil {
				return "", err
			}
			same = containsJSON(theirs, own)
		}
	}
	if same {
		return "", nil
	}
	return fmt.Sprintf("    got  %s\n    want %s\n    this run's Strata applied %s", got, w.Value, own), nil
}

func value(u *unstructured.Unstructured, fields map[string]any, namespace string) (string, error) {
	b, err := json.Marshal(decided(u, fields))
	if err != nil {
		return "", err
	}
	return strings.ReplaceAll(string(b), namespace, "NAMESPACE"), nil
}

// children lists the objects of every child kind in p's namespace with p's selector labels, by
// kind/name, but those an upstream controller controls; with those being deleted when deleting
// (a finalizer left on one keeps it forever).
func children(ctx context.Context, c client.Client, p *v1alpha1.AnalyticsPipeline, deleting bool) (map[string]*unstructured.Unstructured, error) {
	out := map[string]*unstructured.Unstructured{}
	for _, k := range pipeline.ChildKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
		err := c.List(ctx, list, client.InNamespace(p.Namespace), client.MatchingLabels(desired.SelectorLabels(p)))
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			item := &list.Items[i]
			if owner := metav1.GetControllerOf(item); owner != nil && owner.Kind != "AnalyticsPipeline" {
				continue
			}
			if item.GetDeletionTimestamp() != nil && !deleting {
				continue
			}
			out[item.GetKind()+"/"+item.GetName()] = item
		}
	}
	return out, nil
}

func keys(v any) []string {
	m, _ := v.(map[string]any)
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// containsJSON says whether the JSON document sup holds everything sub does: maps by key, lists
// item by item (same length), the rest equal.
func containsJSON(sup, sub string) bool {
	var a, b any
	if json.Unmarshal([]byte(sup), &a) != nil || json.Unmarshal([]byte(sub), &b) != nil {
		return sup == sub
	}
	return contains(a, b)
}

func contains(sup, sub any) bool {
	switch s := sub.(type) {
	case map[string]any:
		m, ok := sup.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range s {
			if !contains(m[k], v) {
				return false
			}
		}
		return true
	case []any:
		l, ok := sup.([]any)
		if !ok || len(l) != len(s) {
			return false
		}
		for i := range s {
			if !contains(l[i], s[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(sup, sub)
}
