package upstream

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/internal/testutil"
)

// GoldenCase is one of internal/desired's golden cases: the objects Strata builds for it
// (internal/desired/testdata/<case>.*.golden.yaml, written from plans the planner accepts).
type GoldenCase struct {
	Name    string
	Objects []*unstructured.Unstructured
}

// GoldenCases reads internal/desired's golden files, one case per name prefix.
func GoldenCases(t testing.TB) []GoldenCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testutil.Root(), "internal", "desired", "testdata", "*.golden.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	byCase := map[string][]*unstructured.Unstructured{}
	for _, f := range files {
		name, _, _ := strings.Cut(filepath.Base(f), ".")
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &u.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		byCase[name] = append(byCase[name], u)
	}
	var cases []GoldenCase
	for name, objs := range byCase {
		cases = append(cases, GoldenCase{Name: name, Objects: objs})
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	return cases
}

// Apply creates the case's objects in namespace, as the operator would (server-side apply),
// without their owner references: the pipeline that owns them is not here, and the garbage
// collector deletes what points at an absent owner.
func (g GoldenCase) Apply(ctx context.Context, t testing.TB, c client.Client, namespace string, opts ...client.PatchOption) {
	t.Helper()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	opts = append(opts, client.FieldOwner("strata"), client.ForceOwnership)
	if sa := g.userServiceAccount(); sa != "" {
		// The user's own ServiceAccount, which the spec names (spec.spark.serviceAccountName)
		// and Strata does not make: the user's to create, so the harness's here.
		obj := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: sa}}
		if err := c.Create(ctx, obj); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	for _, o := range g.Objects {
		u := o.DeepCopy()
		if u.GetNamespace() != "" {
			u.SetNamespace(namespace)
		}
		u.SetOwnerReferences(nil)
		u.SetManagedFields(nil)
		if err := c.Patch(ctx, u, client.Apply, opts...); err != nil {
			t.Fatalf("%s: applying %s %s: %v", g.Name, u.GetKind(), u.GetName(), err)
		}
	}
}

// userServiceAccount is the driver's ServiceAccount when the case does not make it.
func (g GoldenCase) userServiceAccount() string {
	for _, o := range g.Objects {
		if o.GetKind() != "SparkApplication" {
			continue
		}
		sa, _, _ := unstructured.NestedString(o.Object, "spec", "driver", "serviceAccount")
		for _, m := range g.Objects {
			if m.GetKind() == "ServiceAccount" && m.GetName() == sa {
				return ""
			}
		}
		return sa
	}
	return ""
}

// Pipeline says whether the case is a pipeline's children (else a tier's volumes).
func (g GoldenCase) Pipeline() bool { return g.named("SparkApplication") != "" }

// named is the name of the case's object of kind.
func (g GoldenCase) named(kind string) string {
	for _, o := range g.Objects {
		if o.GetKind() == kind {
			return o.GetName()
		}
	}
	return ""
}

// StorageClasses are the classes the case's claims name that no tier of the harness makes:
// provisioned by the harness's provisioner, as a cloud's CSI driver would.
func (g GoldenCase) StorageClasses() []string {
	seen := map[string]bool{}
	for _, o := range g.Objects {
		walkStrings(o.Object, func(k, v string) {
			if k == "storageClassName" || strings.HasSuffix(k, ".options.storageClass") {
				seen[v] = true
			}
		})
	}
	var out []string
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

func walkStrings(v any, f func(k, v string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok {
				f(k, s)
			} else {
				walkStrings(e, f)
			}
		}
	case []any:
		for _, e := range x {
			walkStrings(e, f)
		}
	}
}
