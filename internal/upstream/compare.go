package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/desired"
)

// Differences lists what differs between the objects of a rendered case and the live ones:
// an object missing, or a field render prints that the live object holds otherwise (what the
// API server and the upstream webhooks add is not a difference). Kinds the cluster does not
// serve are skipped, as the operator skips them.
func (g GoldenCase) Differences(ctx context.Context, c client.Client) ([]string, error) {
	var out []string
	for _, want := range g.Objects {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(want.GroupVersionKind())
		err := c.Get(ctx, client.ObjectKey{Namespace: want.GetNamespace(), Name: want.GetName()}, live)
		switch {
		case meta.IsNoMatchError(err):
			continue
		case client.IgnoreNotFound(err) != nil:
			return nil, err
		case err != nil:
			out = append(out, fmt.Sprintf("%s %s: missing", want.GetKind(), want.GetName()))
			continue
		}
		w, err := normalized(want.Object)
		if err != nil {
			return nil, err
		}
		l, err := normalized(live.Object)
		if err != nil {
			return nil, err
		}
		for _, d := range subsetDiff(w, l, "") {
			out = append(out, fmt.Sprintf("%s %s: %s", want.GetKind(), want.GetName(), d))
		}
	}
	return out, nil
}

// Extra lists the pipeline's children on the cluster (objects of the case's kinds that carry
// the pipeline's selector labels) that the case does not hold: leaked, or left over.
func (g GoldenCase) Extra(ctx context.Context, c client.Client, p *v1alpha1.AnalyticsPipeline) ([]string, error) {
	want := map[string]bool{}
	kinds := map[string]*unstructured.Unstructured{}
	for _, o := range g.Objects {
		want[o.GetKind()+"/"+o.GetName()] = true
		kinds[o.GetKind()] = o
	}
	var out []string
	for _, o := range kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(o.GroupVersionKind().GroupVersion().WithKind(o.GetKind() + "List"))
		err := c.List(ctx, list, client.InNamespace(p.Namespace), client.MatchingLabels(desired.SelectorLabels(p)))
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, item := range list.Items {
			if owner := metav1.GetControllerOf(&item); owner != nil && owner.Kind != "AnalyticsPipeline" {
				continue // an upstream controller's child (ECK's, a StatefulSet's), with the labels it copied
			}
			if k := item.GetKind() + "/" + item.GetName(); !want[k] && item.GetDeletionTimestamp() == nil {
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// normalized is v as JSON reads it back (numbers float64), so that render's YAML and the
// client's unstructured objects compare by value.
func normalized(v map[string]any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}

// subsetDiff lists the paths where want's leaves differ from got's. What the API server's
// defaulting or an upstream webhook adds (a container's empty resources, say) is not a
// difference; a value render prints that the cluster holds otherwise is.
func subsetDiff(want, got map[string]any, at string) []string {
	var out []string
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, valueDiff(want[k], got[k], at+"."+k)...)
	}
	return out
}

// valueDiff compares one value: maps as subsets, lists item by item (same length), the rest
// as equal.
func valueDiff(w, g any, path string) []string {
	switch wv := w.(type) {
	case map[string]any:
		if gm, ok := g.(map[string]any); ok {
			return subsetDiff(wv, gm, path)
		}
	case []any:
		if gl, ok := g.([]any); ok && len(gl) == len(wv) {
			var out []string
			for i := range wv {
				out = append(out, valueDiff(wv[i], gl[i], fmt.Sprintf("%s[%d]", path, i))...)
			}
			return out
		}
	}
	if !reflect.DeepEqual(w, g) {
		return []string{fmt.Sprintf("%s: render %v, applied %v", path, w, g)}
	}
	return nil
}
