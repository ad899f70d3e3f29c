package cli_test

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/cli"
)

// The pipeline and tiers `strata simulate` is documented with.
var simulateInput = []string{
	"-f", "../../config/samples/traces/pipeline-autoscaled.yaml",
	"-f", "../../config/samples/storagetier-nvme-local.yaml",
	"-f", "../../config/samples/storagetier-hdd-st1.yaml",
}

func simulateArgs(extra ...string) []string {
	return append(append([]string{"simulate"}, simulateInput...), extra...)
}

func TestSimulateTable(t *testing.T) {
	r := run(t, "", simulateArgs("--trace", "../../config/samples/traces/step-up.csv")...)
	if r.code != cli.ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"RESOURCE", "brokers", "executors", "dataNodes", "STATIC PEAK",
		"Capacity below demand:", "Largest lag:", "DECISIONS", "ScaleUp",
		// The producers waited on the step: what a broker kept in advance would have done.
		"Brokers kept in advance: with spec.kafka.brokers.min: 3 Kafka's intake is never below the demand"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the table has no %q:\n%s", want, r.stdout)
		}
	}
}

func TestSimulateJSONAndPlot(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "out.svg")
	r := run(t, "", simulateArgs("--trace", "../../config/samples/traces/flash-spike.csv", "-o", "json", "--plot", svg)...)
	if r.code != cli.ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("stdout is not one JSON object: %v", err)
	}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	want := "brokersKept durationSeconds maxLagRecords maxLagSeconds resources secondsBelowDemand secondsIntakeBelowDemand series"
	if strings.Join(sortedCopy(keys), " ") != want {
		t.Errorf("JSON keys %v, want exactly %s", sortedCopy(keys), want)
	}
	var res struct {
		Resources   map[string]map[string]float64 `json:"resources"`
		BrokersKept map[string]float64            `json:"brokersKept"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if k := res.BrokersKept; len(k) != 5 || k["min"] != 3 || k["tried"] != 4 || k["secondsIntakeBelowDemand"] != 0 ||
		k["secondsBelowDemand"] <= 0 || k["staticPeakRatio"] <= 0 {
		t.Errorf("brokersKept = %v: want min 3, tried 4 (the static peak's brokers), the replay's seconds below demand and its ratio", k)
	}
	for _, name := range []string{"brokers", "executors", "dataNodes"} {
		fields := res.Resources[name]
		if len(fields) != 6 || fields["staticPeakReplicaSeconds"] <= 0 || fields["replicaSeconds"] <= 0 {
			t.Errorf("resources.%s = %v: want replicaSeconds, staticPeakReplicaSeconds, scaleActions, reversals, min, max", name, fields)
		}
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName xml.Name
	}
	if err := xml.Unmarshal(b, &doc); err != nil || doc.XMLName.Local != "svg" {
		t.Errorf("--plot wrote no SVG document: %v (%s)", err, doc.XMLName.Local)
	}
	if !strings.Contains(string(b), "Demand and capacity") || !strings.Contains(string(b), "Replicas") {
		t.Error("the plot has no titles")
	}
}

func TestSimulateErrors(t *testing.T) {
	badTrace := writeTemp(t, "seconds,messagesPerSecond\n0,100\n60,many\n")
	badDelays := writeTemp(t, "sparkResubmit: soon\n")
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no trace", simulateArgs(), cli.ExitUsage, "--trace FILE is required"},
		{"no pipeline", []string{"simulate", "--trace", badTrace}, cli.ExitUsage, "-f FILE is required"},
		{"bad output", simulateArgs("--trace", badTrace, "-o", "yaml"), cli.ExitUsage, "-o must be table or json"},
		{"a bad row names its line", simulateArgs("--trace", badTrace), cli.ExitError, badTrace + `:3: messagesPerSecond "many"`},
		{"a missing trace", simulateArgs("--trace", "/nonexistent.csv"), cli.ExitError, "/nonexistent.csv"},
		{"bad delays name the field", simulateArgs("--trace", "../../config/samples/traces/step-up.csv", "--delays", badDelays),
			cli.ExitError, "sparkResubmit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, "", tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tc.code, tc.stderr)
			}
		})
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
