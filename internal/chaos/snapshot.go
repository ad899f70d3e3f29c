package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/controllers"
	"github.com/strata-dev/strata/internal/desired"
)

// Snapshot is what a pipeline's children are at one moment, by kind/name: the fields Strata's
// server-side apply owns in each (owned), with the namespace's name replaced, so that two runs
// of the same life in two namespaces compare. A Secret's values are left out (a password is
// generated once per pipeline), its keys kept.
type Snapshot map[string]string

// Take lists every child kind Strata writes in p's namespace by p's selector labels; objects an
// upstream controller made (controlled by another owner, with labels it copied) and objects
// being deleted are not Strata's decision and are left out.
func Take(ctx context.Context, c client.Client, p *v1alpha1.AnalyticsPipeline) (Snapshot, error) {
	return take(ctx, c, p, false)
}

// take is Take, with the objects being deleted too when deleting (a finalizer left on one keeps
// it forever).
func take(ctx context.Context, c client.Client, p *v1alpha1.AnalyticsPipeline, deleting bool) (Snapshot, error) {
	out := Snapshot{}
	for _, k := range controllers.ChildKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
		err := c.List(ctx, list, client.InNamespace(p.Namespace), client.MatchingLabels(desired.SelectorLabels(p)))
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, item := range list.Items {
			if owner := metav1.GetControllerOf(&item); owner != nil && owner.Kind != "AnalyticsPipeline" {
				continue
			}
			if item.GetDeletionTimestamp() != nil && !deleting {
				continue
			}
			decided, err := owned(&item)
			if err != nil {
				return nil, err
			}
			if decided == nil {
				continue // nothing of it is Strata's
			}
			if item.GetKind() == "Secret" {
				decided["data"] = keys(decided["data"])
			}
			b, err := json.Marshal(decided)
			if err != nil {
				return nil, err
			}
			out[item.GetKind()+"/"+item.GetName()] = strings.ReplaceAll(string(b), p.Namespace, "NAMESPACE")
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

// Diff says how s differs from want ("" when it does not).
func (s Snapshot) Diff(want Snapshot) string {
	var out []string
	for k, w := range want {
		switch got, ok := s[k]; {
		case !ok:
			out = append(out, k+" missing")
		case got != w:
			out = append(out, fmt.Sprintf("%s differs:\n    got  %s\n    want %s", k, got, w))
		}
	}
	for k := range s {
		if _, ok := want[k]; !ok {
			out = append(out, k+" is extra")
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n  ")
}
