package upstream

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/cli"
	"github.com/strata-dev/strata/internal/testutil"
)

// Samples reads config/samples: the StorageTiers, and the pipeline `make run` applies.
func Samples(t testing.TB) (tiers []client.Object, pipeline *v1alpha1.AnalyticsPipeline) {
	t.Helper()
	for _, f := range SampleFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.Contains(string(b), "\nkind: StorageTier\n"):
			tier := &v1alpha1.StorageTier{}
			if err := yaml.UnmarshalStrict(b, tier); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			tiers = append(tiers, tier)
		case strings.Contains(string(b), "\nkind: AnalyticsPipeline\n"):
			pipeline = &v1alpha1.AnalyticsPipeline{}
			if err := yaml.UnmarshalStrict(b, pipeline); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		}
	}
	if pipeline == nil || len(tiers) == 0 {
		t.Fatal("config/samples holds no pipeline or no tiers")
	}
	return tiers, pipeline
}

// SampleFiles are config/samples' files: what `strata render -f` reads for the sample.
func SampleFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testutil.Root(), "config", "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("config/samples: %v", err)
	}
	return files
}

// Rendered is what `strata render -n namespace -f files...` prints, as a case the harness
// applies like a golden one: the command run in process, its YAML stream read back.
func Rendered(t testing.TB, name, namespace string, files ...string) GoldenCase {
	t.Helper()
	args := []string{"render", "-n", namespace}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	var out, errs bytes.Buffer
	if code := cli.Main(context.Background(), args, strings.NewReader(""), &out, &errs); code != cli.ExitOK {
		t.Fatalf("strata %s: exit %d: %s", strings.Join(args, " "), code, errs.String())
	}
	c := GoldenCase{Name: name}
	for _, doc := range strings.Split(out.String(), "---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("strata render's output: %v", err)
		}
		c.Objects = append(c.Objects, u)
	}
	if len(c.Objects) == 0 {
		t.Fatalf("strata %s printed no object", strings.Join(args, " "))
	}
	return c
}
