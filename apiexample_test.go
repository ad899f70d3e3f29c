package strata_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/cli"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// TestAPIExamplePlans plans docs/api.md's example pipeline on its example tier (and the hdd-st1
// tier it names for shuffle data) with `strata plan -o json`, and checks every number the doc's
// status.plan example shows against the plan: an example that the planner refuses, or whose
// figures drift from what it plans, misleads every reader who copies it.
func TestAPIExamplePlans(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	hdd := gen.HDDTier(gen.SetStorageClass("st1"))
	hdd.APIVersion, hdd.Kind = v1alpha1.GroupVersion.String(), "StorageTier"
	hddYAML, err := yaml.Marshal(hdd)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"tier.yaml":     fence(t, string(doc), "### StorageTier", "```yaml"),
		"pipeline.yaml": fence(t, string(doc), "### AnalyticsPipeline", "```yaml"),
		"hdd.yaml":      string(hddYAML),
	}
	args := []string{"plan", "-o", "json"}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "-f", path)
	}
	var out, errs bytes.Buffer
	if code := cli.Main(context.Background(), args, strings.NewReader(""), &out, &errs); code != cli.ExitOK {
		t.Fatalf("strata plan of docs/api.md's example: exit %d: %s", code, errs.String())
	}
	var planned map[string]any
	if err := json.Unmarshal(out.Bytes(), &planned); err != nil {
		t.Fatal(err)
	}
	shown := fence(t, string(doc), "### status.plan", "```json")
	numbers := regexp.MustCompile(`"(\w+)": (\d+)`).FindAllStringSubmatch(shown, -1)
	strs := regexp.MustCompile(`"(bottleneck)": "(\w+)"`).FindAllStringSubmatch(shown, -1)
	if len(numbers) < 5 || len(strs) != 1 {
		t.Fatalf("docs/api.md's status.plan example: found %d numbers and %d bottlenecks to check", len(numbers), len(strs))
	}
	for _, m := range numbers {
		key, want := m[1], m[2]
		if key == "maxMessagesPerSecond" || key == "replicas" {
			continue // also a stage's, a storage entry's: checked below with theirs
		}
		got, ok := planned[key].(float64)
		if !ok || strconv.FormatFloat(got, 'f', -1, 64) != want {
			t.Errorf("docs/api.md's status.plan shows %s %s, the example plans %v", key, want, planned[key])
		}
	}
	if planned["bottleneck"] != strs[0][2] {
		t.Errorf("docs/api.md's status.plan shows bottleneck %s, the example plans %v", strs[0][2], planned["bottleneck"])
	}
	stages := map[string]float64{}
	for _, s := range planned["stages"].([]any) {
		m := s.(map[string]any)
		stages[m["name"].(string)] = m["maxMessagesPerSecond"].(float64)
	}
	if want := regexp.MustCompile(`\n  "maxMessagesPerSecond": (\d+)`).FindStringSubmatch(shown); want == nil ||
		strconv.FormatFloat(planned["maxMessagesPerSecond"].(float64), 'f', -1, 64) != want[1] {
		t.Errorf("docs/api.md's status.plan shows maxMessagesPerSecond %v, the example plans %v", want, planned["maxMessagesPerSecond"])
	}
	storage := map[string]map[string]any{}
	for _, s := range planned["storage"].([]any) {
		m := s.(map[string]any)
		storage[m["role"].(string)] = m
	}
	entries := regexp.MustCompile(`\{"role": "(\w+)", "tier": "([\w-]+)", "sizePerReplica": "(\w+)", "replicas": (\d+),\s*"monthlyCost": "([\d.]+)"\}`).FindAllStringSubmatch(shown, -1)
	if len(entries) == 0 {
		t.Error("docs/api.md's status.plan shows no storage entry to check")
	}
	for _, m := range entries {
		got := storage[m[1]]
		if got == nil || got["tier"] != m[2] || got["sizePerReplica"] != m[3] || strconv.FormatFloat(got["replicas"].(float64), 'f', -1, 64) != m[4] || got["monthlyCost"] != m[5] {
			t.Errorf("docs/api.md's status.plan shows storage %v, the example plans %v", m[1:], got)
		}
	}
	for _, m := range regexp.MustCompile(`"name": "(\w+)", "maxMessagesPerSecond": (\d+)`).FindAllStringSubmatch(shown, -1) {
		if want, _ := strconv.ParseFloat(m[2], 64); stages[m[1]] != want {
			t.Errorf("docs/api.md's status.plan shows stage %s at %s msgs/s, the example plans %v", m[1], m[2], stages[m[1]])
		}
	}
}

// fence is the first fenced block opening with open after the heading.
func fence(t *testing.T, doc, heading, open string) string {
	t.Helper()
	_, after, ok := strings.Cut(doc, "\n"+heading)
	if !ok {
		t.Fatalf("docs/api.md has no heading %q", heading)
	}
	_, block, ok := strings.Cut(after, open+"\n")
	if !ok {
		t.Fatalf("docs/api.md: no %s block under %q", open, heading)
	}
	block, _, _ = strings.Cut(block, "```")
	return block
}
