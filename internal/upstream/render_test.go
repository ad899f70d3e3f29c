package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/testutil"
)

// checkRendered compares `strata render`'s output for the sample with what the operator applied
// for it on the cluster: every field render prints must hold the same value in the live object
// (which also holds what the API server, the upstream operators and the owner references add).
// Render's help says which differences only the cluster can know; none of them concerns a
// first apply of the sample but the ES user's password, which render leaves out.
func checkRendered(ctx context.Context, t *testing.T, h *Cluster, p *v1alpha1.AnalyticsPipeline) {
	rendered := Rendered(t, "sample", p.Namespace, SampleFiles(t)...)
	compared := 0
	for _, want := range rendered.Objects {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(want.GroupVersionKind())
		key := client.ObjectKey{Namespace: want.GetNamespace(), Name: want.GetName()}
		what := fmt.Sprintf("%s %s", want.GetKind(), want.GetName())
		var err error
		testutil.Eventually(t, upstreamWait, what+" applied by the operator", func() error {
			err = h.Client.Get(ctx, key, live)
			if meta.IsNoMatchError(err) {
				return nil // a kind this cluster does not serve: the operator skips it too
			}
			return err
		})
		if meta.IsNoMatchError(err) {
			t.Logf("%s: the harness does not serve the kind (render prints it, the operator skips it)", what)
			continue
		}
		if diffs := subsetDiff(normalized(t, want.Object), normalized(t, live.Object), ""); len(diffs) > 0 {
			t.Errorf("%s: strata render and the operator differ:\n  %s", what, strings.Join(diffs, "\n  "))
		}
		compared++
	}
	if compared < len(rendered.Objects)/2 {
		t.Errorf("compared %d of render's %d objects", compared, len(rendered.Objects))
	}
	t.Logf("strata render's %d objects: %d compared with the operator's", len(rendered.Objects), compared)
}

// normalized is v as JSON reads it back (numbers float64), so that render's YAML and the
// client's unstructured objects compare by value.
func normalized(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
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
		path := at + "." + k
		w, g := want[k], got[k]
		out = append(out, valueDiff(w, g, path)...)
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
