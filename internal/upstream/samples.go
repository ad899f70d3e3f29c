package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/testutil"
)

// Samples reads config/samples: the StorageTiers, and the pipeline `make run` applies.
func Samples(t testing.TB) (tiers []client.Object, pipeline *v1alpha1.AnalyticsPipeline) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testutil.Root(), "config", "samples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
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
