// Package charts_test checks the Helm chart in charts/strata: helm lint, helm template with the
// default values and with every option on (testdata/all-on.yaml), values.schema.json, no
// wildcard in the rendered RBAC, the restricted security context, the generated copies (CRDs and
// RBAC rules) being current, a server-side dry run of every rendered object against a real
// control plane with the upstream CRDs, and helm install / uninstall into that control plane —
// with the real manager run under the chart's ServiceAccount to prove its RBAC is enough.
//
// Helm is $HELM (make test sets it) or else `hack/tools.sh path helm`, which builds the pinned
// Helm from the Go module proxy on first use.
package charts_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/testutil"
)

const (
	release        = "strata"
	namespace      = "strata-system"
	allOnRelease   = "obs"
	allOnNamespace = "strata-obs"
	allOnValues    = "testdata/all-on.yaml"
	// fullname is the chart's name prefix for release "strata" (the release name contains the
	// chart's name); allOnFullname is testdata/all-on.yaml's fullnameOverride.
	fullname      = "strata"
	allOnFullname = "strata-obs"
)

// helm returns the Helm binary: $HELM, else the pinned build of hack/tools.sh.
func helm(t *testing.T) string {
	t.Helper()
	return testutil.Tool(t, "helm", "HELM")
}

func chartDir(t *testing.T) string {
	t.Helper()
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "charts", "strata")
}

// runHelm runs helm and returns its stdout; on failure the error carries stderr.
func runHelm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(helm(t), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Keep Helm's caches and config out of the user's home.
	tmp := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+tmp, "HELM_CONFIG_HOME="+tmp, "HELM_DATA_HOME="+tmp)
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %v\n%s%s", strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	return stdout.String(), nil
}

// kubeVersion is the pinned Kubernetes version (hack/versions.env): helm template and lint
// check the chart's kubeVersion against it rather than Helm's built-in default.
func kubeVersion(t *testing.T) string {
	t.Helper()
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "hack", "versions.env"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "KUBERNETES_VERSION="); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("hack/versions.env has no KUBERNETES_VERSION")
	return ""
}

// template runs helm template for the pinned Kubernetes version.
func template(t *testing.T, rel, ns string, args ...string) (string, error) {
	t.Helper()
	return runHelm(t, append([]string{"template", rel, chartDir(t), "--namespace", ns, "--kube-version", kubeVersion(t)}, args...)...)
}

// render runs helm template and decodes every object it prints.
func render(t *testing.T, rel, ns string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out, err := template(t, rel, ns, args...)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeAll([]byte(out))
	if err != nil {
		t.Fatalf("helm template printed invalid YAML: %v\n%s", err, out)
	}
	return objs
}

// decodeAll decodes every YAML document in b as the API machinery would: integers as int64.
func decodeAll(b []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		jd := json.NewDecoder(bytes.NewReader(raw))
		jd.UseNumber()
		var obj map[string]any
		if err := jd.Decode(&obj); err != nil {
			return nil, err
		}
		if len(obj) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: wholeNumbers(obj).(map[string]any)})
		}
	}
}

// wholeNumbers turns JSON numbers into int64 where they are whole, else float64.
func wholeNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = wholeNumbers(x)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = wholeNumbers(x)
		}
		return v
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	default:
		return v
	}
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func kinds(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	slices.Sort(out)
	return out
}

func TestLint(t *testing.T) {
	for _, values := range []string{"", allOnValues} {
		args := []string{"lint", "--strict", chartDir(t), "--kube-version", kubeVersion(t)}
		if values != "" {
			args = append(args, "--values", values)
		}
		if out, err := runHelm(t, args...); err != nil {
			t.Errorf("%v", err)
		} else {
			t.Logf("%s", out)
		}
	}
}

// TestGeneratedCopies: the chart's CRDs and RBAC rules are the ones `make manifests` generates.
// (make verify catches the same in CI; this says it in `make test` too.)
func TestGeneratedCopies(t *testing.T) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	gen, _ := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	chart, _ := filepath.Glob(filepath.Join(chartDir(t), "crds", "*.yaml"))
	if len(gen) == 0 || len(gen) != len(chart) {
		t.Errorf("charts/strata/crds has %d CRDs, config/crd/bases %d: run `make manifests`", len(chart), len(gen))
	}
	pairs := map[string]string{
		filepath.Join(root, "config", "rbac", "role.yaml"): filepath.Join(chartDir(t), "files", "rbac", "role.yaml"),
	}
	for _, g := range gen {
		pairs[g] = filepath.Join(chartDir(t), "crds", filepath.Base(g))
	}
	for src, dst := range pairs {
		a, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(dst)
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s is not a copy of %s: run `make manifests`", dst, src)
		}
	}
}
