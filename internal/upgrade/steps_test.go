package upgrade

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/upstream"
)

// helm runs the pinned Helm against the harness's API server as its admin.
func helm(t *testing.T, h *upstream.Cluster, args ...string) string {
	t.Helper()
	cmd := exec.Command(testutil.Tool(t, "helm", "HELM"), append(args, "--kubeconfig", filepath.Join(h.Dir, "admin.kubeconfig"))...)
	// Helm's own state (repositories, cache) in the test's directory, not the machine's.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// applyCRDs applies every CRD of dir server-side as kubectl does (`kubectl apply --server-side
// --force-conflicts -f dir`: field manager "kubectl"); without force, a dry run that returns the
// conflicts the API server reports.
func applyCRDs(ctx context.Context, t *testing.T, c client.Client, dir string, force bool) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s: %v", dir, err)
	}
	var conflicts []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &u.Object); err != nil {
			t.Fatal(err)
		}
		opts := []client.PatchOption{client.FieldOwner("kubectl")}
		if force {
			opts = append(opts, client.ForceOwnership)
		} else {
			opts = append(opts, client.DryRunAll)
		}
		if err := c.Patch(ctx, u, client.Apply, opts...); err != nil {
			if !force && strings.Contains(err.Error(), "conflict") {
				conflicts = append(conflicts, fmt.Sprintf("%s: %v", crd.Name, err))
				continue
			}
			t.Fatalf("applying %s: %v", crd.Name, err)
		}
	}
	return conflicts
}

// render is `strata render` of cli (a release's binary) for p on tiers, as the case the harness
// compares with the live objects.
func render(t *testing.T, cli, ingestImage string, p *v1alpha1.AnalyticsPipeline, tiers []*v1alpha1.StorageTier) upstream.GoldenCase {
	t.Helper()
	dir := t.TempDir()
	files := []string{}
	write := func(name string, obj any) {
		b, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, "-f", f)
	}
	pl := &v1alpha1.AnalyticsPipeline{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "AnalyticsPipeline"},
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}, Spec: p.Spec}
	write("pipeline.yaml", pl)
	for _, tier := range tiers {
		write(tier.Name+".yaml", &v1alpha1.StorageTier{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "StorageTier"},
			ObjectMeta: metav1.ObjectMeta{Name: tier.Name}, Spec: tier.Spec})
	}
	var out, errs bytes.Buffer
	cmd := exec.Command(cli, append([]string{"render", "-n", p.Namespace, "--ingest-image", ingestImage}, files...)...)
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s render: %v: %s", cli, err, errs.String())
	}
	c := upstream.GoldenCase{Name: p.Namespace + "/" + p.Name}
	for _, doc := range strings.Split(out.String(), "---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("render's output: %v", err)
		}
		c.Objects = append(c.Objects, u)
	}
	return c
}

// converged says why p is not yet what the operator makes of it: the operator has not observed
// its generation, or a child render prints is missing or holds other values.
func converged(ctx context.Context, c client.Client, p *v1alpha1.AnalyticsPipeline, rendered upstream.GoldenCase) error {
	got := &v1alpha1.AnalyticsPipeline{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
		return err
	}
	if got.Status.ObservedGeneration != got.Generation {
		return fmt.Errorf("generation %d, observed %d", got.Generation, got.Status.ObservedGeneration)
	}
	if meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionReady) == nil {
		return fmt.Errorf("no Ready condition yet")
	}
	diffs, err := rendered.Differences(ctx, c)
	if err != nil {
		return err
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%d differences from render, first: %s", len(diffs), diffs[0])
	}
	return nil
}

// ingestImage is the chart's --ingest-image argument.
func ingestImage(t *testing.T, args []string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--ingest-image="); ok {
			return v
		}
	}
	t.Fatalf("the chart passes no --ingest-image: %q", args)
	return ""
}

// buildCLI builds cmd/strata of the source tree at root into out.
func buildCLI(t *testing.T, root, out string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, "./cmd/strata")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/strata in %s: %v\n%s", root, err, b)
	}
}
