package alerts_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/schema"
)

// TestMonitoringObjectsValidate admits config/prometheus/prometheusrule.yaml and the example
// PodMonitors (config/prometheus/upstream-monitors.yaml) with the Prometheus Operator's own CRD
// schemas, as the API server would: unknown fields and wrong types are errors.
func TestMonitoringObjectsValidate(t *testing.T) {
	dirs, err := controlplane.UpstreamCRDDirs()
	if err != nil {
		t.Fatal(err)
	}
	var adm *schema.Admission
	for _, d := range dirs {
		if m, _ := filepath.Glob(filepath.Join(d, "monitoring.coreos.com_*.yaml")); len(m) > 0 {
			if adm, err = schema.FromFS(os.DirFS(d), "."); err != nil {
				t.Fatal(err)
			}
		}
	}
	if adm == nil {
		t.Fatalf("no Prometheus Operator CRDs in %v", dirs)
	}
	for _, f := range []string{"config/prometheus/prometheusrule.yaml", "config/prometheus/upstream-monitors.yaml"} {
		b, err := os.ReadFile(filepath.Join(root(t), f))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(b, []byte("\n---\n")) {
			obj, err := schema.DecodeYAML(doc)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(obj) == 0 {
				continue
			}
			meta, _ := obj["metadata"].(map[string]any)
			if _, ok := meta["namespace"]; !ok {
				meta["namespace"] = "monitoring"
			}
			if err := adm.Admit(context.Background(), obj); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}
