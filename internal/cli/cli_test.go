package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api/v1alpha1"
	"github.com/strata-dev/strata/internal/cli"
	"github.com/strata-dev/strata/internal/testutil"
)

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Main(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name), []byte(got))
}

func TestGolden(t *testing.T) {
	cases := []struct {
		golden string
		args   []string
	}{
		{"sensors.table.golden", []string{"plan", "-f", "testdata/sensors.yaml", "-f", "testdata/tiers.yaml"}},
		{"sensors.json.golden", []string{"plan", "-f", "testdata/sensors.yaml", "-f", "testdata/tiers.yaml", "-o", "json"}},
		{"measured.table.golden", []string{"plan", "-f", "testdata/measured.yaml"}},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			r := run(t, "", c.args...)
			if r.code != cli.ExitOK || r.stderr != "" {
				t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
			golden(t, c.golden, r.stdout)
		})
	}
}

// docs/planning.md shows the sample's real output; keep it so.
func TestDocsShowTheRealOutput(t *testing.T) {
	doc, err := os.ReadFile("../../docs/planning.md")
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile("testdata/sensors.table.golden")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), string(table)) {
		t.Error("docs/planning.md does not contain testdata/sensors.table.golden: paste the new output into its Example section")
	}
}

// -o json prints the Plan object and nothing else: it must decode strictly into the API type.
func TestJSONIsExactlyThePlan(t *testing.T) {
	r := run(t, "", "plan", "-f", "testdata/sensors.yaml", "-f", "testdata/tiers.yaml", "-o", "json")
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	var p v1alpha1.Plan
	if err := dec.Decode(&p); err != nil {
		t.Fatal(err)
	}
	if dec.More() {
		t.Error("more than one JSON value on stdout")
	}
	if p.Brokers != 3 || p.Partitions != 21 || p.LinkUsableBytesPerSecond != 112500000 {
		t.Errorf("unexpected plan %+v", p)
	}
}

func TestStdinAndMultiDocument(t *testing.T) {
	pipeline, err := os.ReadFile("testdata/sensors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tiers, err := os.ReadFile("testdata/tiers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, string(pipeline)+"\n---\n"+string(tiers)+"\n---\n", "plan", "-f", "-", "-o", "json")
	want := run(t, "", "plan", "-f", "testdata/sensors.yaml", "-f", "testdata/tiers.yaml", "-o", "json")
	if r.code != cli.ExitOK || r.stdout != want.stdout {
		t.Errorf("stdin: exit %d, stderr %s", r.code, r.stderr)
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "input.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func sensorsWith(t *testing.T, old, new string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/sensors.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("testdata/sensors.yaml has no %q", old)
	}
	return writeTemp(t, strings.Replace(string(b), old, new, 1))
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name  string
		args  func(t *testing.T) []string
		code  int
		wants []string
	}{
		{"unknown field", func(t *testing.T) []string {
			return []string{"plan", "-f", sensorsWith(t, "messageBytes: 9028", "messageBytes: 9028\n    messageSize: 9028"), "-f", "testdata/tiers.yaml"}
		}, cli.ExitError, []string{`AnalyticsPipeline "sensors": strict decoding error: unknown field "spec.workload.messageSize"`}},
		{"missing tier", func(t *testing.T) []string {
			return []string{"plan", "-f", "testdata/sensors.yaml"}
		}, cli.ExitError, []string{`spec.kafka.storage.tier: StorageTier "nvme-local" not found`, "hint: pass the StorageTier"}},
		{"invalid value", func(t *testing.T) []string {
			return []string{"plan", "-f", sensorsWith(t, "efficiencyPercent: 90", "efficiencyPercent: 190"), "-f", "testdata/tiers.yaml"}
		}, cli.ExitError, []string{`AnalyticsPipeline.strata.dev "sensors" is invalid: spec.network.efficiencyPercent: Invalid value: 190: spec.network.efficiencyPercent in body should be less than or equal to 100`}},
		{"several invalid values", func(t *testing.T) []string {
			p := sensorsWith(t, "brokers: {min: 2, max: 6}", "brokers: {min: 7, max: 6}")
			b, _ := os.ReadFile(p)
			return []string{"plan", "-f", writeTemp(t, strings.Replace(string(b), "budget: 16Gi", "budget: 100Mi", 1)), "-f", "testdata/tiers.yaml"}
		}, cli.ExitError, []string{"is invalid:\n  - ", "spec.kafka.brokers: Invalid value: min must be less than or equal to max", "spec.spark.memory: Invalid value: ", "more than 512Mi"}},
		{"CEL rule", func(t *testing.T) []string {
			return []string{"plan", "-f", sensorsWith(t, "minHeap: 2Gi", "minHeap: 8Gi"), "-f", "testdata/tiers.yaml"}
		}, cli.ExitError, []string{"spec.spark.memory", "leave no room for minHeap"}},
		{"invalid tier", func(t *testing.T) []string {
			b, _ := os.ReadFile("testdata/tiers.yaml")
			return []string{"plan", "-f", "testdata/sensors.yaml", "-f", writeTemp(t, strings.Replace(string(b), `"0.054"`, `"cheap"`, 1))}
		}, cli.ExitError, []string{"(document 2)", `StorageTier.strata.dev "hdd-st1" is invalid: spec.monthlyPricePerGiB: Invalid value: "cheap"`}},
		// Another kind is skipped, not refused (input_test.go): with nothing else, there is no
		// pipeline, and the note says what was skipped.
		{"only another kind", func(t *testing.T) []string {
			return []string{"plan", "-f", writeTemp(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")}
		}, cli.ExitError, []string{"skipped ConfigMap/x (apiVersion v1): not a Strata object", "no AnalyticsPipeline in "}},
		{"strata.dev kind unknown", func(t *testing.T) []string {
			return []string{"plan", "-f", writeTemp(t, "apiVersion: strata.dev/v1alpha1\nkind: Pipeline\nmetadata: {name: x}\n")}
		}, cli.ExitError, []string{`apiVersion "strata.dev/v1alpha1" kind "Pipeline" is not a Strata object`}},
		{"no pipeline", func(t *testing.T) []string {
			return []string{"plan", "-f", "testdata/tiers.yaml"}
		}, cli.ExitError, []string{"no AnalyticsPipeline in testdata/tiers.yaml"}},
		{"two pipelines", func(t *testing.T) []string {
			return []string{"plan", "-f", "testdata/sensors.yaml", "-f", "testdata/measured.yaml"}
		}, cli.ExitError, []string{"a second AnalyticsPipeline"}},
		{"tier twice", func(t *testing.T) []string {
			return []string{"plan", "-f", "testdata/sensors.yaml", "-f", "testdata/tiers.yaml", "-f", "testdata/tiers.yaml"}
		}, cli.ExitError, []string{`StorageTier "nvme-local" is also defined in testdata/tiers.yaml (document 1)`}},
		{"duplicate key", func(t *testing.T) []string {
			return []string{"plan", "-f", sensorsWith(t, "producers: 1", "producers: 1\n    producers: 2")}
		}, cli.ExitError, []string{`"producers" already set`}},
		{"missing file", func(t *testing.T) []string {
			return []string{"plan", "-f", "testdata/nope.yaml"}
		}, cli.ExitError, []string{"testdata/nope.yaml"}},
		{"no -f", func(t *testing.T) []string { return []string{"plan"} }, cli.ExitUsage, []string{"-f FILE is required"}},
		{"bad -o", func(t *testing.T) []string {
			return []string{"plan", "-f", "testdata/sensors.yaml", "-o", "yaml"}
		}, cli.ExitUsage, []string{"-o must be table or json"}},
		{"render: bad -o", func(t *testing.T) []string {
			return []string{"render", "-f", "testdata/sensors.yaml", "-o", "table"}
		}, cli.ExitUsage, []string{`strata render: -o must be yaml or json, not "table"`}},
		{"render: no -f", func(t *testing.T) []string { return []string{"render", "-o", "json"} }, cli.ExitUsage, []string{"strata render: -f FILE is required"}},
		{"render: missing tier", func(t *testing.T) []string {
			return []string{"render", "-f", "testdata/sensors.yaml"}
		}, cli.ExitError, []string{`strata render: testdata/sensors.yaml: spec.kafka.storage.tier: StorageTier "nvme-local" not found`, "hint: pass the StorageTier"}},
		{"render: invalid value", func(t *testing.T) []string {
			return []string{"render", "-f", sensorsWith(t, "efficiencyPercent: 90", "efficiencyPercent: 190"), "-f", "testdata/tiers.yaml"}
		}, cli.ExitError, []string{"strata render: ", "spec.network.efficiencyPercent: Invalid value: 190"}},
		{"unknown flag", func(t *testing.T) []string { return []string{"plan", "-x"} }, cli.ExitUsage, []string{"flag provided but not defined: -x"}},
		{"stray argument", func(t *testing.T) []string { return []string{"plan", "-f", "a.yaml", "b.yaml"} }, cli.ExitUsage, []string{`unexpected argument "b.yaml"`}},
		{"no command", func(t *testing.T) []string { return nil }, cli.ExitUsage, []string{"Usage:"}},
		{"unknown command", func(t *testing.T) []string { return []string{"optimise"} }, cli.ExitUsage, []string{`unknown command "optimise"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, "", c.args(t)...)
			if r.code != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, c.code, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("errors must leave stdout empty, got:\n%s", r.stdout)
			}
			for _, w := range c.wants {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr\n%s\nlacks\n%s", r.stderr, w)
				}
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, c := range []struct {
		args  []string
		wants []string
	}{
		{[]string{"plan", "-h"}, []string{"Usage: strata plan", "a v1 List"}},
		// render's help says what it leaves out and why.
		{[]string{"render", "-h"}, []string{"Usage: strata render", "ownerReferences", "password", "first apply", `field manager "strata"`, "-ingest-image"}},
	} {
		r := run(t, "", c.args...)
		if r.code != cli.ExitOK {
			t.Errorf("%v: exit %d", c.args, r.code)
		}
		for _, w := range c.wants {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: the help lacks %q:\n%s", c.args, w, r.stderr)
			}
		}
	}
	r := run(t, "", "help")
	if !strings.Contains(r.stdout, "strata render -f FILE") {
		t.Errorf("the usage does not list render:\n%s", r.stdout)
	}
}

// The SIZING table says why the partitions are what they are: a fixed count that the brokers do
// not divide is pointed out, and so is an automatic count the cap keeps from rounding up.
func TestPartitionsExplained(t *testing.T) {
	cases := []struct {
		name  string
		edits [][2]string // replacements in testdata/sensors.yaml
		want  string
	}{
		{"fixed, uneven", [][2]string{{"partitions: 0", "partitions: 25"}},
			"Topic partitions  25       fixed    set by spec.kafka.topic.partitions; not a multiple of the 3 brokers, so the busiest leads 9 where the mean is 8.3"},
		{"automatic, at the cap", [][2]string{{"executors: {min: 2, max: 10, cores: 5}", "executors: {min: 2000, max: 2000, cores: 5}"},
			{"brokers: {min: 2, max: 6}", "brokers: {min: 3, max: 3}"}},
			"10000    auto        one per executor core (2000 executors x 5 cores; Spark reads one per task); a multiple of the 3 brokers would pass 10000, the most Strata chooses by itself"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := os.ReadFile("testdata/sensors.yaml")
			if err != nil {
				t.Fatal(err)
			}
			in := string(b)
			for _, e := range c.edits {
				if !strings.Contains(in, e[0]) {
					t.Fatalf("testdata/sensors.yaml has no %q", e[0])
				}
				in = strings.Replace(in, e[0], e[1], 1)
			}
			r := run(t, "", "plan", "-f", writeTemp(t, in), "-f", "testdata/tiers.yaml")
			if !strings.Contains(r.stdout, c.want) {
				t.Errorf("exit %d, stderr %s; the table lacks %q:\n%s", r.code, r.stderr, c.want, r.stdout)
			}
		})
	}
}
